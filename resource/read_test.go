package resource

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/llmkit/toolkit/internal/errs"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		file     string
		data     []byte
		wantName string
		wantType string
		want     string // "" means the data unchanged
	}{
		{"report-2024.csv", []byte("a,b\n1,2\n"), "report_2024", "text/csv; charset=utf-8", ""},
		{"notes.md", []byte("# Title\n"), "notes", "text/markdown; charset=utf-8", ""},
		{"config.yaml", []byte("a: 1\n"), "config", "application/yaml", ""},
		{"data.json", []byte(`{"a":1}`), "data", TypeJSON, ""},
		{"image.png", pngHeader, "image", "image/png", ""},
		{"doc.pdf", pdfHeader, "doc", "application/pdf", ""},
		{"archive.gz", gzipHeader, "archive", "application/x-gzip", ""},
		{"fake.png", []byte("just text"), "fake", TypeText, ""},
		{"blob.bin", []byte{0, 1, 2, 3}, "blob", TypeBinary, ""},
		{"latin1.txt", []byte("caf\xe9"), "latin1", TypeText, "café"},
		{"utf16.csv", utf16Bytes("a,b\r\n1,2\r\n", false, false), "utf16", "text/csv; charset=utf-8", "a,b\r\n1,2\r\n"},
		{"bom16.md", utf16Bytes("# T\n", true, true), "bom16", "text/markdown; charset=utf-8", "# T\n"},
		{"control.txt", []byte("a\x01b"), "control", TypeText, ""},
		{"2024 résumé.TXT", []byte("cv"), "_2024_r__sum__", TypeText, ""},
		{".env", []byte("A=1\n"), "env", TypeText, ""},
		{"noext", []byte("x"), "noext", TypeText, ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			if err := os.WriteFile(path, tt.data, 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			r, err := Read(f)
			if err != nil {
				t.Fatal(err)
			}
			if r.Name() != tt.wantName || r.Type() != tt.wantType {
				t.Errorf("name %q type %q, want %q %q", r.Name(), r.Type(), tt.wantName, tt.wantType)
			}
			want := tt.want
			if want == "" {
				want = string(tt.data)
			}
			if got := content(t, r); got != want {
				t.Errorf("content %q, want %q", got, want)
			}
			checkInvariants(t, r)
		})
	}
}

func TestReadOptions(t *testing.T) {
	// No Name method: the default name, content sniffing only.
	r, err := Read(strings.NewReader("hello"))
	if err != nil || r.Name() != DefaultName || r.Type() != TypeText {
		t.Fatalf("Read(strings.Reader) = %v, %v", r, err)
	}
	// FileName supplies name and extension, and wins over Name().
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct {
		r                  io.Reader
		file               string
		wantName, wantType string
	}{
		{strings.NewReader(`{"a":1}`), "upload/result.json", "result", TypeJSON},
		{bytes.NewReader([]byte("a,b")), "t.CSV", "t", "text/csv; charset=utf-8"},
		{f, "x.md", "x", "text/markdown; charset=utf-8"},
		{f, "", "null", TypeText},
		{strings.NewReader("x"), "/", DefaultName, TypeText},
	} {
		var opts []ReadOption
		if tc.file != "" {
			opts = append(opts, WithFileName(tc.file))
		}
		r, err := Read(tc.r, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if r.Name() != tc.wantName || r.Type() != tc.wantType {
			t.Errorf("WithFileName(%q): name %q type %q, want %q %q", tc.file, r.Name(), r.Type(), tc.wantName, tc.wantType)
		}
	}
}

// endless yields 'a' forever and has no Len or Stat.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// claimsLen reports a length and fails the test if read.
type claimsLen struct {
	t *testing.T
	n int
}

func (c claimsLen) Len() int { return c.n }
func (c claimsLen) Read([]byte) (int, error) {
	c.t.Error("Read called on a reader known to be too large")
	return 0, io.EOF
}

func TestReadLimits(t *testing.T) {
	tests := []struct {
		name string
		r    io.Reader
		opts []ReadOption
		ok   bool
	}{
		{"at_limit", strings.NewReader("0123456789"), []ReadOption{WithMaxSize(10)}, true},
		{"over_limit_len", strings.NewReader("0123456789x"), []ReadOption{WithMaxSize(10)}, false},
		{"over_limit_stream", io.MultiReader(strings.NewReader("012345"), strings.NewReader("6789x")), []ReadOption{WithMaxSize(10)}, false},
		{"at_limit_stream", io.MultiReader(strings.NewReader("012345"), strings.NewReader("6789")), []ReadOption{WithMaxSize(10)}, true},
		{"endless", endless{}, []ReadOption{WithMaxSize(1 << 20)}, false},
		{"default_limit_by_len", claimsLen{t, DefaultMaxSize + 1}, nil, false},
		{"zero_means_default", claimsLen{t, DefaultMaxSize + 1}, []ReadOption{WithMaxSize(0)}, false},
		{"one_byte_reader", iotest.OneByteReader(strings.NewReader("slow but fine")), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Read(tt.r, tt.opts...)
			if tt.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if r != nil || !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), "larger than") {
				t.Fatalf("got %v, %v; want a size error wrapping ErrBadParameter", r, err)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	boom := errors.New("boom")
	r, err := Read(iotest.ErrReader(boom))
	if r != nil || !errors.Is(err, errs.ErrBadParameter) || !errors.Is(err, boom) {
		t.Errorf("failing reader: %v, %v; want ErrBadParameter wrapping the cause", r, err)
	}
	r, err = Read(iotest.TimeoutReader(strings.NewReader("abc")))
	if r != nil || !errors.Is(err, iotest.ErrTimeout) {
		t.Errorf("timeout reader: %v, %v", r, err)
	}
	r, err = Read(nil)
	if r != nil || !errors.Is(err, errs.ErrBadParameter) {
		t.Errorf("nil reader: %v, %v", r, err)
	}
	var f *os.File
	r, err = Read(f)
	if r != nil || !errors.Is(err, errs.ErrBadParameter) {
		t.Errorf("nil *os.File: %v, %v", r, err)
	}
}

func TestNameFromFile(t *testing.T) {
	tests := []struct{ in, name, ext string }{
		{"", DefaultName, ""},
		{"report.pdf", "report", ".pdf"},
		{"/a/b/report.tar.gz", "report_tar", ".gz"},
		{"my-file.v2.txt", "my_file_v2", ".txt"},
		{".bashrc", "bashrc", ""},
		{"2024.csv", "_2024", ".csv"},
		{"/", DefaultName, ""},
		{".", DefaultName, ""},
		{"..", DefaultName, "."},
		{"dir/", "dir", ""},
		{strings.Repeat("x", 100) + ".md", strings.Repeat("x", 64), ".md"},
	}
	for _, tt := range tests {
		name, ext := nameFromFile(tt.in)
		if name != tt.name || ext != tt.ext {
			t.Errorf("nameFromFile(%q) = %q, %q; want %q, %q", tt.in, name, ext, tt.name, tt.ext)
		}
	}
}

// stalled returns no data and no error forever.
type stalled struct{}

func (stalled) Read([]byte) (int, error) { return 0, nil }

// liar claims to have read more than it was given room for.
type liar struct{}

func (liar) Read(p []byte) (int, error) { return len(p) + 1, nil }

func TestReadMisbehavingReaders(t *testing.T) {
	r, err := Read(stalled{})
	if r != nil || !errors.Is(err, io.ErrNoProgress) || !errors.Is(err, errs.ErrBadParameter) {
		t.Errorf("stalled reader: %v, %v", r, err)
	}
	r, err = Read(liar{})
	if r != nil || !errors.Is(err, errs.ErrBadParameter) {
		t.Errorf("lying reader: %v, %v", r, err)
	}
}

func TestReadAllBuffer(t *testing.T) {
	big := strings.Repeat("x", 10000)
	for _, tc := range []struct {
		name string
		r    io.Reader
		hint int64
	}{
		{"exact_hint", strings.NewReader(big), int64(len(big))},
		{"no_hint", iotest.HalfReader(strings.NewReader(big)), -1},
		{"low_hint", strings.NewReader(big), 10},
		{"high_hint", strings.NewReader(big), 20000},
		{"empty", strings.NewReader(""), -1},
		{"data_with_eof", iotest.DataErrReader(strings.NewReader(big)), -1},
	} {
		got, err := readAll(tc.r, DefaultMaxSize, tc.hint)
		want := big
		if tc.name == "empty" {
			want = ""
		}
		if err != nil || got != want {
			t.Errorf("%s: %d bytes, %v", tc.name, len(got), err)
		}
	}
}

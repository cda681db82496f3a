package resource

import (
	"bytes"
	"context"
	"mime"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func addSeeds(f *testing.F) {
	for _, s := range [][]byte{
		nil, []byte("hello"), []byte("caf\xe9"), pngHeader, pdfHeader, gzipHeader,
		[]byte("\xef\xbb\xbfbom"), []byte("\xff\xfe"), []byte("\xfe\xff\x00"),
		utf16Bytes("Hello, world", false, false), utf16Bytes("Hello", true, true),
		[]byte("<html><body>x</body></html>"), []byte{0, 0, 0, 0},
	} {
		f.Add(s)
	}
}

func FuzzData(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		r, err := Data("fuzz", data)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(in, data) {
			t.Fatal("Data changed its input")
		}
		checkInvariants(t, r)
		got, _ := r.Read(context.Background())
		if !IsText(r.Type()) && !bytes.Equal(got, data) {
			t.Fatalf("binary content of type %q changed", r.Type())
		}
		// Valid UTF-8 text is kept, unless a BOM or NUL bytes (UTF-16)
		// say otherwise.
		plain := utf8.Valid(data) && !bytes.HasPrefix(data, []byte(bomUTF8)) && bytes.IndexByte(data, 0) < 0
		if plain && IsText(r.Type()) && !bytes.Equal(got, data) {
			t.Fatalf("valid UTF-8 text changed: %q -> %q", data, got)
		}
	})
}

func FuzzRead(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 64
		r, err := Read(bytes.NewReader(data), WithMaxSize(limit), WithFileName(string(data[:min(len(data), 16)])))
		if len(data) > limit {
			if err == nil {
				t.Fatalf("read %d bytes with limit %d", len(data), limit)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, r)
	})
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"", "hello", "caf\xe9", "日本\xe8", "\xff\xfeh\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Text("fuzz", s)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, r)
		if got := content(t, r); utf8.ValidString(s) && got != s {
			t.Fatalf("valid text changed: %q -> %q", s, got)
		}
	})
}

func FuzzCheckURI(f *testing.F) {
	for _, s := range []string{"mem:x/1", "file:///a", "", "a b:c", "http://[::1", "x:", "é:x", "data:,hi"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		if CheckURI(uri) != nil {
			return
		}
		u, err := url.Parse(uri)
		if err != nil || u.Scheme == "" || !utf8.ValidString(uri) || strings.ContainsAny(uri, " \t\r\n\x00") {
			t.Fatalf("CheckURI accepted %q", uri)
		}
		// An accepted URI survives WithURI unchanged.
		if got := WithURI(uri, Must("x", "y")).URI(); got != uri {
			t.Fatalf("WithURI changed %q to %q", uri, got)
		}
	})
}

func FuzzBlob(f *testing.F) {
	for _, s := range []string{"image/png", "text/plain; charset=utf-8", "", "a/b/c", "x/y; q=\"1\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, mt string) {
		r, err := Blob("fuzz", mt, nil)
		if err != nil {
			return
		}
		if _, _, err := mime.ParseMediaType(r.Type()); err != nil {
			t.Fatalf("Blob accepted %q: %v", mt, err)
		}
	})
}

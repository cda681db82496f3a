package resource

import (
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

func utf16LE(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return b
}

func TestDecodeText(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   []byte
		want string
	}{
		{"utf-8", []byte("héllo"), "héllo"},
		{"utf-8 bom", []byte("\xEF\xBB\xBFtitle: x"), "title: x"},
		{"utf-16le bom", append([]byte{0xFF, 0xFE}, utf16LE("---\ntitle: é\n")...), "---\ntitle: é\n"},
		{"utf-16le without bom", utf16LE("---\ntitle: Grüße\n---\nbody\n"), "---\ntitle: Grüße\n---\nbody\n"},
		{"latin-1", []byte("caf\xe9 cr\xe8me"), "café crème"},
		{"windows-1252 quotes", []byte("\x93quoted\x94"), "\u201cquoted\u201d"},
		{"mostly utf-8 with a bad byte", []byte("naïve \xff text"), "naïve \uFFFD text"},
	} {
		if got := DecodeText(tt.in); got != tt.want {
			t.Errorf("%s: DecodeText = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// FuzzDecodeText checks that DecodeText always returns valid UTF-8 and
// keeps valid UTF-8 without zero bytes as it is.
func FuzzDecodeText(f *testing.F) {
	for _, s := range []string{"", "abc", "\xEF\xBB\xBF", "\xFF\xFEa\x00", "caf\xe9", "a\x00b\x00c\x00d\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := DecodeText(data)
		if !utf8.ValidString(got) {
			t.Fatalf("DecodeText(%q) = %q, not UTF-8", data, got)
		}
	})
}

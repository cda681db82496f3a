package resource

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/unicode"
)

func TestToUTF8(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"ascii", "hello", "hello"},
		{"utf8", "héllo 世界", "héllo 世界"},
		{"utf8_bom", "\xef\xbb\xbfhé", "hé"},
		{"utf8_bom_damaged", "\xef\xbb\xbfh\xe9", "h\uFFFD"},
		{"utf16le_bom", string(utf16Bytes("hé€😀", false, true)), "hé€😀"},
		{"utf16be_bom", string(utf16Bytes("hé€😀", true, true)), "hé€😀"},
		{"latin1", "d\xe9j\xe0 vu", "déjà vu"},
		{"cp1252_specials", "\x80\x85\x91\x92\x93\x94\x96\x97\x99", "€…‘’“”–—™"},
		{"cp1252_undefined", "\x81\x8d\x8f\x90\x9d", "\u0081\u008d\u008f\u0090\u009d"},
		{"latin1_one_accident", "\xc3\xa9t\xe9 \xe0 \xe8", "Ã©té à è"},
		{"damaged_utf8", "ünïcödé \x80 text", "ünïcödé \uFFFD text"},
		{"cut_mid_rune", "日本語\xe8\xaa", "日本語\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toUTF8(tt.in)
			if got != tt.want {
				t.Errorf("toUTF8(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("result %q is not valid UTF-8", got)
			}
		})
	}
}

func TestWindows1252Lossless(t *testing.T) {
	var all [256]byte
	for i := range all {
		all[i] = byte(i)
	}
	got := []rune(decodeWindows1252(string(all[:])))
	if len(got) != 256 {
		t.Fatalf("%d runes, want 256", len(got))
	}
	seen := map[rune]bool{}
	for i, r := range got {
		if r == utf8.RuneError || seen[r] {
			t.Errorf("byte %#x decodes to %U: lost or duplicate", i, r)
		}
		seen[r] = true
	}
}

func TestGuessUTF16(t *testing.T) {
	tests := []struct {
		name  string
		in    []byte
		ok    bool
		order unicode.Endianness
	}{
		{"le_ascii", utf16Bytes("hello world", false, false), true, unicode.LittleEndian},
		{"be_ascii", utf16Bytes("hello world", true, false), true, unicode.BigEndian},
		{"le_cyrillic_sparse_ascii", utf16Bytes("Привет, мир! Как дела?", false, false), true, unicode.LittleEndian},
		{"too_short", []byte{'a', 0}, false, unicode.LittleEndian},
		{"no_nul", []byte("plain ascii text"), false, unicode.LittleEndian},
		{"nul_both_sides", []byte{0, 0, 0, 0, 'a', 'b', 0, 0}, false, unicode.LittleEndian},
		{"cjk_no_nuls", utf16Bytes("日本語のテキスト", false, false), false, unicode.LittleEndian},
	}
	for _, tt := range tests {
		order, ok := guessUTF16(string(tt.in))
		if ok != tt.ok || ok && order != tt.order {
			t.Errorf("%s: guessUTF16 = %v, %v; want %v, %v", tt.name, order, ok, tt.order, tt.ok)
		}
	}
}

func TestPlausibleText(t *testing.T) {
	for s, want := range map[string]bool{
		"hello\tworld\r\n\f":    true,
		"":                      true,
		"a\x00b":                false,
		"a\x01b":                false,
		"a\x7fb":                false,
		"a\uFFFDb":              false,
		strings.Repeat("x", 10): true,
	} {
		if got := plausibleText(s); got != want {
			t.Errorf("plausibleText(%q) = %v", s, got)
		}
	}
}

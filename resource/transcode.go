package resource

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Byte order marks.
const (
	bomUTF8    = "\xEF\xBB\xBF"
	bomUTF16LE = "\xFF\xFE"
	bomUTF16BE = "\xFE\xFF"
)

// toUTF8 returns text s as valid UTF-8, following the rules in the package
// documentation: UTF-8 BOM removed, UTF-16 with a BOM decoded, mostly-UTF-8
// text repaired, anything else decoded as Windows-1252.
func toUTF8(s string) string {
	switch {
	case strings.HasPrefix(s, bomUTF8):
		// The BOM declares UTF-8: repair rather than reinterpret.
		return strings.ToValidUTF8(s[len(bomUTF8):], "\uFFFD")
	case strings.HasPrefix(s, bomUTF16LE):
		return decodeUTF16(s[len(bomUTF16LE):], unicode.LittleEndian)
	case strings.HasPrefix(s, bomUTF16BE):
		return decodeUTF16(s[len(bomUTF16BE):], unicode.BigEndian)
	case utf8.ValidString(s):
		return s
	case mostlyUTF8(s):
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return decodeWindows1252(s)
}

// DecodeText returns data, known to be text (a prompt file, say), as valid
// UTF-8 by the rules text resources follow: a byte order mark is honoured
// and removed; UTF-16 without one is recognised by its zero bytes when it
// decodes to plausible text; mostly-UTF-8 text is repaired; anything else
// is read as Windows-1252 (the common superset of Latin-1).
func DecodeText(data []byte) string {
	s := string(data)
	if !strings.HasPrefix(s, bomUTF8) && !strings.HasPrefix(s, bomUTF16LE) && !strings.HasPrefix(s, bomUTF16BE) {
		if order, ok := guessUTF16(s); ok {
			if d := decodeUTF16(s, order); plausibleText(d) {
				return d
			}
		}
	}
	return toUTF8(s)
}

// mostlyUTF8 reports whether s, which is not valid UTF-8, has at least one
// well-formed multi-byte sequence and no more stray bytes than such
// sequences. Windows-1252 text almost never forms valid multi-byte UTF-8
// sequences by chance, while damaged UTF-8 (cut in the middle of a
// character, or with a few bad bytes) keeps most of them.
func mostlyUTF8(s string) bool {
	multi, bad := 0, 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			bad++
		} else {
			multi++
		}
		i += size
	}
	return multi > 0 && bad <= multi
}

// decodeWindows1252 decodes s as Windows-1252. The five bytes the encoding
// leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D) become the C1 control
// characters of the same value, as in Latin-1, so the decoding is lossless.
func decodeWindows1252(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/2)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < utf8.RuneSelf {
			b.WriteByte(c)
			continue
		}
		r := charmap.Windows1252.DecodeByte(c)
		if r == utf8.RuneError {
			r = rune(c)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// decodeUTF16 decodes s, without its BOM, as UTF-16. Unpaired surrogates and
// a trailing odd byte become U+FFFD.
func decodeUTF16(s string, order unicode.Endianness) string {
	out, _, err := transform.String(unicode.UTF16(order, unicode.IgnoreBOM).NewDecoder(), s)
	if err != nil {
		// The decoder replaces bad input instead of failing; keep the
		// result valid UTF-8 whatever happens.
		return strings.ToValidUTF8(out, "\uFFFD")
	}
	return out
}

// utf16SampleLen is how much content guessUTF16 examines.
const utf16SampleLen = 4096

// guessUTF16 recognises UTF-16 without a BOM by its NUL bytes: in text with
// ASCII-range characters, one byte of each such pair is zero, always on the
// same side. It reports the byte order and whether the pattern is present;
// the caller must still check the decoded text with plausibleText.
func guessUTF16(s string) (unicode.Endianness, bool) {
	n := min(len(s), utf16SampleLen) &^ 1
	if n < 4 {
		return unicode.LittleEndian, false
	}
	zeroEven, zeroOdd := 0, 0
	for i := 0; i < n; i += 2 {
		if s[i] == 0 {
			zeroEven++
		}
		if s[i+1] == 0 {
			zeroOdd++
		}
	}
	pairs := n / 2
	// A tenth of the characters in the ASCII range (spaces, digits and
	// punctuation suffice), and zero bytes nearly all on one side.
	switch {
	case zeroOdd*10 >= pairs && zeroEven*10 <= zeroOdd:
		return unicode.LittleEndian, true
	case zeroEven*10 >= pairs && zeroOdd*10 <= zeroEven:
		return unicode.BigEndian, true
	}
	return unicode.LittleEndian, false
}

// plausibleText reports whether decoded, valid UTF-8 holds no replacement
// characters and no control characters other than tab, line feed, form feed
// and carriage return.
func plausibleText(s string) bool {
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			return false
		case r < 0x20 && r != '\t' && r != '\n' && r != '\f' && r != '\r':
			return false
		case r == 0x7F:
			return false
		}
	}
	return true
}

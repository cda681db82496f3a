package prompt

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// toUTF8 returns the text of a prompt file as UTF-8 without a byte order
// mark. UTF-16 is recognised by its byte order mark or, without one, by the
// zero bytes of mostly-ASCII text; valid UTF-8 is kept; anything else is
// read as Latin-1 (Windows-1252, its common superset).
func toUTF8(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		data = data[3:]
		if utf8.Valid(data) {
			return string(data)
		}
		return decode(charmap.Windows1252, data)
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return decode(unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM), data)
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return decode(unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM), data)
	}
	if e := guessUTF16(data); e != nil {
		return decode(e, data)
	}
	if utf8.Valid(data) {
		return string(data)
	}
	return decode(charmap.Windows1252, data)
}

func decode(e encoding.Encoding, data []byte) string {
	out, err := e.NewDecoder().Bytes(data)
	if err != nil {
		// The decoders used here replace invalid input rather than fail;
		// keep the bytes, made valid, should that ever change.
		return string(bytes.ToValidUTF8(data, []byte("\uFFFD")))
	}
	return string(out)
}

// guessUTF16 recognises UTF-16 text without a byte order mark: an even
// length and a zero byte in the high half of most code units, which is how
// ASCII-heavy text such as front matter looks.
func guessUTF16(data []byte) encoding.Encoding {
	n := min(len(data), 512) &^ 1
	if n < 4 || len(data)%2 != 0 {
		return nil
	}
	var even, odd int
	for i := 0; i < n; i += 2 {
		if data[i] == 0 {
			even++
		}
		if data[i+1] == 0 {
			odd++
		}
	}
	units := n / 2
	switch {
	case odd*10 >= units*7 && even*10 <= units:
		return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)
	case even*10 >= units*7 && odd*10 <= units:
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)
	}
	return nil
}

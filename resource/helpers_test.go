package resource

import (
	"context"
	"encoding/binary"
	"mime"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// content reads r and fails the test on error.
func content(t *testing.T, r Resource) string {
	t.Helper()
	b, err := r.Read(context.Background())
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return string(b)
}

// checkInvariants asserts what every constructed resource guarantees.
func checkInvariants(t testing.TB, r Resource) {
	t.Helper()
	if err := CheckURI(r.URI()); err != nil {
		t.Errorf("URI %q: %v", r.URI(), err)
	}
	if !strings.HasPrefix(r.URI(), Scheme+":"+r.Name()+"/") {
		t.Errorf("URI %q does not start with %s:%s/", r.URI(), Scheme, r.Name())
	}
	if _, _, err := mime.ParseMediaType(r.Type()); err != nil {
		t.Errorf("Type %q: %v", r.Type(), err)
	}
	b, err := r.Read(context.Background())
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if IsText(r.Type()) && !utf8.Valid(b) {
		t.Errorf("text resource of type %q holds invalid UTF-8: %q", r.Type(), b)
	}
	if strings.HasPrefix(r.Type(), "text/") && !strings.HasSuffix(r.Type(), "; charset=utf-8") {
		t.Errorf("text type %q lacks charset=utf-8", r.Type())
	}
}

// utf16Bytes encodes s as UTF-16 in the given byte order, with a BOM if bom.
func utf16Bytes(s string, bigEndian, bom bool) []byte {
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xFEFF}, units...)
	}
	b := make([]byte, 2*len(units))
	for i, u := range units {
		if bigEndian {
			binary.BigEndian.PutUint16(b[2*i:], u)
		} else {
			binary.LittleEndian.PutUint16(b[2*i:], u)
		}
	}
	return b
}

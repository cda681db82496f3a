package resource

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/llmkit/toolkit/internal/errs"
)

var badNames = []string{"", "1abc", "a-b", "a.b", "a b", "é", strings.Repeat("a", 65)}

func TestText(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"greeting", "Hello, world", "Hello, world"},
		{"empty", "", ""},
		{"unicode", "héllo, 世界 🌍", "héllo, 世界 🌍"},
		{"bom_kept", "\uFEFFhello", "\uFEFFhello"},
		{"latin1", "caf\xe9 cr\xe8me", "café crème"},
		{"cp1252", "\x93quoted\x94 \x80", "\u201cquoted\u201d €"},
		{"truncated_utf8", "héllo wörld \xe2\x82", "héllo wörld \uFFFD"},
		{"utf16le_bom", string(utf16Bytes("hi", false, true)), "hi"},
		{"_x", "x", "x"},
		{strings.Repeat("a", 64), "x", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Text(tt.name, tt.content)
			if err != nil {
				t.Fatal(err)
			}
			if r.Name() != tt.name || r.Type() != TypeText || r.Description() != "" {
				t.Errorf("got name %q type %q desc %q", r.Name(), r.Type(), r.Description())
			}
			if got := content(t, r); got != tt.want {
				t.Errorf("content %q, want %q", got, tt.want)
			}
			checkInvariants(t, r)
		})
	}
}

func TestBadNames(t *testing.T) {
	ctors := map[string]func(name string) (Resource, error){
		"Text": func(n string) (Resource, error) { return Text(n, "x") },
		"Data": func(n string) (Resource, error) { return Data(n, []byte("x")) },
		"Blob": func(n string) (Resource, error) { return Blob(n, "image/png", nil) },
		"JSON": func(n string) (Resource, error) { return JSON(n, 1) },
		"JSONRaw": func(n string) (Resource, error) {
			return JSON(n, json.RawMessage(`1`))
		},
	}
	for cname, ctor := range ctors {
		for _, name := range badNames {
			r, err := ctor(name)
			if r != nil || !errors.Is(err, errs.ErrBadParameter) {
				t.Errorf("%s(%q) = %v, %v; want ErrBadParameter", cname, name, r, err)
				continue
			}
			if !strings.Contains(err.Error(), "resource name") {
				t.Errorf("%s(%q): error %q does not say what is wrong", cname, name, err)
			}
		}
	}
}

var (
	pngHeader  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00")
	pdfHeader  = []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n")
	gzipHeader = []byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xcbH\xcd\xc9\xc9\x07\x00")
)

func TestData(t *testing.T) {
	tests := []struct {
		name     string
		in       []byte
		wantType string
		want     string // content; "" means the input unchanged
	}{
		{"ascii", []byte("hello world\n"), TypeText, ""},
		{"empty", nil, TypeText, ""},
		{"html", []byte("<!DOCTYPE html><html><body>x</body></html>"), "text/html; charset=utf-8", ""},
		{"xml", []byte(`<?xml version="1.0"?><a/>`), "text/xml; charset=utf-8", ""},
		{"json_not_sniffed", []byte(`{"a":1}`), TypeText, ""},
		{"png", pngHeader, "image/png", ""},
		{"pdf", pdfHeader, "application/pdf", ""},
		{"gzip", gzipHeader, "application/x-gzip", ""},
		{"binary_nul", []byte{0, 1, 2, 3, 4, 5, 6, 7, 0xff}, TypeBinary, ""},
		{"int16_samples", []byte{1, 0, 2, 0, 3, 0, 4, 0, 5, 0}, TypeBinary, ""},
		{"ansi_escape", []byte("\x1b[31mred\x1b[0m"), TypeText, ""},
		{"control_bytes", []byte("a\x01b\x02c"), TypeBinary, ""},
		{"latin1", []byte("na\xefve caf\xe9"), TypeText, "naïve café"},
		{"cp1252_undefined", []byte("a\x81b\x8dc\x8fd\x90e\x9d"), TypeText, "a\u0081b\u008dc\u008fd\u0090e\u009d"},
		{"mostly_utf8", []byte("größe \xff ünd mëhr"), TypeText, "größe \uFFFD ünd mëhr"},
		{"utf8_bom", []byte("\xef\xbb\xbfhello"), TypeText, "hello"},
		{"utf8_bom_html", []byte("\xef\xbb\xbf<html><body>x</body></html>"), "text/html; charset=utf-8", "<html><body>x</body></html>"},
		{"utf8_bom_invalid", []byte("\xef\xbb\xbfcaf\xe9"), TypeText, "caf\uFFFD"},
		{"utf16le_bom", utf16Bytes("Hello, wörld €", false, true), TypeText, "Hello, wörld €"},
		{"utf16be_bom", utf16Bytes("Hello, wörld €", true, true), TypeText, "Hello, wörld €"},
		{"utf16le", utf16Bytes("Hello, wörld €\r\n", false, false), TypeText, "Hello, wörld €\r\n"},
		{"utf16be", utf16Bytes("Hello, wörld €\r\n", true, false), TypeText, "Hello, wörld €\r\n"},
		{"utf16le_cyrillic", utf16Bytes("Привет, мир! Как дела?", false, false), TypeText, "Привет, мир! Как дела?"},
		{"utf16le_html", utf16Bytes("<html><body>hi</body></html>", false, false), "text/html; charset=utf-8", "<html><body>hi</body></html>"},
		{"utf16le_bom_controls", utf16Bytes("a\x01b", false, true), TypeText, "a\x01b"},
		{"utf16le_odd_length", append(utf16Bytes("Hello", false, true), 'x'), TypeText, "Hello\uFFFD"},
		{"utf16le_unpaired_surrogate", utf16Bytes("ab", false, true)[:4], TypeText, "a"},
	}
	// An unpaired surrogate with a BOM is decoded with a replacement.
	surrogate := append(utf16Bytes("a", false, true), 0x00, 0xd8, 'b', 0)
	tests = append(tests, struct {
		name     string
		in       []byte
		wantType string
		want     string
	}{"utf16le_bom_surrogate", surrogate, TypeText, "a\uFFFDb"})

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]byte(nil), tt.in...)
			r, err := Data(tt.name, in)
			if err != nil {
				t.Fatal(err)
			}
			if r.Type() != tt.wantType {
				t.Errorf("Type %q, want %q", r.Type(), tt.wantType)
			}
			want := tt.want
			if want == "" {
				want = string(tt.in)
			}
			if got := content(t, r); got != want {
				t.Errorf("content %q, want %q", got, want)
			}
			checkInvariants(t, r)
		})
	}
}

func TestBlob(t *testing.T) {
	raw := []byte("caf\xe9\x00\xff")
	for _, mt := range []string{"image/png", "audio/wav", "text/plain; charset=iso-8859-1", "application/vnd.api+json", "Image/PNG"} {
		r, err := Blob("b", mt, raw)
		if err != nil {
			t.Errorf("Blob(%q): %v", mt, err)
			continue
		}
		if r.Type() != mt {
			t.Errorf("Type %q, want %q", r.Type(), mt)
		}
		if got := content(t, r); got != string(raw) {
			t.Errorf("content %q changed", got)
		}
	}
	for _, mt := range []string{"", "png", "image/", "/png", "image/png/x", "image/png; =x", "image png", "image/png;", "text/plain; charset"} {
		r, err := Blob("b", mt, raw)
		if mt == "image/png;" && err == nil {
			continue // a trailing ';' is accepted by mime.ParseMediaType
		}
		if r != nil || !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), `"b"`) {
			t.Errorf("Blob(%q) = %v, %v; want ErrBadParameter naming the resource", mt, r, err)
		}
	}
}

func TestJSON(t *testing.T) {
	type point struct {
		X, Y int
	}
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"map", map[string]string{"status": "ok"}, `{"status":"ok"}`},
		{"struct", point{1, 2}, `{"X":1,"Y":2}`},
		{"string", `{"a":1}`, `"{\"a\":1}"`},
		{"html_unescaped", "<a&b>", `"<a&b>"`},
		{"nil", nil, `null`},
		{"raw_as_is", json.RawMessage(" { \"a\" : [1, 2] } "), ` { "a" : [1, 2] } `},
		{"bytes_as_is", []byte(`[1,2,3]`), `[1,2,3]`},
		{"raw_bad_utf8", json.RawMessage("\"caf\xe9\""), "\"caf\uFFFD\""},
		{"invalid_utf8_string", "caf\xe9", `"caf\ufffd"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := JSON(tt.name, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if r.Type() != TypeJSON || !IsJSON(r.Type()) {
				t.Errorf("Type %q", r.Type())
			}
			got := content(t, r)
			if got != tt.want {
				t.Errorf("content %q, want %q", got, tt.want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("content %q is not valid JSON", got)
			}
			checkInvariants(t, r)
		})
	}
}

func TestJSONErrors(t *testing.T) {
	for name, in := range map[string]any{
		"raw_invalid":   json.RawMessage(`{`),
		"raw_trailing":  json.RawMessage(`{} x`),
		"raw_empty":     json.RawMessage(nil),
		"bytes_invalid": []byte("not json"),
		"chan":          make(chan int),
		"nan":           math.NaN(),
		"func":          func() {},
	} {
		r, err := JSON(name, in)
		if r != nil || !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), `"`+name+`"`) {
			t.Errorf("JSON(%s) = %v, %v; want ErrBadParameter naming the resource", name, r, err)
		}
	}
}

func TestMust(t *testing.T) {
	tests := []struct {
		r        Resource
		wantType string
		want     string
	}{
		{Must("s", "hello"), TypeText, "hello"},
		{Must("b", pngHeader), "image/png", string(pngHeader)},
		{Must("b2", []byte("plain")), TypeText, "plain"},
		{Must("j", json.RawMessage(`{"a":1}`)), TypeJSON, `{"a":1}`},
	}
	for _, tt := range tests {
		if tt.r.Type() != tt.wantType {
			t.Errorf("%s: Type %q, want %q", tt.r.Name(), tt.r.Type(), tt.wantType)
		}
		if got := content(t, tt.r); got != tt.want {
			t.Errorf("%s: content %q, want %q", tt.r.Name(), got, tt.want)
		}
	}
	for name, f := range map[string]func(){
		"bad_name":     func() { Must("1x", "hello") },
		"invalid_json": func() { Must("j", json.RawMessage(`{`)) },
	} {
		func() {
			defer func() {
				err, _ := recover().(error)
				if !errors.Is(err, errs.ErrBadParameter) {
					t.Errorf("%s: recovered %v, want an error wrapping ErrBadParameter", name, err)
				}
			}()
			f()
		}()
	}
}

func TestContentIsolated(t *testing.T) {
	ctx := context.Background()
	in := []byte("original")
	raw := json.RawMessage(`"original"`)
	rs := []Resource{Must("d", in), Must("j", raw)}
	b, _ := Blob("b", "text/plain", in)
	rs = append(rs, b)
	in[0], raw[1] = 'X', 'X' // the caller changes its slices
	for _, r := range rs {
		got, _ := r.Read(ctx)
		if strings.Contains(string(got), "X") {
			t.Errorf("%s: content followed the caller's slice: %q", r.Name(), got)
		}
		got[0] = 'Y' // the caller changes what Read returned
		again, _ := r.Read(ctx)
		if again[0] == 'Y' {
			t.Errorf("%s: content followed the slice Read returned", r.Name())
		}
	}
}

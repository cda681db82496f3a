package resource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/internal/names"
)

// Text returns a text resource of type [TypeText] holding content. A valid
// UTF-8 string is kept exactly as given; any other string is converted to
// UTF-8 as described in the package documentation. name must be an
// identifier.
func Text(name, content string) (Resource, error) {
	if err := names.CheckIdent("resource", name); err != nil {
		return nil, err
	}
	if !utf8.ValidString(content) {
		content = toUTF8(content)
	}
	return newMemory(name, TypeText, content), nil
}

// Data returns a resource holding a copy of data, with its MIME type sniffed
// from the content. Text content is converted to UTF-8 and text/* types get
// "; charset=utf-8"; binary content is kept as it is. name must be an
// identifier; to let a file extension guide detection, use [Read] with
// [WithFileName].
func Data(name string, data []byte) (Resource, error) {
	if err := names.CheckIdent("resource", name); err != nil {
		return nil, err
	}
	return fromContent(name, "", data, string(data)), nil
}

// Blob returns a resource holding a copy of data with the given MIME type,
// without sniffing or converting anything. mimeType must be a "type/subtype"
// with optional parameters that [mime.ParseMediaType] accepts; it is
// returned by Type as given. name must be an identifier.
func Blob(name, mimeType string, data []byte) (Resource, error) {
	if err := names.CheckIdent("resource", name); err != nil {
		return nil, err
	}
	if err := checkMIME(mimeType); err != nil {
		return nil, fmt.Errorf("%w: resource %q: %w", errs.ErrBadParameter, name, err)
	}
	return newMemory(name, mimeType, string(data)), nil
}

func checkMIME(mimeType string) error {
	if _, _, err := mime.ParseMediaType(mimeType); err != nil {
		return fmt.Errorf("MIME type %q: %w", mimeType, err)
	}
	if !validMediaType(mediaType(mimeType)) {
		return fmt.Errorf("MIME type %q: want type/subtype", mimeType)
	}
	return nil
}

// JSON returns a resource of type [TypeJSON]. A [json.RawMessage] or []byte
// argument must be valid JSON and is stored as given (copied, not
// re-encoded); any other value, including a string, is marshalled with
// encoding/json without HTML escaping. Invalid UTF-8 inside raw JSON strings
// is replaced with U+FFFD, as encoding/json does when marshalling. name must
// be an identifier.
func JSON(name string, v any) (Resource, error) {
	if err := names.CheckIdent("resource", name); err != nil {
		return nil, err
	}
	switch raw := v.(type) {
	case json.RawMessage:
		return rawJSON(name, raw)
	case []byte:
		return rawJSON(name, raw)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("%w: resource %q: %w", errs.ErrBadParameter, name, err)
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
	return newMemory(name, TypeJSON, validUTF8(string(b))), nil
}

func rawJSON(name string, raw []byte) (Resource, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: resource %q: empty JSON", errs.ErrBadParameter, name)
	}
	if !validJSON(raw) {
		return nil, fmt.Errorf("%w: resource %q: invalid JSON", errs.ErrBadParameter, name)
	}
	return newMemory(name, TypeJSON, validUTF8(string(raw))), nil
}

func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Must returns a resource made by [Text] for a string, [JSON] for a
// [json.RawMessage] and [Data] for a []byte, and panics if that fails. It is
// meant for static data and tests.
func Must[V string | []byte | json.RawMessage](name string, v V) Resource {
	var (
		r   Resource
		err error
	)
	switch x := any(v).(type) {
	case string:
		r, err = Text(name, x)
	case json.RawMessage:
		r, err = JSON(name, x)
	case []byte:
		r, err = Data(name, x)
	}
	if err != nil {
		panic(err)
	}
	return r
}

// fromContent makes the resource for content s, whose leading bytes are
// head, sniffing its type with the help of the file extension ext (may be
// "") and converting text to UTF-8.
func fromContent(name, ext string, head []byte, s string) *memory {
	var t string
	if strings.HasPrefix(s, bomUTF8) || strings.HasPrefix(s, bomUTF16LE) || strings.HasPrefix(s, bomUTF16BE) {
		s = toUTF8(s)
		t = sniffText(s, ext)
	} else {
		t = mediaType(http.DetectContentType(head))
		if t == TypeBinary {
			if order, ok := guessUTF16(s); ok {
				if d := decodeUTF16(s, order); plausibleText(d) {
					s, t = d, sniffText(d, ext)
				}
			}
		}
		if t == TypeBinary || t == "text/plain" {
			t = refine(t, ext)
		}
	}
	if IsText(t) {
		s = toUTF8(s)
		t = textType(t)
	}
	return newMemory(name, t, s)
}

// sniffText returns the media type of s, which is known to be text.
func sniffText(s, ext string) string {
	head := []byte(s[:min(len(s), sniffLen)])
	t := mediaType(http.DetectContentType(head))
	if !IsText(t) {
		t = "text/plain"
	}
	if t == "text/plain" {
		t = refine(t, ext)
	}
	return t
}

package prompt_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/prompt"
)

// FuzzRead checks that any file either parses into a consistent prompt or
// fails with ErrBadParameter, and never panics; a prompt that parses can be
// rendered without panicking.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.md")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("---\r\ntitle: x\r\n---"))
	f.Add([]byte("---\ninput: {type: object, properties: {a: {$ref: '#'}}}\n---\n# Recursive schema\n{{ .a }}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := prompt.ReadFS(fstest.MapFS{"fuzz.md": {Data: data}}, "fuzz.md")
		if err != nil {
			if !errors.Is(err, errs.ErrBadParameter) {
				t.Fatalf("err = %v does not wrap ErrBadParameter", err)
			}
			return
		}
		if a.Name() == "" || utf8.RuneCountInString(a.Title()) < prompt.MinTitleLength || strings.Contains(a.Title(), "\n") {
			t.Fatalf("inconsistent prompt: name %q title %q", a.Name(), a.Title())
		}
		if !utf8.ValidString(a.Template()) || !utf8.ValidString(a.SystemPrompt()) {
			t.Fatal("invalid UTF-8 after reading")
		}
		for _, in := range []string{``, `{}`, `"text"`, `{"a":1}`} {
			_, _ = a.Render(context.Background(), json.RawMessage(in))
		}
	})
}

// FuzzRender renders arbitrary templates with arbitrary input: the result
// is text or an error, never a panic or an unbounded output.
func FuzzRender(f *testing.F) {
	f.Add("{{ . }}", `"hello"`)
	f.Add(`{{ default "x" .a }} {{ join .b ", " }}`, `{"a":"","b":[1,2]}`)
	f.Add(`{{ range $i, $e := .items }}{{ $i }}={{ upper $e }}{{ end }}`, `{"items":["a","b"]}`)
	f.Add(`{{ json . }}`, `{"n":1e400}`)
	f.Add(`{{ range 3 }}{{ . }}{{ end }}`, `null`)
	f.Add(`{{ define "t" }}{{ template "t" . }}{{ end }}{{ template "t" . }}`, `{}`)
	f.Add(`{{ trim (lower .s) }}`, `{"s":" A "}`)
	f.Fuzz(func(t *testing.T, body, input string) {
		src := "---\ntitle: Fuzzed template body\n---\n" + body
		a, err := prompt.ReadFS(fstest.MapFS{"fuzz.md": {Data: []byte(src)}}, "fuzz.md")
		if err != nil {
			return
		}
		r, err := a.Render(context.Background(), json.RawMessage(input))
		if err != nil {
			if !errors.Is(err, errs.ErrBadParameter) && !errors.Is(err, errs.ErrSchema) {
				t.Fatalf("err = %v wraps no sentinel", err)
			}
			return
		}
		data, err := r.Messages[0].Content.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 || len(data) > prompt.MaxRenderSize || !utf8.Valid(data) {
			t.Fatalf("rendered %d bytes, valid UTF-8: %v", len(data), utf8.Valid(data))
		}
	})
}

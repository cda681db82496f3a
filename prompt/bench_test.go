package prompt_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"text/template"
)

// BenchmarkRender measures Agent.Render (validation, guarded template,
// resource) beside its baseline: decoding the same input and executing the
// same template with text/template directly.
func BenchmarkRender(b *testing.B) {
	const body = `Write a {{ default "friendly" .tone }} greeting for {{ upper .name }}.{{ range .hobbies }} {{ . }}{{ end }}`
	input := json.RawMessage(`{"name":"ada","tone":"warm","hobbies":["chess","go","tea"]}`)
	b.Run("Agent.Render", func(b *testing.B) {
		a := mustRead(b, "---\ntitle: Greeting benchmark\ninput:\n  type: object\n  properties:\n    name: {type: string}\n    tone: {type: string}\n    hobbies: {type: array, items: {type: string}}\n  required: [name]\n---\n"+body)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.Render(ctx, input); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("text/template", func(b *testing.B) {
		t := template.Must(template.New("t").Option("missingkey=error").Funcs(template.FuncMap{
			"default": func(d, v any) any {
				if v == nil || v == "" {
					return d
				}
				return v
			},
			"upper": strings.ToUpper,
		}).Parse(body))
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal(input, &v); err != nil {
				b.Fatal(err)
			}
			var sb strings.Builder
			if err := t.Execute(&sb, v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

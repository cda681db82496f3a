package prompt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/resource"
)

// mustRead parses src as a prompt file named p.md.
func mustRead(t testing.TB, src string) *prompt.Agent {
	t.Helper()
	a, err := prompt.ReadFS(fstest.MapFS{"p.md": {Data: []byte(src)}}, "p.md")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func renderText(t *testing.T, a *prompt.Agent, input string) (string, error) {
	t.Helper()
	r, err := a.Render(context.Background(), json.RawMessage(input))
	if err != nil {
		return "", err
	}
	if len(r.Messages) != 1 || r.Messages[0].Role != prompt.RoleUser {
		t.Fatalf("messages = %+v", r.Messages)
	}
	c := r.Messages[0].Content
	if c.Type() != resource.TypeText || c.Name() != a.Name() {
		t.Errorf("content type %q name %q", c.Type(), c.Name())
	}
	data, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return string(data), nil
}

func TestRender(t *testing.T) {
	greet, err := prompt.ReadFile("testdata/good/greet.md")
	if err != nil {
		t.Fatal(err)
	}
	summarize, err := prompt.ReadFile("testdata/good/summarize.md")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		a     *prompt.Agent
		input string
		want  string
		err   error
	}{
		{"object", greet, `{"name":"ada"}`, "Write a friendly greeting for ADA.", nil},
		{"default used", greet, `{"name":"ada","tone":""}`, "Write a friendly greeting for ADA.", nil},
		{"default not used", greet, `{"name":"ada","tone":"formal"}`, "Write a formal greeting for ADA.", nil},
		{"join and number", greet, `{"name":"ada","hobbies":["chess","go"],"age":1000000}`,
			"Write a friendly greeting for ADA.\nMention: chess, go.\nAge: 1000000.", nil},
		{"schema: missing required", greet, `{}`, "", errs.ErrSchema},
		{"schema: empty input counts as {}", greet, ``, "", errs.ErrSchema},
		{"schema: wrong type", greet, `{"name":5}`, "", errs.ErrSchema},
		{"schema: minLength", greet, `{"name":""}`, "", errs.ErrSchema},
		{"not JSON", greet, `{"name":`, "", errs.ErrBadParameter},
		{"string input", summarize, `"The quick brown fox."`, "Summarize the following text:\n\nThe quick brown fox.", nil},
		{"string schema refuses object", summarize, `{"text":"x"}`, "", errs.ErrSchema},
		{"string schema refuses nothing", summarize, ``, "", errs.ErrSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := renderText(t, tt.a, tt.input)
			if tt.err != nil {
				if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.a.Name()) {
					t.Errorf("err = %v, want %v naming the prompt", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestRenderFuncs(t *testing.T) {
	tests := []struct {
		body, input, want, err string
	}{
		{`{{ json . }}`, `{"b":[1,2.5,"x"],"a":null}`, `{"a":null,"b":[1,2.5,"x"]}`, ""},
		{`{{ json .n }}`, `{"n":12345678}`, `12345678`, ""},
		{`{{ .n }}`, `{"n":1e21}`, `1e+21`, ""},
		{`{{ .n }}`, `{"n":0.5}`, `0.5`, ""},
		{`{{ default "none" .v }}`, `{"v":null}`, `none`, ""},
		{`{{ default "none" .v }}`, `{"v":[]}`, `none`, ""},
		{`{{ default "none" .v }}`, `{"v":{}}`, `none`, ""},
		{`{{ default "none" .v }}`, `{"v":0}`, `0`, ""},
		{`{{ default "none" .v }}`, `{"v":false}`, `false`, ""},
		{`{{ join .v "-" }}`, `{"v":[1,"a",true,null]}`, `1-a-true-`, ""},
		{`{{ join .v "-" }}`, `{"v":null}`, ``, "empty message"},
		{`x{{ join .v "-" }}`, `{"v":"abc"}`, ``, "want a list"},
		{`{{ upper .v }} {{ lower .v }} [{{ trim .w }}]`, `{"v":"MiXed","w":"  sp  "}`, `MIXED mixed [sp]`, ""},
		{`{{ upper .n }}`, `{"n":3}`, `3`, ""},
		{`{{ .missing }}`, `{"present":1}`, ``, "missing"},
		{`{{ .a.b }}`, `{"a":{}}`, ``, `no entry for key "b"`},
		{`{{ range .items }}<{{ . }}>{{ end }}`, `{"items":["x","y"]}`, `<x><y>`, ""},
		{`{{ range $k, $v := . }}{{ $k }}={{ $v }};{{ end }}`, `{"b":2,"a":1}`, `a=1;b=2;`, ""},
		{`{{ range .n }}x{{ end }}`, `{"n":1000000000}`, ``, "range can't iterate over"},
		{`{{ range 3 }}x{{ end }}`, `{}`, `xxx`, ""},
		{`{{ if .flag }}yes{{ else }}no{{ end }}`, `{"flag":false}`, `no`, ""},
		{`{{ if .n }}yes{{ else }}no{{ end }}`, `{"n":0}`, `no`, ""},
		{`{{ . }}`, `"<b>&"`, `<b>&`, ""}, // text/template: no HTML escaping
		{`{{ . }}`, `42`, `42`, ""},
		{`{{ . }}`, `[1,2]`, `[1 2]`, ""},
		{`{{ if false }}x{{ end }}   `, `{}`, ``, "empty message"},
	}
	for _, tt := range tests {
		t.Run(tt.body+" "+tt.input, func(t *testing.T) {
			a := mustRead(t, "---\ntitle: A title long enough\n---\n"+tt.body)
			got, err := renderText(t, a, tt.input)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, errs.ErrBadParameter) {
					t.Errorf("err = %v, want ErrBadParameter containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRenderEmptyBody(t *testing.T) {
	a, err := prompt.ReadFile("testdata/good/empty_body.md")
	if err != nil {
		t.Fatal(err)
	}
	got, err := renderText(t, a, `"What is the capital of France?"`)
	if err != nil || got != "What is the capital of France?" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := renderText(t, a, ``); !errors.Is(err, errs.ErrSchema) {
		t.Errorf("no input: err = %v, want ErrSchema (input is a string)", err)
	}

	free := mustRead(t, "---\ntitle: No schema and no body\n---\n")
	got, err = renderText(t, free, `{"q":1}`)
	if err != nil || got != "{\n  \"q\": 1\n}" {
		t.Errorf("object input: got %q, %v", got, err)
	}
	if _, err := renderText(t, free, ``); !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), "nothing to send") {
		t.Errorf("nothing: err = %v", err)
	}
}

func TestRenderTooLarge(t *testing.T) {
	a := mustRead(t, "# A title long enough\n{{ range 10000 }}{{ $.s }}{{ end }}")
	in, _ := json.Marshal(map[string]string{"s": strings.Repeat("x", 1000)})
	_, err := renderText(t, a, string(in))
	if !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), "exceeds") {
		t.Errorf("err = %v", err)
	}
}

func TestRenderLoopBudget(t *testing.T) {
	tests := []struct{ body, input string }{
		{"{{ range 1000000000 }}{{ end }}x", `{}`},
		{"{{ range 400 }}{{ range 400 }}{{ end }}{{ end }}x", `{}`},
		{"{{ range $.a }}{{ range $.a }}{{ range $.a }}{{ end }}{{ end }}{{ end }}x", `{"a":[` + strings.Repeat("1,", 59) + `1]}`},
		{"{{ range $k, $v := $.m }}{{ range $.m }}{{ range $.m }}{{ end }}{{ end }}{{ end }}x", `{"m":{` + strings.Repeat(`"k":1,`, 0) + manyKeys(60) + `}}`},
	}
	for _, tt := range tests {
		a := mustRead(t, "---\ntitle: A title long enough\n---\n"+tt.body)
		_, err := renderText(t, a, tt.input)
		if !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), "loops ran more than") {
			t.Errorf("%s: err = %v", tt.body, err)
		}
	}
	// Under the budget, loops run normally, else branches included.
	a := mustRead(t, "---\ntitle: A title long enough\n---\n{{ range $i, $e := .a }}{{ $i }}{{ $e }}{{ end }}|{{ range .none }}x{{ else }}empty{{ end }}|{{ range $i := 3 }}{{ $i }}{{ end }}|{{ range .a }}{{ if eq . \"b\" }}{{ break }}{{ end }}{{ . }}{{ end }}")
	got, err := renderText(t, a, `{"a":["a","b","c"],"none":[]}`)
	if err != nil || got != "0a1b2c|empty|012|a" {
		t.Errorf("got %q, %v", got, err)
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	return b.String()
}

func TestRenderCancelled(t *testing.T) {
	a := mustRead(t, "# A title long enough\nhello")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Render(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

func TestRenderConcurrent(t *testing.T) {
	a, err := prompt.ReadFile("testdata/good/greet.md")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	for i := range 8 {
		go func() {
			_, err := a.Render(context.Background(), json.RawMessage(`{"name":"n`+string(rune('a'+i))+`"}`))
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// blob is a resource with a chosen type and content.
type blob struct {
	typ, data string
	err       error
}

func (b blob) URI() string                          { return "test:blob" }
func (b blob) Name() string                         { return "blob" }
func (b blob) Description() string                  { return "" }
func (b blob) Type() string                         { return b.typ }
func (b blob) Read(context.Context) ([]byte, error) { return []byte(b.data), b.err }

func TestPrepare(t *testing.T) {
	ctx := context.Background()
	a, err := prompt.ReadFile("testdata/good/thinking.md")
	if err != nil {
		t.Fatal(err)
	}
	att := resource.Must("notes", "some notes")
	req, err := a.Prepare(ctx, resource.Must("input", json.RawMessage(`{"goal":"ship"}`)), nil, att)
	if err != nil {
		t.Fatal(err)
	}
	if req.Prompt != a || req.User != `Plan: {"goal":"ship"}` || string(req.Input) != `{"goal":"ship"}` {
		t.Errorf("request = %+v", req)
	}
	if req.Model != "gemini-2.5-pro" || req.Provider != "google" || !req.Thinking || req.ThinkingBudget != 2048 || req.MaxTokens != 8192 {
		t.Errorf("settings = %+v", req)
	}
	if req.OutputSchema == nil || len(req.Tools) != 2 || len(req.Attachments) != 1 || req.Attachments[0] != att {
		t.Errorf("schema %v tools %v attachments %v", req.OutputSchema, req.Tools, req.Attachments)
	}

	sum, err := prompt.ReadFile("testdata/good/summarize.md")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   resource.Resource
		want string
		err  string
	}{
		{"text/plain is a string", resource.Must("input", "The quick brown fox"), "The quick brown fox", ""},
		{"text that looks like JSON stays text", blob{"text/plain", `{"a":1}`, nil}, `{"a":1}`, ""},
		{"markdown is text", blob{"text/markdown; charset=utf-8", "# doc", nil}, "# doc", ""},
		{"JSON string", blob{"application/json", `"from json"`, nil}, "from json", ""},
		{"untyped JSON", blob{"", `"untyped json"`, nil}, "untyped json", ""},
		{"untyped text", blob{"", `plain words`, nil}, "plain words", ""},
		{"bad JSON", blob{"application/json", `{`, nil}, "", "not valid JSON"},
		{"JSON object fails string schema", blob{"application/json", `{}`, nil}, "", "input"},
		{"binary", blob{"image/png", "\x89PNG", nil}, "", "neither JSON nor text"},
		{"untyped binary", blob{"", "\xff\xfe\x00", nil}, "", "neither JSON nor text"},
		{"read error", blob{"text/plain", "", errors.New("gone")}, "", "gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := sum.Prepare(ctx, tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := "Summarize the following text:\n\n" + tt.want; req.User != want {
				t.Errorf("user = %q, want %q", req.User, want)
			}
			if req.System != "You are an expert summarizer." {
				t.Errorf("system = %q", req.System)
			}
		})
	}
}

func TestPrepareNoInput(t *testing.T) {
	a := mustRead(t, "# A title long enough\nNo variables here.")
	req, err := a.Prepare(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if req.Input != nil || req.User != "# A title long enough\nNo variables here." || req.Attachments != nil {
		t.Errorf("request = %+v", req)
	}
}

func TestRenderDeclaredOptionalFields(t *testing.T) {
	a := mustRead(t, `---
title: Optional fields are nil
input:
  type: object
  properties:
    name: {type: string}
    who:
      type: object
      properties:
        nick: {type: string}
---
{{ default "anon" .name }}/{{ default "none" .who }}{{ with .who }}/{{ default "-" .nick }}{{ end }}`)
	tests := map[string]string{
		`{}`:                              "anon/none",
		`{"who":{}}`:                      "anon/map[nick:<nil>]/-",
		`{"who":{"x":1}}`:                 "anon/map[nick:<nil> x:1]/-",
		`{"name":"n","who":{"nick":"k"}}`: "n/map[nick:k]/k",
	}
	for in, want := range tests {
		got, err := renderText(t, a, in)
		if err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", in, got, err, want)
		}
	}
	undeclared := mustRead(t, "---\ntitle: Undeclared field fails\ninput:\n  type: object\n  properties:\n    name: {type: string}\n---\n{{ .nickname }}")
	if _, err := renderText(t, undeclared, `{"name":"x"}`); err == nil || !strings.Contains(err.Error(), `"nickname"`) {
		t.Errorf("undeclared field: err = %v", err)
	}
}

// TestRenderAbsentValues checks the rule for properties the input schema
// declares but the input omits (and for JSON null): they may be tested,
// defaulted, assigned or passed to json and join, but printing them is an
// error that names the action, never "<no value>".
func TestRenderAbsentValues(t *testing.T) {
	const head = "---\ntitle: Absent values are refused\ninput:\n  type: object\n  properties:\n    name: {type: string}\n    tags: {type: array, items: {type: string}}\n    extra: {}\n    list: {type: array}\n    who:\n      type: object\n      properties:\n        nick: {type: string}\n---\n"
	tests := []struct {
		body, input, want, err string
	}{
		{`Hello {{ .name }}!`, `{}`, ``, `{{ .name }}: no value`},
		{`Hello {{ .extra }}!`, `{"extra":null}`, ``, `{{ .extra }}: no value`},
		{`Hello {{ .name }}!`, `{"name":"Ada"}`, `Hello Ada!`, ``},
		{`Hello {{ .who.nick }}!`, `{"who":{}}`, ``, `{{ .who.nick }}: no value`},
		{`Hello {{ .who.nick }}!`, `{}`, ``, `nil pointer`},
		{`{{ if .name }}x{{ end }}{{ range .list }}{{ . }}{{ end }}`, `{"list":[null]}`, ``, `{{ . }}: no value`},
		{`Hello {{ upper .name }}!`, `{}`, ``, `upper: no value`},
		{`Hello {{ .name | lower }}!`, `{}`, ``, `lower: no value`},
		{`Hello {{ trim .name }}!`, `{}`, ``, `trim: no value`},
		{`Hello {{ index . "name" }}!`, `{}`, ``, `no value`},
		// The ways to handle an optional value keep working.
		{`Hello {{ default "you" .name }}!`, `{}`, `Hello you!`, ``},
		{`Hello {{ .name | default "you" }}!`, `{}`, `Hello you!`, ``},
		{`Hello{{ if .name }} {{ .name }}{{ end }}!`, `{}`, `Hello!`, ``},
		{`Hello{{ with .name }} {{ . }}{{ else }} stranger{{ end }}!`, `{}`, `Hello stranger!`, ``},
		{`Hello{{ with .who }} {{ default "anon" .nick }}{{ end }}!`, `{"who":{}}`, `Hello anon!`, ``},
		{`{{ $n := .name }}Hello {{ default "you" $n }}!`, `{}`, `Hello you!`, ``},
		{`Hello {{ json .name }} [{{ join .tags ", " }}]`, `{}`, `Hello null []`, ``},
		{`Hello {{ or .name "you" }}!`, `{}`, `Hello you!`, ``},
		{`Hello {{ not .name }}`, `{}`, `Hello true`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.body+" "+tt.input, func(t *testing.T) {
			got, err := renderText(t, mustRead(t, head+tt.body), tt.input)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, errs.ErrBadParameter) {
					t.Fatalf("got %q, %v; want an ErrBadParameter containing %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// A recursive input schema (a tree of things) is accepted; an input nested
// too deeply for it is refused before it is validated.
func TestRenderRecursiveInput(t *testing.T) {
	a := mustRead(t, "---\ntitle: A tree of things\ninput:\n  type: object\n  properties:\n    children: {type: array, items: {$ref: \"#\"}}\n---\n{{len .children}} children")
	got, err := renderText(t, a, `{"children":[{},{"children":[]}]}`)
	if err != nil || got != "2 children" {
		t.Errorf("render: %q, %v", got, err)
	}
	deep := strings.Repeat(`{"children":[`, 300) + `{}` + strings.Repeat(`]}`, 300)
	if _, err := a.Render(context.Background(), json.RawMessage(deep)); !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), "nests more than") {
		t.Errorf("deep input: %v", err)
	}
}

package genai_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/llmkit/toolkit/adapters/adapter"
	gg "github.com/llmkit/toolkit/adapters/genai"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	"github.com/llmkit/toolkit/internal/testing/geminicheck"
)

const modelName = "gemini-test"

func client(t *testing.T, p *at.Provider) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      "test-key",
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: p.URL},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// gemini starts a fake Gemini API that first checks every function
// declaration of every request against Gemini's documented schema subset
// (a declaration outside it is a 400 from the real API), then answers
// with turn.
func gemini(t *testing.T, turn func(at.Request) (any, error)) *at.Provider {
	t.Helper()
	return at.NewProvider(t, func(r at.Request) (any, error) {
		for _, tl := range at.List(r.Body, "tools") {
			for _, d := range at.List(tl, "functionDeclarations") {
				if err := geminicheck.Declaration([]byte(at.JSON(d))); err != nil {
					return nil, fmt.Errorf("declaration outside Gemini's schema: %v", err)
				}
			}
		}
		return turn(r)
	})
}

func candidate(parts ...any) map[string]any {
	return map[string]any{
		"candidates": []any{map[string]any{
			"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
		"modelVersion":  modelName,
	}
}

func call(id, name string, args map[string]any) map[string]any {
	return map[string]any{"functionCall": map[string]any{"id": id, "name": name, "args": args}}
}

// declarations indexes a request's function declarations by name and
// finds the remote tool's.
func declarations(body map[string]any) (map[string]map[string]any, string) {
	var decls []any
	for _, tl := range at.List(body, "tools") {
		decls = append(decls, at.List(tl, "functionDeclarations")...)
	}
	return at.ByName(decls)
}

// responsesOf returns the function responses of the last content by id.
func responsesOf(body map[string]any) (map[string]map[string]any, error) {
	contents := at.List(body, "contents")
	last := contents[len(contents)-1]
	if at.Str(last, "role") != "user" {
		return nil, fmt.Errorf("last content %s", at.JSON(last))
	}
	out := map[string]map[string]any{}
	for _, p := range at.List(last, "parts") {
		fr, ok := at.Get(p, "functionResponse").(map[string]any)
		if !ok {
			return nil, fmt.Errorf("part %s", at.JSON(p))
		}
		out[at.Str(fr, "id")] = fr
	}
	return out, nil
}

// converse runs the GenerateContent loop with the real SDK from the user
// text prompt, the tools of every request and the function responses
// coming from tools, until the model answers; the answer must be want (see
// at.Converse).
func converse(t *testing.T, tools *gg.Tools, prov *at.Provider, prompt, want string) {
	t.Helper()
	converseTurns(t, tools, prov, prompt, want, 2)
}

// converseTurns is converse for a conversation that must end on turn n
// (see at.ConverseTurns).
func converseTurns(t *testing.T, tools *gg.Tools, prov *at.Provider, prompt, want string, n int) {
	t.Helper()
	ctx := context.Background()
	c := client(t, prov)
	contents := []*genai.Content{genai.NewContentFromText(prompt, genai.RoleUser)}
	at.ConverseTurns(t, want, n, func() (string, bool) {
		fns, err := tools.Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Models.GenerateContent(ctx, modelName, contents, &genai.GenerateContentConfig{Tools: fns})
		if err != nil {
			t.Fatal(err)
		}
		reply, ok := tools.Run(ctx, resp)
		if !ok {
			return resp.Text(), true
		}
		contents = append(contents, resp.Candidates[0].Content, reply)
		return "", false
	})
}

// The whole generateContent loop with the real SDK: Gemini asks for a
// builtin and a remote function at once, both responses come back with
// the right ids and names, and Gemini answers.
func TestLoop(t *testing.T) {
	tk := at.Toolkit(t)
	tools := gg.New(tk)
	var remoteSeen string

	prov := gemini(t, func(r at.Request) (any, error) {
		if r.Method != "POST" || r.Path != "/v1beta/models/"+modelName+":generateContent" {
			return nil, fmt.Errorf("unexpected %s %s", r.Method, r.Path)
		}
		if got := r.Header.Get("X-Goog-Api-Key"); got != "test-key" {
			return nil, fmt.Errorf("x-goog-api-key = %q", got)
		}
		decls, remote := declarations(r.Body)
		contents := at.List(r.Body, "contents")
		if len(contents) == 1 {
			w := decls["get_weather"]
			if at.Str(w, "parameters", "type") != "OBJECT" || at.Str(w, "parameters", "properties", "city", "type") != "STRING" ||
				at.Get(w, "parameters", "additionalProperties") != nil || at.Str(w, "description") != "Current weather for a city." {
				return nil, fmt.Errorf("get_weather declaration: %s", at.JSON(w))
			}
			if e := decls["explode"]; e == nil || at.Get(e, "parameters") != nil {
				return nil, fmt.Errorf("a function without parameters must have none: %s", at.JSON(e))
			}
			if remote == "" {
				return nil, fmt.Errorf("no remote function among %v", decls)
			}
			remoteSeen = remote
			return candidate(
				call("fc_1", "get_weather", map[string]any{"city": "Oslo"}),
				call("fc_2", remote, map[string]any{"query": "adapters"})), nil
		}
		if m := contents[len(contents)-2]; at.Str(m, "role") != "model" || len(at.List(m, "parts")) != 2 {
			return nil, fmt.Errorf("the model turn was not sent back: %s", at.JSON(m))
		}
		res, err := responsesOf(r.Body)
		if err != nil {
			return nil, err
		}
		got := map[string]string{}
		for id, fr := range res {
			got[id] = at.Str(fr, "name") + "=" + at.Str(fr, "response", "output")
		}
		want := map[string]string{"fc_1": "get_weather=Sunny in Oslo", "fc_2": remoteSeen + "=found: adapters"}
		if !reflect.DeepEqual(got, want) {
			return nil, fmt.Errorf("function responses = %v, want %v", got, want)
		}
		return candidate(map[string]any{"text": "Sunny; docs found."}), nil
	})

	converse(t, tools, prov, "Weather in Oslo? Search the docs for adapters.", "Sunny; docs found.")
}

// Images travel as inline data (also those a remote tool sends beside its
// text), JSON as JSON, failures under "error".
func TestResultKinds(t *testing.T) {
	tk := at.Toolkit(t)
	tools := gg.New(tk)

	prov := gemini(t, func(r at.Request) (any, error) {
		if len(at.List(r.Body, "contents")) == 1 {
			return candidate(
				call("c_chart", "render_chart", nil),
				call("c_fc", "get_forecast", map[string]any{"city": "Lima"}),
				call("c_boom", "explode", map[string]any{}),
				call("c_none", "nope", nil),
				call("c_snap", "snapshot", nil)), nil
		}
		res, err := responsesOf(r.Body)
		if err != nil {
			return nil, err
		}
		chart := res["c_chart"]
		if !strings.Contains(at.Str(chart, "response", "output"), "image/png") ||
			at.Str(chart, "parts", 0, "inlineData", "mimeType") != "image/png" ||
			at.Str(chart, "parts", 0, "inlineData", "data") != base64.StdEncoding.EncodeToString(at.PNG()) {
			return nil, fmt.Errorf("chart response: %s", at.JSON(chart))
		}
		snap := res["c_snap"]
		if at.Str(snap, "response", "output") != "the chart:" || at.Str(snap, "parts", 0, "inlineData", "mimeType") != "image/png" {
			return nil, fmt.Errorf("remote text and image response: %s", at.JSON(snap))
		}
		if at.Get(res["c_fc"], "response", "output", "high") != 21.0 {
			return nil, fmt.Errorf("forecast response: %s", at.JSON(res["c_fc"]))
		}
		for id, want := range map[string]string{"c_boom": "boom", "c_none": `no tool named "nope"`} {
			if !strings.Contains(at.Str(res[id], "response", "error"), want) || at.Get(res[id], "response", "output") != nil {
				return nil, fmt.Errorf("%s response: %s", id, at.JSON(res[id]))
			}
		}
		return candidate(map[string]any{"text": "ok"}), nil
	})
	converse(t, tools, prov, "go", "ok")
}

// The declarations follow the toolkit.
func TestLive(t *testing.T) {
	tk := at.Local(t)
	tools := gg.New(tk)
	at.Live(t, tk, at.NamesOf(tools.Declarations, func(d *genai.FunctionDeclaration) string { return d.Name }))
}

func BenchmarkDeclarations(b *testing.B) {
	at.BenchmarkList(b, func(tk adapter.Toolkit) func(context.Context) ([]*genai.FunctionDeclaration, error) {
		return gg.New(tk).Declarations
	})
}

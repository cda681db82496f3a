package langchaingo_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/adapters/adapter"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	lc "github.com/llmkit/toolkit/adapters/langchaingo"
	"github.com/llmkit/toolkit/model"
)

// The whole loop with LangChainGo's OpenAI model against a local Chat
// Completions server: two calls at once (builtin and remote), both results
// back under their ids, then the answer.
func TestLoop(t *testing.T) {
	tk := at.Toolkit(t)
	tools := lc.New(tk)

	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		if r.Path != "/chat/completions" {
			return nil, fmt.Errorf("unexpected path %s", r.Path)
		}
		var fns []any
		for _, tl := range at.List(r.Body, "tools") {
			fns = append(fns, at.Get(tl, "function"))
		}
		names, remote := at.ByName(fns)
		if remote == "" || at.Get(names["get_weather"], "parameters", "properties", "city") == nil {
			return nil, fmt.Errorf("tools: %s", at.JSON(at.Get(r.Body, "tools")))
		}
		msgs := at.List(r.Body, "messages")
		last := msgs[len(msgs)-1]
		if at.Str(last, "role") == "user" {
			return at.ChatCompletion(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
				at.FunctionCall("call_1", "get_weather", `{"city":"Oslo"}`),
				at.FunctionCall("call_2", remote, `{"query":"adapters"}`),
			}}, "tool_calls"), nil
		}
		if asst := msgs[len(msgs)-3]; at.Str(asst, "role") != "assistant" || len(at.List(asst, "tool_calls")) != 2 {
			return nil, fmt.Errorf("the assistant turn was not sent back: %s", at.JSON(asst))
		}
		got := map[string]string{}
		for _, m := range msgs[len(msgs)-2:] {
			if at.Str(m, "role") != "tool" {
				return nil, fmt.Errorf("message %s", at.JSON(m))
			}
			got[at.Str(m, "tool_call_id")] = at.Str(m, "content")
		}
		want := map[string]string{"call_1": "Sunny in Oslo", "call_2": "found: adapters"}
		if !reflect.DeepEqual(got, want) {
			return nil, fmt.Errorf("tool results = %v, want %v", got, want)
		}
		return at.ChatCompletion(map[string]any{"role": "assistant", "content": "Sunny; docs found."}, "stop"), nil
	})

	converse(t, tools, prov, "Weather in Oslo? Search the docs for adapters.", "Sunny; docs found.", 2)
}

// Failures and binary outputs are tool messages in words; the tool list
// follows the toolkit.
func TestResultsAndLive(t *testing.T) {
	ctx := context.Background()
	tk, err := toolkit.New(toolkit.WithTool(at.Builtins()...))
	if err != nil {
		t.Fatal(err)
	}
	tools := lc.New(tk)
	if _, err := tools.LLMTools(ctx); err != nil {
		t.Fatal(err)
	}
	fc := func(id, name, args string) llms.ToolCall {
		return llms.ToolCall{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: args}}
	}
	out := tools.Run(ctx, &llms.ContentChoice{ToolCalls: []llms.ToolCall{
		fc("a", "explode", `{}`), fc("b", "render_chart", `{}`), fc("c", "nope", `{}`),
	}})
	if len(out) != 4 || out[0].Role != llms.ChatMessageTypeAI || len(out[0].Parts) != 3 {
		t.Fatalf("messages: %+v", out)
	}
	for i, want := range []string{"boom", "image/png", `no tool named "nope"`} {
		resp, _ := out[i+1].Parts[0].(llms.ToolCallResponse)
		if out[i+1].Role != llms.ChatMessageTypeTool || !strings.Contains(resp.Content, want) {
			t.Errorf("message %d = %+v, want %q", i+1, out[i+1], want)
		}
	}

	at.Live(t, tk, at.NamesOf(tools.LLMTools, func(f llms.Tool) string { return f.Function.Name }))
}

func BenchmarkLLMTools(b *testing.B) {
	at.BenchmarkList(b, func(tk adapter.Toolkit) func(context.Context) ([]llms.Tool, error) {
		return lc.New(tk).LLMTools
	})
}

// Agent tools take their arguments as one JSON string and answer failures
// in words.
func TestAgentTools(t *testing.T) {
	ctx := context.Background()
	tk, err := toolkit.New(toolkit.WithTool(at.Builtins()...))
	if err != nil {
		t.Fatal(err)
	}
	list, err := lc.New(tk, adapter.WithDispatch(model.WithRepair(true))).AgentTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for i, a := range list {
		byName[a.Name()] = i
	}
	w := list[byName["get_weather"]]
	if !strings.HasPrefix(w.Description(), "Current weather for a city. Input: a JSON object following this JSON Schema: {") ||
		!strings.Contains(w.Description(), `"city"`) {
		t.Errorf("description = %q", w.Description())
	}
	for input, want := range map[string]string{
		`{"city":"Oslo"}`:  "Sunny in Oslo",
		`{'city': 'Rome'}`: "Sunny in Rome",
		`Oslo`:             "not valid JSON",
	} {
		got, err := w.Call(ctx, input)
		if err != nil || !strings.Contains(got, want) {
			t.Errorf("Call(%q) = %q, %v; want %q", input, got, err, want)
		}
	}
	if got, err := list[byName["explode"]].Call(ctx, ""); err != nil || !strings.Contains(got, "boom") {
		t.Errorf("explode = %q, %v", got, err)
	}
}

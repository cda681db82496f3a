package openai_test

import (
	"context"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	oa "github.com/llmkit/toolkit/adapters/openai"
)

// Strict mode is on by default for every tool whose schema qualifies, in
// both APIs, and off for all with WithStrict(false): what the SDK sends
// says so.
func TestStrict(t *testing.T) {
	ctx := context.Background()
	tk := at.Local(t, at.Trip(), at.Untyped())
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		if r.Path == "/v1/responses" {
			return map[string]any{"id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "m",
				"output": []any{}, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}}, nil
		}
		return at.ChatCompletion(map[string]any{"role": "assistant", "content": "ok"}, "stop"), nil
	})
	c := client(prov)
	// sent returns the strict flag of every tool of the last two
	// requests (chat, then responses), by name.
	sent := func(tools *oa.Tools) (chat, resps map[string]any) {
		t.Helper()
		ct, err := tools.ChatTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m", Tools: ct,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}); err != nil {
			t.Fatal(err)
		}
		rt, err := tools.ResponseTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Tools: rt,
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}}); err != nil {
			t.Fatal(err)
		}
		reqs := prov.Requests()
		chat, resps = map[string]any{}, map[string]any{}
		for _, tl := range at.List(reqs[len(reqs)-2].Body, "tools") {
			chat[at.Str(tl, "function", "name")] = at.Get(tl, "function", "strict")
		}
		for _, tl := range at.List(reqs[len(reqs)-1].Body, "tools") {
			resps[at.Str(tl, "name")] = at.Get(tl, "strict")
		}
		return chat, resps
	}

	// get_weather's schema (a struct whose one field is required)
	// qualifies; plan_trip has optional fields and set_level an untyped
	// property, so they do not.
	want := map[string]any{"get_weather": true, "get_forecast": true, "render_chart": true, "explode": true, "plan_trip": false, "set_level": false}
	chat, resps := sent(oa.New(tk))
	for name, w := range want {
		if chat[name] != w || resps[name] != w {
			t.Errorf("default: %s strict = %v (chat), %v (responses), want %v", name, chat[name], resps[name], w)
		}
	}
	chat, resps = sent(oa.New(tk, oa.WithStrict(false)))
	for name := range want {
		if chat[name] != false || resps[name] != false {
			t.Errorf("WithStrict(false): %s strict = %v (chat), %v (responses)", name, chat[name], resps[name])
		}
	}
}

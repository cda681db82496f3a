package openai_test

import (
	"context"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	oa "github.com/llmkit/toolkit/adapters/openai"
	"github.com/llmkit/toolkit/model"
)

// What the SDK sends is exactly what model.Encode writes for each API:
// names, descriptions, strict and the adapted schemas, numbers and all.
func TestFidelity(t *testing.T) {
	ctx := context.Background()
	tk := at.Local(t, at.Trip())
	tools := oa.New(tk)
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		if r.Path == "/v1/responses" {
			return map[string]any{"id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "m",
				"output": []any{}, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}}, nil
		}
		return at.ChatCompletion(map[string]any{"role": "assistant", "content": "ok"}, "stop"), nil
	})
	c := client(prov)

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
	// Strict mode is on by default: the same as a strict catalog's.
	at.CheckSent(t, tk, model.OpenAIChat, at.List(reqs[0].Body, "tools"), func(v any) string { return at.Str(v, "function", "name") }, model.WithStrict(true))
	at.CheckSent(t, tk, model.OpenAIResponses, at.List(reqs[1].Body, "tools"), at.Name, model.WithStrict(true))
}

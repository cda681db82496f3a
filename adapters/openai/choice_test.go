package openai_test

import (
	"context"
	"errors"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/adapters/adapter"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	oa "github.com/llmkit/toolkit/adapters/openai"
	"github.com/llmkit/toolkit/model"
)

// A toolkit key gives the tool choice that names the tool as it is
// offered: the remote tool under its hashed model name, in both APIs.
func TestToolChoice(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	tools := oa.New(tk)
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		if r.Path == "/v1/responses" {
			return map[string]any{"id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "m",
				"output": []any{}, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}}, nil
		}
		return at.ChatCompletion(map[string]any{"role": "assistant", "content": "ok"}, "stop"), nil
	})
	c := client(prov)

	choice, err := tools.ChatToolChoice(ctx, at.RemoteNS+"."+at.RemoteTool)
	if err != nil {
		t.Fatal(err)
	}
	ct, err := tools.ChatTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m", Tools: ct, ToolChoice: choice,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("search")}}); err != nil {
		t.Fatal(err)
	}
	rchoice, err := tools.ResponseToolChoice(ctx, "get_weather")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := tools.ResponseTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "m", Tools: rt, ToolChoice: rchoice,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("weather")}}); err != nil {
		t.Fatal(err)
	}

	reqs := prov.Requests()
	_, remote := chatTools(t, reqs[0].Body)
	if got := at.Get(reqs[0].Body, "tool_choice"); remote == "" || at.Str(got, "type") != "function" || at.Str(got, "function", "name") != remote {
		t.Errorf("chat tool_choice %s, remote tool %q", at.JSON(got), remote)
	}
	if got := at.Get(reqs[1].Body, "tool_choice"); at.Str(got, "type") != "function" || at.Str(got, "name") != "get_weather" {
		t.Errorf("responses tool_choice %s", at.JSON(got))
	}

	// Keys that name nothing offered.
	filtered := oa.New(tk, adapter.WithFilter(model.Filter{Namespaces: []string{toolkit.BuiltinNamespace}}))
	for _, tc := range []struct {
		tools *oa.Tools
		key   string
	}{{tools, "no_such_tool"}, {tools, at.RemoteNS + ".nothing"}, {filtered, at.RemoteNS + "." + at.RemoteTool}} {
		if _, err := tc.tools.ChatToolChoice(ctx, tc.key); !errors.Is(err, toolkit.ErrNotFound) {
			t.Errorf("ChatToolChoice(%q): %v", tc.key, err)
		}
		if _, err := tc.tools.ResponseToolChoice(ctx, tc.key); !errors.Is(err, toolkit.ErrNotFound) {
			t.Errorf("ResponseToolChoice(%q): %v", tc.key, err)
		}
	}
}

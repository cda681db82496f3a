package openai_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	oa "github.com/llmkit/toolkit/adapters/openai"
	"github.com/llmkit/toolkit/model"
)

// chatDisclosureTurn plays at.DisclosureTurn over a Chat Completions
// request.
func chatDisclosureTurn(r at.Request) (any, error) {
	var offered []string
	for _, tl := range at.List(r.Body, "tools") {
		offered = append(offered, at.Str(tl, "function", "name"))
	}
	results := map[string]string{}
	msgs := at.List(r.Body, "messages")
	for i := len(msgs) - 1; i >= 0 && at.Str(msgs[i], "role") == "tool"; i-- {
		results[at.Str(msgs[i], "tool_call_id")] = at.Str(msgs[i], "content")
	}
	call, answer, err := at.DisclosureTurn(offered, results)
	if err != nil {
		return nil, err
	}
	if call == nil {
		return at.ChatCompletion(map[string]any{"role": "assistant", "content": answer}, "stop"), nil
	}
	return at.ChatCompletion(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
		at.FunctionCall(call.ID, call.Name, call.Args),
	}}, "tool_calls"), nil
}

// A Disclosed view with the real SDK: the first request offers the search
// tool and the always-offered tool only; the model searches; the tool
// found is offered by the next request, and its call runs in the toolkit.
// The adapter's own lists still offer every tool.
func TestChatDisclosed(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	tools := oa.New(tk, at.DisclosureOption())
	var found model.Loaded
	conv := tools.Disclosed(&found)

	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		if r.Path != "/v1/chat/completions" {
			return nil, fmt.Errorf("unexpected path %s", r.Path)
		}
		return chatDisclosureTurn(r)
	})
	c := client(prov)
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Search the docs for adapters.")},
	}
	at.ConverseTurns(t, at.DisclosureAnswer, 3, func() (string, bool) {
		var err error
		if params.Tools, err = conv.ChatTools(ctx); err != nil {
			t.Fatal(err)
		}
		comp, err := c.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		msg := comp.Choices[0].Message
		params.Messages = append(params.Messages, msg.ToParam())
		out := conv.RunChat(ctx, msg)
		if out == nil {
			return msg.Content, true
		}
		params.Messages = append(params.Messages, out...)
		return "", false
	})
	if names := found.Names(); len(names) != 1 || !at.IsRemote(names[0]) {
		t.Errorf("found %v", names)
	}
	// The adapter itself, and another conversation, are not affected.
	if all, err := tools.ChatTools(ctx); err != nil || len(all) < 8 {
		t.Errorf("the adapter's own list has %d tools, %v", len(all), err)
	}
	if other, err := tools.Disclosed(nil).ChatTools(ctx); err != nil || len(other) != 2 {
		t.Errorf("a new conversation is offered %d tools, %v", len(other), err)
	}
}

// The Responses API through a Disclosed view: the search's
// function_call_output names the tool found, and the next request
// offers it.
func TestResponsesDisclosed(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	conv := oa.New(tk, at.DisclosureOption()).Disclosed(nil)

	response := func(id string, output ...any) map[string]any {
		return map[string]any{"id": id, "object": "response", "created_at": 1, "status": "completed", "model": "gpt-test",
			"output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}}
	}
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		var offered []string
		for _, tl := range at.List(r.Body, "tools") {
			offered = append(offered, at.Str(tl, "name"))
		}
		results := map[string]string{}
		for _, in := range at.List(r.Body, "input") {
			if at.Str(in, "type") == "function_call_output" {
				results[at.Str(in, "call_id")] = at.Str(in, "output")
			}
		}
		call, answer, err := at.DisclosureTurn(offered, results)
		if err != nil {
			return nil, err
		}
		if call == nil {
			return response("resp_end", map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": answer, "annotations": []any{}}}}), nil
		}
		return response("resp_"+call.ID, map[string]any{"type": "function_call", "id": "fc_" + call.ID, "call_id": call.ID,
			"name": call.Name, "arguments": call.Args, "status": "completed"}), nil
	})
	c := client(prov)
	params := responses.ResponseNewParams{Model: "gpt-test", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Search the docs for adapters.")}}
	at.ConverseTurns(t, at.DisclosureAnswer, 3, func() (string, bool) {
		var err error
		if params.Tools, err = conv.ResponseTools(ctx); err != nil {
			t.Fatal(err)
		}
		resp, err := c.Responses.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		out := conv.RunResponse(ctx, resp.Output)
		if out == nil {
			return resp.OutputText(), true
		}
		params.PreviousResponseID = openai.String(resp.ID)
		params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: out}
		return "", false
	})
}

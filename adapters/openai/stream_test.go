package openai_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	oa "github.com/llmkit/toolkit/adapters/openai"
)

// The streaming Chat Completions loop, as the package documentation shows
// it: the chunks go into an openai.ChatCompletionAccumulator, and once the
// stream ends its message is run like a non-streamed one. The tool calls'
// arguments arrive in pieces; the results go back under the right ids.
func TestChatStreamLoop(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	tools := oa.New(tk)
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		if r.Body["stream"] != true {
			return nil, fmt.Errorf("not a streamed request")
		}
		_, remote := chatTools(t, r.Body)
		msgs := at.List(r.Body, "messages")
		if at.Str(msgs[len(msgs)-1], "role") == "user" {
			return at.ChatStream(at.ChatCompletion(map[string]any{"role": "assistant", "content": "Looking.", "tool_calls": []any{
				at.FunctionCall("call_1", "get_weather", `{"city":"Oslo"}`),
				at.FunctionCall("call_2", remote, `{"query":"adapters"}`),
			}}, "tool_calls")), nil
		}
		asst := msgs[len(msgs)-3]
		if at.Str(asst, "content") != "Looking." || len(at.List(asst, "tool_calls")) != 2 ||
			at.Str(asst, "tool_calls", 1, "function", "arguments") != `{"query":"adapters"}` {
			return nil, fmt.Errorf("the accumulated assistant turn was not sent back: %s", at.JSON(asst))
		}
		got := map[string]string{}
		for _, m := range msgs[len(msgs)-2:] {
			got[at.Str(m, "tool_call_id")] = at.Str(m, "content")
		}
		if want := map[string]string{"call_1": "Sunny in Oslo", "call_2": "found: adapters"}; !reflect.DeepEqual(got, want) {
			return nil, fmt.Errorf("tool results = %v, want %v", got, want)
		}
		return at.ChatStream(at.ChatCompletion(map[string]any{"role": "assistant", "content": "Sunny; docs found."}, "stop")), nil
	})
	c := client(prov)
	params := openai.ChatCompletionNewParams{Model: "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Oslo? Search the docs.")}}
	at.Converse(t, "Sunny; docs found.", func() (string, bool) {
		var err error
		if params.Tools, err = tools.ChatTools(ctx); err != nil {
			t.Fatal(err)
		}
		stream := c.Chat.Completions.NewStreaming(ctx, params)
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		msg := acc.Choices[0].Message
		params.Messages = append(params.Messages, msg.ToParam())
		out := tools.RunChat(ctx, msg)
		if out == nil {
			return msg.Content, true
		}
		params.Messages = append(params.Messages, out...)
		return "", false
	})
}

// The streaming Responses loop: the response.completed event carries the
// whole response, whose output is run like a non-streamed one.
func TestResponsesStreamLoop(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	tools := oa.New(tk)
	response := func(id string, output ...any) map[string]any {
		return map[string]any{"id": id, "object": "response", "created_at": 1, "status": "completed", "model": "gpt-test",
			"output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}}
	}
	call := func(id, name, args string) map[string]any {
		return map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": id, "name": name, "arguments": args, "status": "completed"}
	}
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		if r.Body["stream"] != true {
			return nil, fmt.Errorf("not a streamed request")
		}
		if at.Get(r.Body, "previous_response_id") == nil {
			return at.ResponseStream(response("resp_1", call("c1", "get_forecast", `{"city":"Lima"}`), call("c2", "get_weather", `{"city":"Oslo"}`))), nil
		}
		outs := map[string]string{}
		for _, in := range at.List(r.Body, "input") {
			outs[at.Str(in, "call_id")] = at.Str(in, "output")
		}
		if outs["c1"] != `{"city":"Lima","high":21}` || outs["c2"] != "Sunny in Oslo" {
			return nil, fmt.Errorf("outputs %v", outs)
		}
		return at.ResponseStream(response("resp_2", map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "done", "annotations": []any{}}}})), nil
	})
	c := client(prov)
	params := responses.ResponseNewParams{Model: "gpt-test", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Forecast?")}}
	at.Converse(t, "done", func() (string, bool) {
		var err error
		if params.Tools, err = tools.ResponseTools(ctx); err != nil {
			t.Fatal(err)
		}
		stream := c.Responses.NewStreaming(ctx, params)
		var done *responses.Response
		for stream.Next() {
			if ev := stream.Current(); ev.Type == "response.completed" {
				r := ev.AsResponseCompleted().Response
				done = &r
			}
		}
		if err := stream.Err(); err != nil || done == nil {
			t.Fatalf("stream: %v, completed: %v", err, done != nil)
		}
		out := tools.RunResponse(ctx, done.Output)
		if out == nil {
			return done.OutputText(), true
		}
		params.PreviousResponseID = openai.String(done.ID)
		params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: out}
		return "", false
	})
}

package openai_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/llmkit/toolkit/adapters/adapter"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	oa "github.com/llmkit/toolkit/adapters/openai"
	"github.com/llmkit/toolkit/model"
)

func client(p *at.Provider) openai.Client {
	return openai.NewClient(option.WithBaseURL(p.URL+"/v1/"), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
}

// chatTools indexes the functions of a Chat Completions request's tools
// by name, checking their type, and finds the remote tool's.
func chatTools(t *testing.T, body map[string]any) (map[string]map[string]any, string) {
	var fns []any
	for _, tl := range at.List(body, "tools") {
		if at.Str(tl, "type") != "function" {
			t.Errorf("tool %s: type is not function", at.JSON(tl))
		}
		fns = append(fns, at.Get(tl, "function"))
	}
	return at.ByName(fns)
}

// The whole Chat Completions loop with the real SDK: the model calls a
// builtin and a remote tool at once, the results go back under the
// right ids, and the model answers.
func TestChatLoop(t *testing.T) {
	tk := at.Toolkit(t)
	tools := oa.New(tk)

	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		if r.Method != "POST" || r.Path != "/v1/chat/completions" {
			return nil, fmt.Errorf("unexpected %s %s", r.Method, r.Path)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer test-key" {
			return nil, fmt.Errorf("Authorization = %q", got)
		}
		names, remote := chatTools(t, r.Body)
		msgs := at.List(r.Body, "messages")
		last := msgs[len(msgs)-1]
		switch at.Str(last, "role") {
		case "user":
			w, ok := names["get_weather"]
			if !ok {
				return nil, fmt.Errorf("no get_weather among %v", names)
			}
			if at.Str(w, "parameters", "type") != "object" || at.Get(w, "parameters", "properties", "city") == nil ||
				at.Get(w, "strict") != true || at.Str(w, "description") != "Current weather for a city." {
				return nil, fmt.Errorf("get_weather definition: %s", at.JSON(w))
			}
			if remote == "" {
				return nil, fmt.Errorf("no remote tool among %v", names)
			}
			return at.ChatCompletion(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
				at.FunctionCall("call_1", "get_weather", `{"city":"Oslo"}`),
				at.FunctionCall("call_2", remote, `{"query":"adapters"}`),
			}}, "tool_calls"), nil
		case "tool":
			asst := msgs[len(msgs)-3]
			if at.Str(asst, "role") != "assistant" || len(at.List(asst, "tool_calls")) != 2 {
				return nil, fmt.Errorf("the assistant turn was not sent back: %s", at.JSON(asst))
			}
			got := map[string]string{}
			for _, m := range msgs[len(msgs)-2:] {
				got[at.Str(m, "tool_call_id")] = at.Str(m, "content")
			}
			want := map[string]string{"call_1": "Sunny in Oslo", "call_2": "found: adapters"}
			if !reflect.DeepEqual(got, want) {
				return nil, fmt.Errorf("tool results = %v, want %v", got, want)
			}
			return at.ChatCompletion(map[string]any{"role": "assistant", "content": "Sunny in Oslo; the docs mention adapters."}, "stop"), nil
		}
		return nil, fmt.Errorf("unexpected last message %s", at.JSON(last))
	})

	chatConverse(t, tools, prov, "Weather in Oslo? And search the docs for adapters.", "Sunny in Oslo; the docs mention adapters.", 2)
}

// The Responses API loop: an image output goes back as an input_image, a
// JSON output as its JSON text, a failing tool and an unknown name as
// text the model reads, each under its call_id.
func TestResponsesLoop(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	var seen []model.Result
	tools := oa.New(tk, adapter.WithOnResult(func(_ context.Context, r model.Result) { seen = append(seen, r) }))

	call := func(id, name, args string) map[string]any {
		return map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": id, "name": name, "arguments": args, "status": "completed"}
	}
	response := func(id string, output ...any) map[string]any {
		return map[string]any{"id": id, "object": "response", "created_at": 1, "status": "completed", "model": "gpt-test",
			"output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}}
	}
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		if r.Path != "/v1/responses" {
			return nil, fmt.Errorf("unexpected path %s", r.Path)
		}
		if at.Get(r.Body, "previous_response_id") == nil {
			var fn map[string]any
			var remote string
			for _, tl := range at.List(r.Body, "tools") {
				if at.Str(tl, "type") != "function" {
					return nil, fmt.Errorf("tool %s", at.JSON(tl))
				}
				if at.Str(tl, "name") == "get_forecast" {
					fn = tl.(map[string]any)
				}
				if strings.HasPrefix(at.Str(tl, "name"), at.RemoteNS+model.Separator) {
					remote = at.Str(tl, "name")
				}
			}
			if fn == nil || at.Get(fn, "strict") != true || at.Get(fn, "parameters", "properties", "city") == nil || remote == "" {
				return nil, fmt.Errorf("tools: %s", at.JSON(at.Get(r.Body, "tools")))
			}
			return response("resp_1",
				call("c_chart", "render_chart", `{}`),
				call("c_fc", "get_forecast", `{"city":"Lima"}`),
				call("c_boom", "explode", `{}`),
				call("c_none", "no_such_tool", `{}`),
				call("c_kb", remote, `{"query":"x"}`),
			), nil
		}
		if got := at.Str(r.Body, "previous_response_id"); got != "resp_1" {
			return nil, fmt.Errorf("previous_response_id = %q", got)
		}
		outs := map[string]any{}
		for _, in := range at.List(r.Body, "input") {
			if at.Str(in, "type") != "function_call_output" {
				return nil, fmt.Errorf("input item %s", at.JSON(in))
			}
			outs[at.Str(in, "call_id")] = at.Get(in, "output")
		}
		if len(outs) != 5 {
			return nil, fmt.Errorf("outputs: %s", at.JSON(outs))
		}
		chart := at.List(outs, "c_chart")
		if len(chart) != 2 || at.Str(chart[0], "type") != "input_text" || at.Str(chart[1], "type") != "input_image" ||
			at.Str(chart[1], "image_url") != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(at.PNG()) {
			return nil, fmt.Errorf("chart output: %s", at.JSON(outs["c_chart"]))
		}
		var fc map[string]any
		if err := json.Unmarshal([]byte(at.Str(outs, "c_fc")), &fc); err != nil || fc["city"] != "Lima" {
			return nil, fmt.Errorf("forecast output %v: %v", outs["c_fc"], err)
		}
		if !strings.Contains(at.Str(outs, "c_boom"), "boom") {
			return nil, fmt.Errorf("explode output %v", outs["c_boom"])
		}
		if !strings.Contains(at.Str(outs, "c_none"), `There is no tool named "no_such_tool"`) {
			return nil, fmt.Errorf("unknown tool output %v", outs["c_none"])
		}
		if at.Str(outs, "c_kb") != "found: x" {
			return nil, fmt.Errorf("remote output %v", outs["c_kb"])
		}
		return response("resp_2", map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "done", "annotations": []any{}}}}), nil
	})

	c := client(prov)
	params := responses.ResponseNewParams{Model: "gpt-test", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Chart it.")}}
	at.Converse(t, "done", func() (string, bool) {
		var err error
		if params.Tools, err = tools.ResponseTools(ctx); err != nil {
			t.Fatal(err)
		}
		resp, err := c.Responses.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		out := tools.RunResponse(ctx, resp.Output)
		if out == nil {
			return resp.OutputText(), true
		}
		params.PreviousResponseID = openai.String(resp.ID)
		params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: out}
		return "", false
	})
	if len(seen) != 5 || !seen[2].IsError || !seen[3].IsError || seen[0].IsError || !seen[0].Binary {
		t.Errorf("results seen: %+v", seen)
	}
}

// In Chat Completions a tool message holds text only: an image output is
// described there and shown in a user message that follows.
func TestChatImage(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	tools := oa.New(tk)
	if _, err := tools.ChatTools(ctx); err != nil {
		t.Fatal(err)
	}
	var msg openai.ChatCompletionMessage
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":null,"tool_calls":[
		{"id":"c1","type":"function","function":{"name":"render_chart","arguments":"{}"}},
		{"id":"c2","type":"function","function":{"name":"get_weather","arguments":"{'city': 'Rome',}"}}]}`), &msg); err != nil {
		t.Fatal(err)
	}
	out := tools.RunChat(ctx, msg)
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("messages: %s", b)
	}
	if at.Str(got[0], "role") != "tool" || at.Str(got[0], "tool_call_id") != "c1" || !strings.Contains(at.Str(got[0], "content"), "image/png") {
		t.Errorf("chart tool message: %s", at.JSON(got[0]))
	}
	// Without WithRepair the malformed arguments are refused in words.
	if at.Str(got[1], "tool_call_id") != "c2" || !strings.Contains(at.Str(got[1], "content"), "not valid JSON") {
		t.Errorf("weather tool message: %s", at.JSON(got[1]))
	}
	user := got[2]
	if at.Str(user, "role") != "user" || at.Str(user, "content", 0, "type") != "text" ||
		!strings.Contains(at.Str(user, "content", 0, "text"), "c1") ||
		!strings.HasPrefix(at.Str(user, "content", 1, "image_url", "url"), "data:image/png;base64,") {
		t.Errorf("user message: %s", at.JSON(user))
	}

	// With repair on, the same arguments are mended.
	tools = oa.New(tk, adapter.WithDispatch(model.WithRepair(true)))
	if _, err := tools.ChatTools(ctx); err != nil {
		t.Fatal(err)
	}
	msg.ToolCalls = msg.ToolCalls[1:]
	out = tools.RunChat(ctx, msg)
	if len(out) != 1 || out[0].OfTool == nil || out[0].OfTool.Content.OfString.Value != "Sunny in Rome" {
		t.Errorf("repaired call: %s", at.JSON(out))
	}
}

// Tools follows the toolkit: a tool added or removed is in, or out of,
// the next ChatTools and ResponseTools without rebuilding anything, and
// the conversions of unchanged tools are reused.
func TestLive(t *testing.T) {
	ctx := context.Background()
	tk := at.Local(t)
	tools := oa.New(tk)
	names := func(ctx context.Context) ([]string, error) {
		chat, err := at.NamesOf(tools.ChatTools, func(c openai.ChatCompletionToolUnionParam) string { return c.OfFunction.Function.Name })(ctx)
		if err != nil {
			return nil, err
		}
		resps, err := at.NamesOf(tools.ResponseTools, func(r responses.ToolUnionParam) string { return r.OfFunction.Name })(ctx)
		if !reflect.DeepEqual(chat, resps) {
			t.Errorf("chat tools %v, responses tools %v", chat, resps)
		}
		return chat, err
	}
	params := func(name string) uintptr {
		ct, _ := tools.ChatTools(ctx)
		for _, c := range ct {
			if c.OfFunction.Function.Name == name {
				return reflect.ValueOf(c.OfFunction.Function.Parameters).Pointer()
			}
		}
		return 0
	}
	p0 := params("get_weather")
	at.Live(t, tk, names)
	if p1 := params("get_weather"); p1 == 0 || p1 != p0 {
		t.Error("the conversion of an unchanged tool was rebuilt")
	}

	// A call to the removed tool is answered in words.
	var msg openai.ChatCompletionMessage
	_ = json.Unmarshal([]byte(`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"explode","arguments":"{}"}}]}`), &msg)
	out := tools.RunChat(ctx, msg)
	if len(out) != 1 || !strings.Contains(out[0].OfTool.Content.OfString.Value, `no tool named "explode"`) {
		t.Errorf("call to a removed tool: %s", at.JSON(out))
	}
}

func BenchmarkChatTools(b *testing.B) {
	at.BenchmarkList(b, func(tk adapter.Toolkit) func(context.Context) ([]openai.ChatCompletionToolUnionParam, error) {
		return oa.New(tk).ChatTools
	})
}

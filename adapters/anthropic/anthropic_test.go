package anthropic_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/llmkit/toolkit/adapters/adapter"
	an "github.com/llmkit/toolkit/adapters/anthropic"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

func client(p *at.Provider) anthropic.Client {
	return anthropic.NewClient(option.WithBaseURL(p.URL), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
}

func message(id, stop string, content ...any) map[string]any {
	return map[string]any{"id": id, "type": "message", "role": "assistant", "model": "claude-test",
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1}}
}

func toolUse(id, name string, input any) map[string]any {
	return map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}
}

// resultsOf returns the tool_result blocks of the last (user) message by
// tool_use_id.
func resultsOf(body map[string]any) (map[string]map[string]any, error) {
	msgs := at.List(body, "messages")
	last := msgs[len(msgs)-1]
	if at.Str(last, "role") != "user" {
		return nil, fmt.Errorf("last message %s", at.JSON(last))
	}
	out := map[string]map[string]any{}
	for _, b := range at.List(last, "content") {
		if at.Str(b, "type") != "tool_result" {
			return nil, fmt.Errorf("block %s", at.JSON(b))
		}
		out[at.Str(b, "tool_use_id")] = b.(map[string]any)
	}
	return out, nil
}

// converse runs the Messages loop with the real SDK from params, the tools
// of every request and the replies to Claude's tool_use blocks coming from
// tools, until Claude answers; the answer must be want (see at.Converse).
func converse(t *testing.T, tools *an.Tools, prov *at.Provider, params anthropic.MessageNewParams, want string) {
	t.Helper()
	converseTurns(t, tools, prov, params, want, 2)
}

// converseTurns is converse for a conversation that must end on turn n
// (see at.ConverseTurns).
func converseTurns(t *testing.T, tools *an.Tools, prov *at.Provider, params anthropic.MessageNewParams, want string, n int) {
	t.Helper()
	ctx := context.Background()
	c := client(prov)
	at.ConverseTurns(t, want, n, func() (string, bool) {
		var err error
		if params.Tools, err = tools.ToolParams(ctx); err != nil {
			t.Fatal(err)
		}
		msg, err := c.Messages.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		params.Messages = append(params.Messages, msg.ToParam())
		reply, ok := tools.Run(ctx, msg)
		if !ok {
			return msg.Content[0].Text, true
		}
		params.Messages = append(params.Messages, reply)
		return "", false
	})
}

// The whole Messages loop with the real SDK: Claude asks for a builtin and
// a remote tool at once, both tool_results come back in one user message
// under the right ids, and Claude answers.
func TestLoop(t *testing.T) {
	tk := at.Toolkit(t)
	tools := an.New(tk)

	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		if r.Method != "POST" || r.Path != "/v1/messages" {
			return nil, fmt.Errorf("unexpected %s %s", r.Method, r.Path)
		}
		// The SDK sends the key as x-api-key or as a bearer token,
		// depending on its version and the credentials configured.
		if r.Header.Get("X-Api-Key") != "test-key" && r.Header.Get("Authorization") != "Bearer test-key" {
			return nil, fmt.Errorf("no API key in %v", r.Header)
		}
		if r.Header.Get("Anthropic-Version") == "" {
			return nil, fmt.Errorf("no anthropic-version header")
		}
		names, remote := at.ByName(at.List(r.Body, "tools"))
		msgs := at.List(r.Body, "messages")
		if len(msgs) == 1 {
			w := names["get_weather"]
			if at.Str(w, "input_schema", "type") != "object" || at.Get(w, "input_schema", "properties", "city") == nil ||
				at.List(w, "input_schema", "required") == nil || at.Str(w, "description") != "Current weather for a city." {
				return nil, fmt.Errorf("get_weather definition: %s", at.JSON(w))
			}
			if remote == "" {
				return nil, fmt.Errorf("no remote tool among %v", names)
			}
			return message("msg_1", "tool_use",
				map[string]any{"type": "text", "text": "Let me look."},
				toolUse("toolu_1", "get_weather", map[string]any{"city": "Oslo"}),
				toolUse("toolu_2", remote, map[string]any{"query": "adapters"})), nil
		}
		asst := msgs[len(msgs)-2]
		if at.Str(asst, "role") != "assistant" || len(at.List(asst, "content")) != 3 {
			return nil, fmt.Errorf("the assistant turn was not sent back: %s", at.JSON(asst))
		}
		res, err := resultsOf(r.Body)
		if err != nil {
			return nil, err
		}
		got := map[string]string{}
		for id, b := range res {
			if b["is_error"] == true {
				return nil, fmt.Errorf("%s is an error: %s", id, at.JSON(b))
			}
			got[id] = at.Str(b, "content", 0, "text")
		}
		want := map[string]string{"toolu_1": "Sunny in Oslo", "toolu_2": "found: adapters"}
		if !reflect.DeepEqual(got, want) {
			return nil, fmt.Errorf("tool results = %v, want %v", got, want)
		}
		return message("msg_2", "end_turn", map[string]any{"type": "text", "text": "Sunny; docs found."}), nil
	})

	converse(t, tools, prov, anthropic.MessageNewParams{
		Model:     "claude-test",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Oslo? Search the docs for adapters."))},
	}, "Sunny; docs found.")
}

// Images become image blocks (also those a remote tool sends beside its
// text), JSON stays JSON text, failures are tool_results with is_error and
// a message.
func TestResultKinds(t *testing.T) {
	tk := at.Toolkit(t)
	tools := an.New(tk)

	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		if len(at.List(r.Body, "messages")) == 1 {
			return message("msg_1", "tool_use",
				toolUse("t_chart", "render_chart", map[string]any{}),
				toolUse("t_fc", "get_forecast", map[string]any{"city": "Lima"}),
				toolUse("t_boom", "explode", map[string]any{}),
				toolUse("t_bad", "get_weather", map[string]any{"city": 7}),
				toolUse("t_none", "nope", nil),
				toolUse("t_snap", "snapshot", map[string]any{})), nil
		}
		res, err := resultsOf(r.Body)
		if err != nil {
			return nil, err
		}
		chart := at.List(res["t_chart"], "content")
		if res["t_chart"]["is_error"] == true || len(chart) != 2 || at.Str(chart[1], "type") != "image" ||
			at.Str(chart[1], "source", "type") != "base64" || at.Str(chart[1], "source", "media_type") != "image/png" ||
			at.Str(chart[1], "source", "data") != base64.StdEncoding.EncodeToString(at.PNG()) {
			return nil, fmt.Errorf("chart result: %s", at.JSON(res["t_chart"]))
		}
		snap := at.List(res["t_snap"], "content")
		if len(snap) != 2 || at.Str(snap[0], "text") != "the chart:" || at.Str(snap[1], "type") != "image" ||
			at.Str(snap[1], "source", "data") != base64.StdEncoding.EncodeToString(at.PNG()) {
			return nil, fmt.Errorf("remote text and image result: %s", at.JSON(res["t_snap"]))
		}
		var fc map[string]any
		if err := json.Unmarshal([]byte(at.Str(res["t_fc"], "content", 0, "text")), &fc); err != nil || fc["high"] != 21.0 {
			return nil, fmt.Errorf("forecast result %s: %v", at.JSON(res["t_fc"]), err)
		}
		for id, want := range map[string]string{"t_boom": "boom", "t_bad": "city", "t_none": `no tool named "nope"`} {
			if res[id]["is_error"] != true || !strings.Contains(at.Str(res[id], "content", 0, "text"), want) {
				return nil, fmt.Errorf("%s result: %s", id, at.JSON(res[id]))
			}
		}
		return message("msg_2", "end_turn", map[string]any{"type": "text", "text": "ok"}), nil
	})
	converse(t, tools, prov, anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("go"))}}, "ok")
}

// The tool list follows the toolkit.
func TestLive(t *testing.T) {
	tk := at.Local(t)
	tools := an.New(tk)
	at.Live(t, tk, at.NamesOf(tools.ToolParams, func(p anthropic.ToolUnionParam) string { return p.OfTool.Name }))
}

func BenchmarkToolParams(b *testing.B) {
	at.BenchmarkList(b, func(tk adapter.Toolkit) func(context.Context) ([]anthropic.ToolUnionParam, error) {
		return an.New(tk).ToolParams
	})
}

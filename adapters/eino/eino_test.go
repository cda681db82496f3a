package eino_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"

	"github.com/llmkit/toolkit/adapters/adapter"
	ei "github.com/llmkit/toolkit/adapters/eino"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// fakeModel is a tool-calling chat model that plays a script: turn
// returns the reply to the conversation so far and the tools bound.
type fakeModel struct {
	mu    sync.Mutex
	tools []*schema.ToolInfo
	turn  func(msgs []*schema.Message, tools []*schema.ToolInfo) (*schema.Message, error)
}

func (m *fakeModel) Generate(_ context.Context, msgs []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	m.mu.Lock()
	tools := m.tools
	m.mu.Unlock()
	return m.turn(msgs, tools)
}

func (m *fakeModel) Stream(ctx context.Context, msgs []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, msgs, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m *fakeModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return &fakeModel{tools: tools, turn: m.turn}, nil
}

func toolCall(id, name, args string) schema.ToolCall {
	return schema.ToolCall{ID: id, Type: "function", Function: schema.FunctionCall{Name: name, Arguments: args}}
}

// A ReAct agent over the toolkit's tools: the model calls a builtin and a
// remote tool at once, Eino runs both through the adapter, and the model
// reads both results under their call ids and answers.
func TestAgentLoop(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	tools := ei.New(tk)

	fm := &fakeModel{turn: func(msgs []*schema.Message, infos []*schema.ToolInfo) (*schema.Message, error) {
		last := msgs[len(msgs)-1]
		if last.Role == schema.User {
			remote := ""
			var weather *schema.ToolInfo
			for _, in := range infos {
				if at.IsRemote(in.Name) {
					remote = in.Name
				}
				if in.Name == "get_weather" {
					weather = in
				}
			}
			if remote == "" || weather == nil {
				return nil, fmt.Errorf("tools bound: %v", infos)
			}
			js, err := weather.ParamsOneOf.ToJSONSchema()
			if err != nil || js == nil || js.Properties == nil {
				return nil, fmt.Errorf("get_weather parameters: %v %v", js, err)
			}
			if _, ok := js.Properties.Get("city"); !ok {
				return nil, fmt.Errorf("get_weather has no city parameter")
			}
			return schema.AssistantMessage("", []schema.ToolCall{
				toolCall("call_1", "get_weather", `{"city":"Oslo"}`),
				toolCall("call_2", remote, `{"query":"adapters"}`),
			}), nil
		}
		got := map[string]string{}
		for _, m := range msgs {
			if m.Role == schema.Tool {
				got[m.ToolCallID] = m.Content
			}
		}
		want := map[string]string{"call_1": "Sunny in Oslo", "call_2": "found: adapters"}
		if !reflect.DeepEqual(got, want) {
			return nil, fmt.Errorf("tool results = %v, want %v", got, want)
		}
		return schema.AssistantMessage("Sunny; docs found.", nil), nil
	}}

	list, err := tools.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: fm,
		ToolsConfig:      compose.ToolsNodeConfig{Tools: list},
		MaxStep:          6,
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := agent.Generate(ctx, []*schema.Message{schema.UserMessage("Weather in Oslo? Search the docs for adapters.")})
	if err != nil {
		t.Fatal(err)
	}
	if out.Content != "Sunny; docs found." {
		t.Fatalf("answer = %q", out.Content)
	}
}

func invoke(t *testing.T, list []tool.BaseTool, name, args string) string {
	t.Helper()
	for _, b := range list {
		info, _ := b.Info(context.Background())
		if info.Name == name {
			s, err := b.(tool.InvokableTool).InvokableRun(context.Background(), args)
			if err != nil {
				t.Fatalf("%s: error %v", name, err)
			}
			return s
		}
	}
	t.Fatalf("no tool %s", name)
	return ""
}

// Failures are text with a nil error; binary output is described; a tool
// kept from an earlier list runs the current item or says it is gone, and
// the list follows the toolkit.
func TestResultsAndLive(t *testing.T) {
	ctx := context.Background()
	tk := at.Local(t)
	tools := ei.New(tk)
	list, err := tools.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s := invoke(t, list, "explode", `{}`); !strings.Contains(s, "boom") {
		t.Errorf("explode = %q", s)
	}
	if s := invoke(t, list, "render_chart", ``); !strings.Contains(s, "image/png") {
		t.Errorf("render_chart = %q", s)
	}
	if s := invoke(t, list, "get_forecast", `{"city":"Lima"}`); s != `{"city":"Lima","high":21}` {
		t.Errorf("get_forecast = %q", s)
	}
	if s := invoke(t, list, "get_weather", `{"city":`); !strings.Contains(s, "not valid JSON") {
		t.Errorf("bad arguments = %q", s)
	}

	// The list follows the toolkit, and a tool kept from the earlier list
	// that is gone says so.
	at.Live(t, tk, at.NamesOf(tools.Infos, func(in *schema.ToolInfo) string { return in.Name }))
	if s := invoke(t, list, "explode", `{}`); !strings.Contains(s, "no longer available") && !strings.Contains(s, "no tool named") {
		t.Errorf("removed tool = %q", s)
	}
}

func BenchmarkTools(b *testing.B) {
	at.BenchmarkList(b, func(tk adapter.Toolkit) func(context.Context) ([]tool.BaseTool, error) {
		return ei.New(tk).Tools
	})
}

// With WithMultimodal the tools are enhanced tools: an image output is an
// image part, and Eino's ToolsNode runs them.
func TestMultimodal(t *testing.T) {
	ctx := context.Background()
	tk := at.Local(t)
	list, err := ei.New(tk, ei.WithMultimodal(true)).Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var chart tool.EnhancedInvokableTool
	for _, b := range list {
		e, ok := b.(tool.EnhancedInvokableTool)
		if !ok {
			t.Fatalf("%T is not an enhanced tool", b)
		}
		if info, _ := e.Info(ctx); info.Name == "render_chart" {
			chart = e
		}
	}
	res, err := chart.InvokableRun(ctx, &schema.ToolArgument{Text: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Parts) != 2 || res.Parts[0].Type != schema.ToolPartTypeText || res.Parts[1].Type != schema.ToolPartTypeImage ||
		res.Parts[1].Image.MIMEType != "image/png" || *res.Parts[1].Image.Base64Data != base64.StdEncoding.EncodeToString(at.PNG()) {
		t.Errorf("result: %s", at.JSON(res))
	}

	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: list})
	if err != nil {
		t.Fatal(err)
	}
	out, err := node.Invoke(ctx, schema.AssistantMessage("", []schema.ToolCall{
		toolCall("c1", "get_weather", `{"city":"Oslo"}`),
		toolCall("c2", "explode", `{}`),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].ToolCallID != "c1" || out[1].ToolCallID != "c2" || !strings.Contains(at.JSON(out[0]), "Sunny in Oslo") ||
		!strings.Contains(at.JSON(out[1]), "boom") {
		t.Errorf("tool messages: %s", at.JSON(out))
	}
}

package eino_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"

	ei "github.com/llmkit/toolkit/adapters/eino"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	"github.com/llmkit/toolkit/tool"
)

// optionsModel is a tool-calling chat model that, like Eino's own, is
// offered the tools of the call's options (model.WithTools) when there
// are any, else those it was bound to.
type optionsModel struct {
	bound []*schema.ToolInfo
	turn  func(msgs []*schema.Message, tools []*schema.ToolInfo) (*schema.Message, error)
}

func (m *optionsModel) Generate(_ context.Context, msgs []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	o := model.GetCommonOptions(&model.Options{Tools: m.bound}, opts...)
	return m.turn(msgs, o.Tools)
}

func (m *optionsModel) Stream(ctx context.Context, msgs []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, msgs, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m *optionsModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return &optionsModel{bound: tools, turn: m.turn}, nil
}

// A ReAct agent built once follows the toolkit when each call carries
// AgentOptions: a tool added after the agent was built is offered to the
// model and runs, and a removed one is no longer offered. Without the
// options the agent keeps the tools it was built with.
func TestAgentFollowsTheToolkit(t *testing.T) {
	ctx := context.Background()
	tk := at.Local(t)
	tools := ei.New(tk)
	offered := func(infos []*schema.ToolInfo) string {
		var names []string
		for _, in := range infos {
			names = append(names, in.Name)
		}
		return strings.Join(names, ",")
	}
	var seen []string
	fm := &optionsModel{turn: func(msgs []*schema.Message, infos []*schema.ToolInfo) (*schema.Message, error) {
		seen = append(seen, offered(infos))
		last := msgs[len(msgs)-1]
		switch {
		case last.Role == schema.User && strings.Contains(offered(infos), "translate"):
			return schema.AssistantMessage("", []schema.ToolCall{toolCall("call_1", "translate", `{"text":"hello"}`)}), nil
		case last.Role == schema.User:
			return schema.AssistantMessage("no translator", nil), nil
		case last.Role == schema.Tool:
			return schema.AssistantMessage("got "+last.Content, nil), nil
		}
		return nil, fmt.Errorf("unexpected message %+v", last)
	}}
	list, err := tools.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{ToolCallingModel: fm, ToolsConfig: compose.ToolsNodeConfig{Tools: list}, MaxStep: 6})
	if err != nil {
		t.Fatal(err)
	}
	ask := []*schema.Message{schema.UserMessage("Translate hello.")}

	if err := tk.AddTool(tool.Must("translate", "Translates text.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return "hola for " + in.Text, nil
	})); err != nil {
		t.Fatal(err)
	}
	if err := tk.RemoveBuiltin("explode"); err != nil {
		t.Fatal(err)
	}

	out, err := agent.Generate(ctx, ask)
	if err != nil || out.Content != "no translator" || seen[0] != "explode,get_forecast,get_weather,render_chart" {
		t.Fatalf("without options: %v, %v, offered %v", out, err, seen)
	}
	seen = nil
	opts, err := tools.AgentOptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out, err = agent.Generate(ctx, ask, opts...)
	if err != nil || out.Content != "got hola for hello" {
		t.Fatalf("with AgentOptions: %v, %v", out, err)
	}
	if want := "get_forecast,get_weather,render_chart,translate"; len(seen) != 2 || seen[0] != want || seen[1] != want {
		t.Errorf("offered %v, want %s on both turns", seen, want)
	}
}

package eino_test

import (
	"context"
	"testing"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"

	ei "github.com/llmkit/toolkit/adapters/eino"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	"github.com/llmkit/toolkit/model"
)

// A ReAct agent over a Disclosed view: the first run offers the search
// tool and the always-offered tool only, and the model's search (run by
// Eino's tools node) finds the remote tool; the next run, with the view's
// AgentOptions taken again, offers it, and its call runs in the toolkit.
func TestAgentDisclosed(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	var found model.Loaded
	conv := ei.New(tk, at.DisclosureOption()).Disclosed(&found)

	fm := &optionsModel{turn: func(msgs []*schema.Message, infos []*schema.ToolInfo) (*schema.Message, error) {
		var offered []string
		for _, in := range infos {
			offered = append(offered, in.Name)
		}
		results := map[string]string{}
		for i := len(msgs) - 1; i >= 0 && msgs[i].Role == schema.Tool; i-- {
			results[msgs[i].ToolCallID] = msgs[i].Content
		}
		call, answer, err := at.DisclosureTurn(offered, results)
		if err != nil {
			t.Error(err)
			return nil, err
		}
		if call == nil {
			return schema.AssistantMessage(answer, nil), nil
		}
		return schema.AssistantMessage("", []schema.ToolCall{toolCall(call.ID, call.Name, call.Args)}), nil
	}}
	list, err := conv.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{ToolCallingModel: fm, ToolsConfig: compose.ToolsNodeConfig{Tools: list}, MaxStep: 6})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []*schema.Message{schema.UserMessage("Search the docs for adapters.")}
	for _, want := range []string{at.FoundAnswer, at.DisclosureAnswer} {
		opts, err := conv.AgentOptions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out, err := agent.Generate(ctx, msgs, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if out.Content != want {
			t.Fatalf("answer = %q, want %q", out.Content, want)
		}
		msgs = append(msgs, out, schema.UserMessage("Go on."))
	}
	if names := found.Names(); len(names) != 1 || !at.IsRemote(names[0]) {
		t.Errorf("found %v", names)
	}
}

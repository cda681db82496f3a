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

	fm := &optionsModel{turn: modelTurn(t, at.DisclosureTurn)}
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

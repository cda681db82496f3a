package eino_test

import (
	"context"
	"testing"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"

	ei "github.com/llmkit/toolkit/adapters/eino"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// A ReAct agent in code mode: the model is offered run_code and
// declare_tools only, reads the declarations of the tools it needs and
// solves a task of four tool calls with one script, run by Eino's tools
// node, in three turns.
func TestAgentCodeMode(t *testing.T) {
	ctx := context.Background()
	tools := ei.New(at.CodeModeToolkit(t), at.CodeModeOption())
	turns := 0
	play := modelTurn(t, at.CodeModeTurn)
	fm := &optionsModel{turn: func(msgs []*schema.Message, infos []*schema.ToolInfo) (*schema.Message, error) {
		turns++
		return play(msgs, infos)
	}}
	list, err := tools.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{ToolCallingModel: fm, ToolsConfig: compose.ToolsNodeConfig{Tools: list}, MaxStep: 8})
	if err != nil {
		t.Fatal(err)
	}
	opts, err := tools.AgentOptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out, err := agent.Generate(ctx, []*schema.Message{schema.UserMessage("Which city is warmest, and how many documents match?")}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if out.Content != at.CodeModeAnswer || turns != 3 {
		t.Fatalf("answer %q after %d turns, want %q after 3", out.Content, turns, at.CodeModeAnswer)
	}
}

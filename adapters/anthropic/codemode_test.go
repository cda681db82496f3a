package anthropic_test

import (
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	an "github.com/llmkit/toolkit/adapters/anthropic"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// Code mode with the real SDK: Claude is offered run_code and
// declare_tools only, reads the declarations of the tools it needs and
// solves a task of four tool calls with one script, in three turns.
func TestCodeMode(t *testing.T) {
	tools := an.New(at.CodeModeToolkit(t), at.CodeModeOption())
	prov := at.NewProvider(t, func(r at.Request) (any, error) { return messagesTurn(r, at.CodeModeTurn) })
	converseTurns(t, tools, prov, anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Which city is warmest, and how many documents match?"))}},
		at.CodeModeAnswer, 3)
}

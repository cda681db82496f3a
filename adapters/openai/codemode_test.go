package openai_test

import (
	"testing"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	oa "github.com/llmkit/toolkit/adapters/openai"
)

// Code mode with the real SDK: the model is offered run_code and
// declare_tools only, reads the declarations of the tools it needs and
// solves a task of four tool calls with one script, in three turns.
func TestChatCodeMode(t *testing.T) {
	tools := oa.New(at.CodeModeToolkit(t), at.CodeModeOption())
	chatTurns(t, tools, at.CodeModeTurn, "Which city is warmest, and how many documents match?", at.CodeModeAnswer, 3)
}

package langchaingo_test

import (
	"testing"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	lc "github.com/llmkit/toolkit/adapters/langchaingo"
)

// Code mode with LangChainGo's OpenAI model: the model is offered
// run_code and declare_tools only, reads the declarations of the tools it
// needs and solves a task of four tool calls with one script, in three
// turns.
func TestCodeMode(t *testing.T) {
	tools := lc.New(at.CodeModeToolkit(t), at.CodeModeOption())
	converseTurns(t, tools, at.CodeModeTurn, "Which city is warmest, and how many documents match?", at.CodeModeAnswer, 3)
}

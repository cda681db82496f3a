package genai_test

import (
	"testing"

	gg "github.com/llmkit/toolkit/adapters/genai"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// Code mode with the real SDK: Gemini is offered run_code and
// declare_tools only, reads the declarations of the tools it needs and
// solves a task of four tool calls with one script, in three turns.
func TestCodeMode(t *testing.T) {
	tools := gg.New(at.CodeModeToolkit(t), at.CodeModeOption())
	prov := gemini(t, func(r at.Request) (any, error) { return generateTurn(r, at.CodeModeTurn) })
	converseTurns(t, tools, prov, "Which city is warmest, and how many documents match?", at.CodeModeAnswer, 3)
}

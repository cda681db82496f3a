package genai_test

import (
	"context"
	"testing"

	"google.golang.org/genai"

	gg "github.com/llmkit/toolkit/adapters/genai"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// Code mode with the real SDK: Gemini is offered run_code and
// declare_tools only, reads the declarations of the tools it needs and
// solves a task of four tool calls with one script, in three turns.
func TestCodeMode(t *testing.T) {
	tools := gg.New(at.CodeModeToolkit(t), at.CodeModeOption())
	prov := gemini(t, func(r at.Request) (any, error) { return generateTurn(r, at.CodeModeTurn) })
	ctx := context.Background()
	cl := client(t, prov)
	contents := []*genai.Content{genai.NewContentFromText("Which city is warmest, and how many documents match?", genai.RoleUser)}
	fns, err := tools.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	at.ConverseTurns(t, at.CodeModeAnswer, 3, func() (string, bool) {
		resp, err := cl.Models.GenerateContent(ctx, modelName, contents, &genai.GenerateContentConfig{Tools: fns})
		if err != nil {
			t.Fatal(err)
		}
		reply, ok := tools.Run(ctx, resp)
		if !ok {
			return resp.Text(), true
		}
		contents = append(contents, resp.Candidates[0].Content, reply)
		return "", false
	})
}

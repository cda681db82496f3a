package langchaingo_test

import (
	"context"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	lc "github.com/llmkit/toolkit/adapters/langchaingo"
)

// Code mode with LangChainGo's OpenAI model: the model is offered
// run_code and declare_tools only, reads the declarations of the tools it
// needs and solves a task of four tool calls with one script, in three
// turns.
func TestCodeMode(t *testing.T) {
	tools := lc.New(at.CodeModeToolkit(t), at.CodeModeOption())
	prov := at.NewProvider(t, func(r at.Request) (any, error) { return at.ChatTurn(r, "/chat/completions", at.CodeModeTurn) })
	llm, err := openai.New(openai.WithBaseURL(prov.URL), openai.WithToken("test-key"), openai.WithModel("gpt-test"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fns, err := tools.LLMTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Which city is warmest, and how many documents match?")}
	at.ConverseTurns(t, at.CodeModeAnswer, 3, func() (string, bool) {
		resp, err := llm.GenerateContent(ctx, msgs, llms.WithTools(fns))
		if err != nil {
			t.Fatal(err)
		}
		choice := resp.Choices[0]
		next := tools.Run(ctx, choice)
		if next == nil {
			return choice.Content, true
		}
		msgs = append(msgs, next...)
		return "", false
	})
}

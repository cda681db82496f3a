package langchaingo_test

import (
	"context"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	lc "github.com/llmkit/toolkit/adapters/langchaingo"
)

// converseTurns runs the GenerateContent loop against a provider that
// plays the scripted model play, from the user's prompt, with the tools
// of every request and the replies coming from tools; the model must
// answer want on turn n (see at.ConverseTurns).
func converseTurns(t *testing.T, tools *lc.Tools, play at.Turn, prompt, want string, n int) {
	t.Helper()
	prov := at.NewProvider(t, func(r at.Request) (any, error) { return at.ChatTurn(r, "/chat/completions", play) })
	converse(t, tools, prov, prompt, want, n)
}

// converse runs the GenerateContent loop with LangChainGo's OpenAI model
// against prov, from the user's prompt, with the tools of every request
// and the replies coming from tools; the model must answer want on turn n
// (see at.ConverseTurns).
func converse(t *testing.T, tools *lc.Tools, prov *at.Provider, prompt, want string, n int) {
	t.Helper()
	llm, err := openai.New(openai.WithBaseURL(prov.URL), openai.WithToken("test-key"), openai.WithModel("gpt-test"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, prompt)}
	at.ConverseTurns(t, want, n, func() (string, bool) {
		fns, err := tools.LLMTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
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

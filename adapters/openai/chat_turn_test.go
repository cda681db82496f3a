package openai_test

import (
	"context"
	"testing"

	"github.com/openai/openai-go/v3"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	oa "github.com/llmkit/toolkit/adapters/openai"
)

// chatTurns runs the Chat Completions loop with the real SDK against a
// provider that plays the scripted model play, from the user's prompt,
// with the tools of every request and the replies coming from tools; the
// model must answer want on turn n (see at.ConverseTurns).
func chatTurns(t *testing.T, tools *oa.Tools, play at.Turn, prompt, want string, n int) {
	t.Helper()
	prov := at.NewProvider(t, func(r at.Request) (any, error) { return at.ChatTurn(r, "/v1/chat/completions", play) })
	chatConverse(t, tools, prov, prompt, want, n)
}

// chatConverse runs the Chat Completions loop with the real SDK against
// prov, from the user's prompt, with the tools of every request and the
// replies coming from tools; the model must answer want on turn n (see
// at.ConverseTurns).
func chatConverse(t *testing.T, tools *oa.Tools, prov *at.Provider, prompt, want string, n int) {
	t.Helper()
	ctx := context.Background()
	c := client(prov)
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
	}
	at.ConverseTurns(t, want, n, func() (string, bool) {
		var err error
		if params.Tools, err = tools.ChatTools(ctx); err != nil {
			t.Fatal(err)
		}
		comp, err := c.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		msg := comp.Choices[0].Message
		params.Messages = append(params.Messages, msg.ToParam())
		out := tools.RunChat(ctx, msg)
		if out == nil {
			return msg.Content, true
		}
		params.Messages = append(params.Messages, out...)
		return "", false
	})
}

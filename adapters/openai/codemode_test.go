package openai_test

import (
	"context"
	"testing"

	"github.com/openai/openai-go/v3"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	oa "github.com/llmkit/toolkit/adapters/openai"
)

// Code mode with the real SDK: the model is offered run_code and
// declare_tools only, reads the declarations of the tools it needs and
// solves a task of four tool calls with one script, in three turns.
func TestChatCodeMode(t *testing.T) {
	ctx := context.Background()
	tools := oa.New(at.CodeModeToolkit(t), at.CodeModeOption())
	prov := at.NewProvider(t, func(r at.Request) (any, error) { return at.ChatTurn(r, "/v1/chat/completions", at.CodeModeTurn) })
	c := client(prov)
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Which city is warmest, and how many documents match?")},
	}
	var err error
	if params.Tools, err = tools.ChatTools(ctx); err != nil {
		t.Fatal(err)
	}
	at.ConverseTurns(t, at.CodeModeAnswer, 3, func() (string, bool) {
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

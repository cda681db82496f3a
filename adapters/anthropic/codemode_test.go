package anthropic_test

import (
	"context"
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
	c := client(prov)
	ctx := context.Background()
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Which city is warmest, and how many documents match?"))}}
	var err error
	if params.Tools, err = tools.ToolParams(ctx); err != nil {
		t.Fatal(err)
	}
	at.ConverseTurns(t, at.CodeModeAnswer, 3, func() (string, bool) {
		msg, err := c.Messages.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		params.Messages = append(params.Messages, msg.ToParam())
		reply, ok := tools.Run(ctx, msg)
		if !ok {
			return msg.Content[0].Text, true
		}
		params.Messages = append(params.Messages, reply)
		return "", false
	})
}

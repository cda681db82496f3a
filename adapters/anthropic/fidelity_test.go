package anthropic_test

import (
	"context"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	an "github.com/llmkit/toolkit/adapters/anthropic"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	"github.com/llmkit/toolkit/model"
)

// What the SDK sends is exactly what model.Encode writes for Anthropic.
func TestFidelity(t *testing.T) {
	ctx := context.Background()
	tk := at.Local(t, at.Trip())
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		return message("msg_1", "end_turn", map[string]any{"type": "text", "text": "ok"}), nil
	})
	tl, err := an.New(tk).ToolParams(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := client(prov)
	if _, err := c.Messages.New(ctx, anthropic.MessageNewParams{Model: "m", MaxTokens: 10, Tools: tl,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}); err != nil {
		t.Fatal(err)
	}
	at.CheckSent(t, tk, model.Anthropic, at.List(prov.Requests()[0].Body, "tools"), at.Name)
}

package anthropic_test

import (
	"context"
	"reflect"
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
	want := at.Expected(t, tk, model.Anthropic)
	sent := at.List(prov.Requests()[0].Body, "tools")
	if len(sent) != len(want) {
		t.Fatalf("%d tools sent, want %d", len(sent), len(want))
	}
	for _, got := range sent {
		if w := want[at.Str(got, "name")]; !reflect.DeepEqual(got, w) {
			t.Errorf("tool sent\n%s\nwant\n%s", at.JSON(got), at.JSON(w))
		}
	}
}

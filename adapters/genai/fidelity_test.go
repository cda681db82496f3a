package genai_test

import (
	"context"
	"testing"

	"google.golang.org/genai"

	gg "github.com/llmkit/toolkit/adapters/genai"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	"github.com/llmkit/toolkit/model"
)

// What the SDK sends is exactly what model.Encode writes for Gemini: the
// adapted schemas survive the trip through genai.Schema, and every
// declaration is within Gemini's schema subset (a type on every node).
func TestFidelity(t *testing.T) {
	ctx := context.Background()
	tk := at.Local(t, at.Trip(), at.Untyped())
	prov := gemini(t, func(r at.Request) (any, error) {
		return candidate(map[string]any{"text": "ok"}), nil
	})
	fns, err := gg.New(tk).Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client(t, prov).Models.GenerateContent(ctx, modelName,
		[]*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}, &genai.GenerateContentConfig{Tools: fns}); err != nil {
		t.Fatal(err)
	}
	at.CheckSent(t, tk, model.Gemini, at.List(prov.Requests()[0].Body, "tools", 0, "functionDeclarations"), at.Name)
}

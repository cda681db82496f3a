package genai_test

import (
	"context"
	"reflect"
	"testing"

	"google.golang.org/genai"

	gg "github.com/llmkit/toolkit/adapters/genai"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	"github.com/llmkit/toolkit/model"
)

// What the SDK sends is exactly what model.Encode writes for Gemini: the
// adapted schemas survive the trip through genai.Schema.
func TestFidelity(t *testing.T) {
	ctx := context.Background()
	tk := at.Local(t, at.Trip())
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
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
	want := at.Expected(t, tk, model.Gemini)
	sent := at.List(prov.Requests()[0].Body, "tools", 0, "functionDeclarations")
	if len(sent) != len(want) {
		t.Fatalf("%d declarations sent, want %d", len(sent), len(want))
	}
	for _, got := range sent {
		if w := want[at.Str(got, "name")]; !reflect.DeepEqual(got, w) {
			t.Errorf("declaration sent\n%s\nwant\n%s", at.JSON(got), at.JSON(w))
		}
	}
}

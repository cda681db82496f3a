package genai_test

import (
	"context"
	"testing"

	"google.golang.org/genai"

	gg "github.com/llmkit/toolkit/adapters/genai"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	"github.com/llmkit/toolkit/model"
)

// A Disclosed view with the real SDK: the first request declares the
// search function (in Gemini's schema subset) and the always-offered
// function only; Gemini searches; the function found is declared in the
// next request, and its call runs in the toolkit.
func TestDisclosed(t *testing.T) {
	tk := at.Toolkit(t)
	var found model.Loaded
	conv := gg.New(tk, at.DisclosureOption()).Disclosed(&found)

	prov := gemini(t, func(r at.Request) (any, error) { return generateTurn(r, at.DisclosureTurn) })

	ctx := context.Background()
	cl := client(t, prov)
	contents := []*genai.Content{genai.NewContentFromText("Search the docs for adapters.", genai.RoleUser)}
	at.ConverseTurns(t, at.DisclosureAnswer, 3, func() (string, bool) {
		fns, err := conv.Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := cl.Models.GenerateContent(ctx, modelName, contents, &genai.GenerateContentConfig{Tools: fns})
		if err != nil {
			t.Fatal(err)
		}
		reply, ok := conv.Run(ctx, resp)
		if !ok {
			return resp.Text(), true
		}
		contents = append(contents, resp.Candidates[0].Content, reply)
		return "", false
	})
	if names := found.Names(); len(names) != 1 || !at.IsRemote(names[0]) {
		t.Errorf("found %v", names)
	}
}

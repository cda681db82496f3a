package genai_test

import (
	"testing"

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
	converseTurns(t, conv, prov, "Search the docs for adapters.", at.DisclosureAnswer, 3)
	if names := found.Names(); len(names) != 1 || !at.IsRemote(names[0]) {
		t.Errorf("found %v", names)
	}
}

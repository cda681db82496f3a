package openai_test

import (
	"context"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	oa "github.com/llmkit/toolkit/adapters/openai"
	"github.com/llmkit/toolkit/model"
)

// A Disclosed view with the real SDK: the first request offers the search
// tool and the always-offered tool only; the model searches; the tool
// found is offered by the next request, and its call runs in the toolkit.
// The adapter's own lists still offer every tool.
func TestChatDisclosed(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	tools := oa.New(tk, at.DisclosureOption())
	var found model.Loaded
	conv := tools.Disclosed(&found)
	chatTurns(t, conv, at.DisclosureTurn, "Search the docs for adapters.", at.DisclosureAnswer, 3)
	if names := found.Names(); len(names) != 1 || !at.IsRemote(names[0]) {
		t.Errorf("found %v", names)
	}
	// The adapter itself, and another conversation, are not affected.
	if all, err := tools.ChatTools(ctx); err != nil || len(all) < 8 {
		t.Errorf("the adapter's own list has %d tools, %v", len(all), err)
	}
	if other, err := tools.Disclosed(nil).ChatTools(ctx); err != nil || len(other) != 2 {
		t.Errorf("a new conversation is offered %d tools, %v", len(other), err)
	}
}

// The Responses API through a Disclosed view: the search's
// function_call_output names the tool found, and the next request
// offers it.
func TestResponsesDisclosed(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	conv := oa.New(tk, at.DisclosureOption()).Disclosed(nil)

	prov := at.NewProvider(t, func(r at.Request) (any, error) { return responsesTurn(r, at.DisclosureTurn) })
	c := client(prov)
	params := responses.ResponseNewParams{Model: "gpt-test", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Search the docs for adapters.")}}
	at.ConverseTurns(t, at.DisclosureAnswer, 3, func() (string, bool) {
		var err error
		if params.Tools, err = conv.ResponseTools(ctx); err != nil {
			t.Fatal(err)
		}
		resp, err := c.Responses.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		out := conv.RunResponse(ctx, resp.Output)
		if out == nil {
			return resp.OutputText(), true
		}
		params.PreviousResponseID = openai.String(resp.ID)
		params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: out}
		return "", false
	})
}

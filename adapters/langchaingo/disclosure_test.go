package langchaingo_test

import (
	"context"
	"testing"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	lc "github.com/llmkit/toolkit/adapters/langchaingo"
	"github.com/llmkit/toolkit/model"
)

// A Disclosed view with LangChainGo's OpenAI model: the first request
// offers the search tool and the always-offered tool only; the model
// searches; the tool found is offered by the next request, and its call
// runs in the toolkit.
func TestDisclosed(t *testing.T) {
	tk := at.Toolkit(t)
	var found model.Loaded
	conv := lc.New(tk, at.DisclosureOption()).Disclosed(&found)
	converseTurns(t, conv, at.DisclosureTurn, "Search the docs for adapters.", at.DisclosureAnswer, 3)
	if names := found.Names(); len(names) != 1 || !at.IsRemote(names[0]) {
		t.Errorf("found %v", names)
	}
	ctx := context.Background()
	// An agent's tools: the search tool's Call loads what it finds.
	var agentFound model.Loaded
	agentTools, err := lc.New(tk, at.DisclosureOption()).Disclosed(&agentFound).AgentTools(ctx)
	if err != nil || len(agentTools) != 2 || agentTools[0].Name() != model.DefaultSearchToolName {
		t.Fatalf("agent tools %v, %v", agentTools, err)
	}
	if _, err := agentTools[0].Call(ctx, at.SearchArgs); err != nil {
		t.Fatal(err)
	}
	if names := agentFound.Names(); len(names) != 1 || !at.IsRemote(names[0]) {
		t.Errorf("the agent's search found %v", names)
	}
}

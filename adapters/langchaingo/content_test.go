package langchaingo_test

import (
	"context"
	"testing"

	"github.com/tmc/langchaingo/llms"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	lc "github.com/llmkit/toolkit/adapters/langchaingo"
)

// A remote tool's text and structured content both reach the model, text
// first, and the JSON once when the text is the JSON.
func TestTextAndStructured(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	tools := lc.New(tk)
	if _, err := tools.LLMTools(ctx); err != nil {
		t.Fatal(err)
	}
	out := tools.Run(ctx, &llms.ContentChoice{ToolCalls: []llms.ToolCall{
		{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: at.RemoteStats, Arguments: "{}"}},
		{ID: "c2", Type: "function", FunctionCall: &llms.FunctionCall{Name: at.RemoteStatsJSON, Arguments: "{}"}},
	}})
	if len(out) != 3 {
		t.Fatalf("messages: %+v", out)
	}
	for i, want := range []string{at.StatsText + "\n" + at.StatsJSON, at.StatsJSON} {
		if got := out[i+1].Parts[0].(llms.ToolCallResponse).Content; got != want {
			t.Errorf("tool message %d = %q, want %q", i, got, want)
		}
	}
	agents, err := tools.AgentTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		if a.Name() == at.RemoteStats {
			if got, err := a.Call(ctx, "{}"); err != nil || got != at.StatsText+"\n"+at.StatsJSON {
				t.Errorf("agent tool: %q, %v", got, err)
			}
		}
	}
}

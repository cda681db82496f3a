package eino_test

import (
	"context"
	"testing"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"

	ei "github.com/llmkit/toolkit/adapters/eino"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// A remote tool's text and structured content both reach the model, text
// first, from an invokable tool and from a multimodal one.
func TestTextAndStructured(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	want := at.StatsText + "\n" + at.StatsJSON
	find := func(tools []tool.BaseTool) tool.BaseTool {
		for _, tl := range tools {
			if info, _ := tl.Info(ctx); info.Name == at.RemoteStats {
				return tl
			}
		}
		t.Fatal("no stats tool")
		return nil
	}
	plain, err := ei.New(tk).Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := find(plain).(tool.InvokableTool).InvokableRun(ctx, "{}"); err != nil || got != want {
		t.Errorf("invokable: %q, %v", got, err)
	}
	multi, err := ei.New(tk, ei.WithMultimodal(true)).Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := find(multi).(tool.EnhancedInvokableTool).InvokableRun(ctx, &schema.ToolArgument{Text: "{}"})
	if err != nil || len(res.Parts) != 2 || res.Parts[0].Text != at.StatsText || res.Parts[1].Text != at.StatsJSON {
		t.Errorf("enhanced: %+v, %v", res, err)
	}
}

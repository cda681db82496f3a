package mcpserver

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/tool"
)

// TestToolAnnotationsOnlyWhenGiven: a tool whose hints are all at their
// defaults is listed without annotations (what it was given), one with a
// hint with them.
func TestToolAnnotationsOnlyWhenGiven(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(namedTool("plain", "builtin"), &hintedTool{testTool: namedTool("careful", "builtin")})})
	cs := f.connect(t, nil)
	res, err := cs.ListTools(context.Background(), nil)
	mustNotErr(t, err)
	got := map[string]*sdk.ToolAnnotations{}
	for _, tl := range res.Tools {
		got[tl.Name] = tl.Annotations
	}
	if a := got["plain"]; a != nil {
		t.Errorf("a tool without hints is listed with annotations %+v", a)
	}
	if a := got["careful"]; a == nil || !a.ReadOnlyHint {
		t.Errorf("a read-only tool is listed with annotations %+v", a)
	}
}

// hintedTool is a read-only tool.
type hintedTool struct{ *testTool }

func (hintedTool) Meta() tool.Meta { return tool.Meta{ReadOnlyHint: true} }

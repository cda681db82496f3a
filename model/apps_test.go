package model

import (
	"context"
	"testing"

	toolkit "github.com/llmkit/toolkit"
)

// appTool is a tool with a `_meta`.
type appTool struct {
	testTool
	meta map[string]any
}

func (t *appTool) MetaData() map[string]any { return t.meta }

// A tool an MCP App reserves for its view (`_meta.ui.visibility` without
// "model") gets no name, definition or search hit a model could use, and
// Filter.Match drops it; a tool visible to both, or without visibility,
// is offered as usual. The toolkit still calls it.
func TestAppOnlyToolsStayAwayFromModels(t *testing.T) {
	ui := func(vis ...any) map[string]any {
		return map[string]any{"ui": map[string]any{"resourceUri": "ui://x/view.html", "visibility": vis}}
	}
	hidden := &appTool{testTool{name: "app_refresh", desc: "refresh the view"}, ui("app")}
	both := &appTool{testTool{name: "app_show", desc: "show the view"}, ui("model", "app")}
	plain := &appTool{testTool{name: "plain", desc: "plain"}, map[string]any{"ui": map[string]any{"resourceUri": "ui://x/view.html"}}}
	tk, err := toolkit.New(toolkit.WithTool(hidden, both, plain))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCatalog(tk)
	ctx := context.Background()
	defs, err := c.Definitions(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.Item.Name)
	}
	if len(names) != 2 || names[0] != "app_show" || names[1] != "plain" {
		t.Errorf("definitions %v, want [app_show plain]", names)
	}
	if _, ok := c.Resolve("app_refresh"); ok {
		t.Error("the app-only tool resolves for a model")
	}
	hits, err := c.Search(ctx, "refresh view", 5, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.Item.Name == "app_refresh" {
			t.Error("search finds the app-only tool")
		}
	}
	if (Filter{}).Match(toolkit.Item{Type: toolkit.ListTypeTools, Name: "app_refresh", Value: hidden}) {
		t.Error("Filter.Match keeps the app-only tool")
	}
	if _, err := tk.Call(ctx, hidden); err != nil {
		t.Errorf("the toolkit refuses the app-only tool: %v", err)
	}
}

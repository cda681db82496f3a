package model

import (
	"context"
	"errors"
	"testing"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
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

// viewResource is a builtin view with a `_meta`; typed, it reads as a
// remote resource does, its contents bringing their own type and `_meta`.
type viewResource struct {
	uri, mime, html string
	meta            map[string]any
	typed           *bridge.Contents
}

func (r *viewResource) URI() string                          { return r.uri }
func (r *viewResource) Name() string                         { return "view" }
func (r *viewResource) Description() string                  { return "" }
func (r *viewResource) Type() string                         { return r.mime }
func (r *viewResource) Read(context.Context) ([]byte, error) { return []byte(r.html), nil }

func (r *viewResource) MetaData() map[string]any { return r.meta }

type typedView struct{ *viewResource }

func (r typedView) ReadTyped(context.Context) (bridge.Contents, error) { return *r.typed, nil }

// AppViewOf reads the view a tool names from the tool's own source, with
// the sandbox metadata of its contents (a remote view's, as read) or of
// the listed resource; a tool naming no view, or a view its source lacks,
// is refused.
func TestAppViewOf(t *testing.T) {
	const uri = "ui://x/view.html"
	view := &viewResource{uri: uri, mime: "text/html;profile=mcp-app", html: "<p>builtin</p>",
		meta: map[string]any{"ui": map[string]any{"prefersBorder": true}}}
	tool := &appTool{testTool{name: "show", desc: "shows"}, map[string]any{"ui": map[string]any{"resourceUri": uri}}}
	plain := &testTool{name: "plain", desc: "plain"}
	lost := &appTool{testTool{name: "lost", desc: "names a view nobody serves"}, map[string]any{"ui": map[string]any{"resourceUri": "ui://x/none.html"}}}
	tk, err := toolkit.New(toolkit.WithTool(tool, plain, lost), toolkit.WithResource(view))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v, err := AppViewOf(ctx, tk, "show")
	if err != nil {
		t.Fatal(err)
	}
	if v.URI != uri || v.Namespace != "builtin" || string(v.HTML) != "<p>builtin</p>" || v.MIMEType != "text/html;profile=mcp-app" || v.UI["prefersBorder"] != true {
		t.Errorf("builtin view: %+v", v)
	}
	if _, err := AppViewOf(ctx, tk, "plain"); !errors.Is(err, ErrNoAppView) || !errors.Is(err, toolkit.ErrNotFound) {
		t.Errorf("a tool without a view: %v", err)
	}
	if _, err := AppViewOf(ctx, tk, "lost"); !errors.Is(err, toolkit.ErrNotFound) {
		t.Errorf("a view its source lacks: %v", err)
	}
	if _, err := AppViewOf(ctx, tk, "nothing"); !errors.Is(err, toolkit.ErrNotFound) {
		t.Errorf("an unknown tool: %v", err)
	}

	// A view read as a remote one: the contents' type and sandbox win.
	csp := map[string]any{"connectDomains": []any{"https://api.example"}}
	typed := typedView{&viewResource{uri: uri, mime: "text/html",
		meta:  map[string]any{"ui": map[string]any{"prefersBorder": true}},
		typed: &bridge.Contents{Data: []byte("<p>remote</p>"), MIMEType: "text/html;profile=mcp-app", Meta: map[string]any{"ui": map[string]any{"csp": csp}}},
	}}
	tk2, err := toolkit.New(toolkit.WithTool(tool), toolkit.WithResource(typed))
	if err != nil {
		t.Fatal(err)
	}
	v, err = AppViewOf(ctx, tk2, "show")
	if err != nil {
		t.Fatal(err)
	}
	if string(v.HTML) != "<p>remote</p>" || v.MIMEType != "text/html;profile=mcp-app" || v.UI["csp"] == nil || v.UI["prefersBorder"] != nil {
		t.Errorf("remote view: %+v", v)
	}
}

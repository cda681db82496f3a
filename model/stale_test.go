package model

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/store"
	"github.com/llmkit/toolkit/tool"
)

// callOnly hides everything of a toolkit but Call, so that a Dispatcher
// over it cannot look items up again and relies on its Resolver alone.
type callOnly struct{ tk *toolkit.Toolkit }

func (c callOnly) Call(ctx context.Context, item any, res ...toolkit.Resource) (toolkit.Resource, error) {
	return c.tk.Call(ctx, item, res...)
}

func versionTool(v string) toolkit.Tool {
	type in struct{}
	return tool.Must("version", "Returns version "+v+".", func(context.Context, in) (string, error) { return v, nil })
}

// TestDispatchReplacedBuiltin is the audit's repro: a builtin removed and
// added again under the same name must be the one that runs, whether the
// dispatcher resolves through a Catalog (which catches up with the
// toolkit's generation) or through a plain Namer (the dispatcher looks the
// item up again by key), and the catalog's definitions must describe it.
func TestDispatchReplacedBuiltin(t *testing.T) {
	ctx := context.Background()
	tk, err := toolkit.New(toolkit.WithTool(versionTool("v1")))
	if err != nil {
		t.Fatal(err)
	}
	cat := NewCatalog(tk)
	defs, err := cat.Definitions(ctx, Filter{})
	if err != nil || len(defs) != 1 || defs[0].Description != "Returns version v1." {
		t.Fatalf("definitions: %+v, %v", defs, err)
	}
	resp, err := tk.List(ctx, toolkit.ListRequest{Type: toolkit.ListTypeTools})
	if err != nil {
		t.Fatal(err)
	}
	namer := NewNamer()
	namer.Names(resp.Items)

	dispatchers := map[string]*Dispatcher{
		"catalog+toolkit": NewDispatcher(tk, cat),
		"catalog+call":    NewDispatcher(callOnly{tk}, cat),
		"namer+toolkit":   NewDispatcher(tk, namer),
	}
	call := ToolCall{ID: "1", Name: "version", Arguments: "{}"}
	for name, d := range dispatchers {
		if r := d.Call(ctx, call); r.Content != "v1" {
			t.Errorf("%s before: %+v", name, r)
		}
	}

	if err := tk.RemoveBuiltin("version"); err != nil {
		t.Fatal(err)
	}
	if err := tk.AddTool(versionTool("v2")); err != nil {
		t.Fatal(err)
	}
	// The catalog follows the toolkit's events: once they are delivered,
	// and with no Definitions in between, dispatch alone must see the new
	// tool.
	tk.WaitEvents()
	for name, d := range dispatchers {
		if r := d.Call(ctx, call); r.IsError || r.Content != "v2" {
			t.Errorf("%s after the replacement: %+v", name, r)
		}
	}
	defs, err = cat.Definitions(ctx, Filter{})
	if err != nil || len(defs) != 1 || defs[0].Name != "version" || defs[0].Description != "Returns version v2." {
		t.Errorf("definitions after the replacement: %+v, %v", defs, err)
	}
	if hits, _ := cat.Search(ctx, "version", 1, Filter{}); len(hits) != 1 || hits[0].Description != "Returns version v2." {
		t.Errorf("search after the replacement: %+v", hits)
	}
	// Repeat the audit's order too: Definitions, then dispatch.
	for name, d := range dispatchers {
		if r := d.Call(ctx, call); r.Content != "v2" {
			t.Errorf("%s after Definitions: %+v", name, r)
		}
	}

	// Removed for good: the namer still knows the name, the toolkit does
	// not; nothing stale runs.
	if err := tk.RemoveBuiltin("version"); err != nil {
		t.Fatal(err)
	}
	tk.WaitEvents()
	for name, d := range dispatchers {
		if r := d.Call(ctx, call); !r.IsError || !errors.Is(r.Err, toolkit.ErrNotFound) {
			t.Errorf("%s after the removal: %+v", name, r)
		}
	}
}

// TestDispatchRedefinedRemoteTool: a remote tool redefined on list_changed
// (new schema, new behaviour) runs as redefined, validated against its new
// schema, and the catalog describes the new schema.
func TestDispatchRedefinedRemoteTool(t *testing.T) {
	d := &delegate{remote: &remote{started: make(chan struct{})}, events: make(chan toolkit.ConnectorEvent, 64)}
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	if err != nil {
		t.Fatal(err)
	}
	runWithRemote(t, tk, d)
	ctx := context.Background()
	lookup := func(out, schema string) *testTool {
		return &testTool{name: "lookup", desc: "Looks up " + out + ".", schema: mustSchema(schema),
			run: func(context.Context, json.RawMessage) (any, error) { return out, nil }}
	}
	d.setTools(t, true, lookup("v1", `{"type":"object","properties":{"q":{"type":"string"}}}`))

	cat := NewCatalog(tk)
	if err := cat.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	dsp := NewDispatcher(callOnly{tk}, cat)
	if r := dsp.Call(ctx, ToolCall{Name: "lookup", Arguments: `{"q":"x"}`}); r.Content != "v1" {
		t.Fatalf("before: %+v", r)
	}

	d.setTools(t, false, lookup("v2", `{"type":"object","properties":{"q":{"type":"integer"}},"required":["q"]}`))
	tk.WaitEvents()
	if r := dsp.Call(ctx, ToolCall{Name: "lookup", Arguments: `{"q":"x"}`}); !r.IsError || !errors.Is(r.Err, toolkit.ErrSchema) {
		t.Errorf("old arguments against the new schema: %+v", r)
	}
	if r := dsp.Call(ctx, ToolCall{Name: "lookup", Arguments: `{"q":1}`}); r.IsError || r.Content != "v2" {
		t.Errorf("after the redefinition: %+v", r)
	}
	defs, err := cat.Definitions(ctx, Filter{})
	if err != nil || len(defs) != 1 || !strings.Contains(string(defs[0].Parameters), `"integer"`) || defs[0].Description != "Looks up v2." {
		t.Errorf("definitions after the redefinition: %+v, %v", defs, err)
	}
}

// storeDelegate serves a store as the user namespace and runs prompts by
// rendering their user message.
type storeDelegate struct {
	dir   string
	store *store.Dir
}

func (d *storeDelegate) OnEvent(toolkit.ConnectorEvent) {}

func (d *storeDelegate) Call(ctx context.Context, p toolkit.Prompt, res ...toolkit.Resource) (toolkit.Resource, error) {
	a, ok := p.(*prompt.Agent)
	if !ok {
		return nil, toolkit.ErrNotImplemented
	}
	req, err := a.Prepare(ctx, res...)
	if err != nil {
		return nil, err
	}
	return resource.Text("reply", req.User)
}

func (d *storeDelegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	if url != toolkit.UserConnectorURI {
		return nil, toolkit.ErrNotImplemented
	}
	s, err := store.Open(d.dir, onEvent)
	d.store = s
	return s, err
}

// TestDispatchEditedStorePrompt: a user-store prompt edited on disk runs
// with its new template.
func TestDispatchEditedStorePrompt(t *testing.T) {
	ctx := context.Background()
	d := &storeDelegate{dir: t.TempDir()}
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	if err != nil {
		t.Fatal(err)
	}
	greet := func(body string) []byte {
		return []byte("---\ntitle: Greet someone\ndescription: Greets someone.\ninput: {type: object, properties: {name: {type: string}}}\n---\n" + body + "\n")
	}
	// Put updates the store's lists and fires its events before it
	// returns; the toolkit re-lists inside the event.
	if err := d.store.Put("greet.md", greet("Hello {{ .name }}")); err != nil {
		t.Fatal(err)
	}
	cat := NewCatalog(tk)
	if err := cat.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	dsp := NewDispatcher(callOnly{tk}, cat)
	call := ToolCall{Name: "greet", Arguments: `{"name":"Ada"}`}
	if r := dsp.Call(ctx, call); r.Content != "Hello Ada" {
		t.Fatalf("before: %+v", r)
	}
	if err := d.store.Put("greet.md", greet("Goodbye {{ .name }}")); err != nil {
		t.Fatal(err)
	}
	tk.WaitEvents()
	if r := dsp.Call(ctx, call); r.Content != "Goodbye Ada" {
		t.Errorf("after the edit: %+v", r)
	}
	if r := NewDispatcher(tk, cat).Call(ctx, call); r.Content != "Goodbye Ada" {
		t.Errorf("after the edit, over the toolkit: %+v", r)
	}
}

// TestCatalogKeepsUnchangedDefinitions: after a change where only some
// values changed, the definitions of the others are reused, and without a
// change nothing is listed.
func TestCatalogKeepsUnchangedDefinitions(t *testing.T) {
	ctx := context.Background()
	l := &feedLister{staticLister: staticLister{items: []toolkit.Item{toolItem("builtin", "a"), toolItem("builtin", "b")}}}
	c := NewCatalog(l)
	if _, err := c.Definitions(ctx, Filter{}); err != nil {
		t.Fatal(err)
	}
	s1, _ := c.refresh(ctx)
	c.Search(ctx, "a", 1, Filter{}) // indexes s1
	added := indexAdds(c)
	calls := l.calls
	if it, ok := c.Resolve("a"); !ok || it.Value != l.items[0].Value || l.calls != calls {
		t.Errorf("Resolve without a change: %v, %v, %d List calls", it, ok, l.calls-calls)
	}

	old := l.items[1].Value
	l.items = []toolkit.Item{l.items[0], toolItem("builtin", "b")}
	l.change()
	it, ok := c.Resolve("b")
	if !ok || it.Value != l.items[1].Value || it.Value == old {
		t.Errorf("Resolve after b was replaced: %v, %v", it, ok)
	}
	s2, _ := c.refresh(ctx)
	c.Search(ctx, "b", 1, Filter{})
	if s2 == s1 || indexAdds(c) != added+1 {
		t.Errorf("a replaced value: the index was given %d documents, want 1 (its own)", indexAdds(c)-added)
	}
	if _, ok := s2.cache.defs[0]; !ok {
		t.Error("the definition of the unchanged item was dropped")
	}
	if _, ok := s2.cache.defs[1]; ok {
		t.Error("the definition of the replaced item was kept")
	}
	if !sameValue(1, 1) || sameValue(1, 2) || sameValue(map[string]int{}, map[string]int{}) || sameValue(nil, 1) {
		t.Error("sameValue")
	}
}

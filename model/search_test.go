package model

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/tool"
)

func searchItems() []toolkit.Item {
	mk := func(ns, name, desc string) toolkit.Item {
		return toolkit.Item{Namespace: ns, Type: toolkit.ListTypeTools, Name: name, Value: &testTool{name: name, desc: desc}}
	}
	return []toolkit.Item{
		mk("builtin", "get_weather", "Current weather conditions for a city."),
		mk("builtin", "get_time", "Current time in a time zone."),
		mk("github", "create_issue", "Open a new issue in a repository."),
		mk("github", "list_issues", "List issues of a repository, filtered by state."),
		mk("github", "searchCode", "Search code across repositories."),
		mk("files", "read_file", "Read a file from disk."),
		mk("files", "delete_file", "Delete a file from disk."),
		{Namespace: "files", Type: toolkit.ListTypeResources, Name: "motd", URI: "file:///etc/motd"},
	}
}

func TestFilter(t *testing.T) {
	yes, no := true, false
	mk := func(ns, name string, m tool.Meta) toolkit.Item {
		return toolkit.Item{Namespace: ns, Type: toolkit.ListTypeTools, Name: name, Value: &testTool{name: name, meta: m}}
	}
	ro := mk("builtin", "read_file", tool.Meta{ReadOnlyHint: true})
	del := mk("files", "delete_file", tool.Meta{DestructiveHint: &yes})
	add := mk("files", "append_line", tool.Meta{DestructiveHint: &no})
	plain := mk("github", "create_issue", tool.Meta{})
	pr := promptItem("user", "summarize")
	res := toolkit.Item{Namespace: "files", Type: toolkit.ListTypeResources, Name: "r"}
	all := []toolkit.Item{ro, del, add, plain, pr, res}
	cases := []struct {
		f    Filter
		want []string
	}{
		{Filter{}, []string{"read_file", "delete_file", "append_line", "create_issue"}},
		{Filter{Prompts: true}, []string{"read_file", "delete_file", "append_line", "create_issue", "summarize"}},
		{Filter{Namespaces: []string{"files"}}, []string{"delete_file", "append_line"}},
		{Filter{Names: []string{"*_file"}}, []string{"read_file", "delete_file"}},
		{Filter{Names: []string{"github.*"}}, []string{"create_issue"}},
		{Filter{Names: []string{"[bad"}}, nil},
		{Filter{Exclude: []string{"delete_*", "files.append_line"}}, []string{"read_file", "create_issue"}},
		{Filter{ReadOnly: true}, []string{"read_file"}},
		{Filter{NonDestructive: true, Prompts: true}, []string{"read_file", "append_line", "summarize"}},
	}
	for _, c := range cases {
		var got []string
		for _, it := range all {
			if c.f.Match(it) {
				got = append(got, it.Name)
			}
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: got %v, want %v", c.f, got, c.want)
		}
	}
}

func TestCatalog(t *testing.T) {
	ctx := context.Background()
	items := searchItems()
	items = append(items, promptItem("user", "summarize"), toolItem("srv", "get_weather"), toolItem("srv", "bad.name"))
	items = append(items, toolkit.Item{Namespace: "srv", Type: toolkit.ListTypeTools, Name: "broken",
		Value: &testTool{name: "broken", schema: mustSchema(`{"type":"string"}`)}})
	l := &staticLister{items: items}
	c := NewCatalog(l, WithStrict(true))

	defs, err := c.Definitions(ctx, Filter{Namespaces: []string{"srv"}})
	if err == nil || !strings.Contains(err.Error(), `"srv.broken"`) {
		t.Errorf("broken schema not reported: %v", err)
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
		if back, ok := c.Resolve(d.Name); !ok || back.Key() != d.Item.Key() {
			t.Errorf("Resolve(%q) = %v", d.Name, back.Key())
		}
	}
	if want := []string{"srv__get_weather", "srv__bad_name_" + hash6("tool:srv.bad.name")}; !reflect.DeepEqual(names, want) {
		t.Errorf("names %v, want %v", names, want)
	}

	// Searching does not rebuild while the item identities stay the same.
	s1, _ := c.refresh(ctx)
	hits, err := c.Search(ctx, "weather in Paris", 2, Filter{})
	if err != nil || len(hits) != 2 || hits[0].Name+hits[1].Name != "srv__get_weatherget_weather" {
		t.Errorf("search: %v, %v", hits, err)
	}
	if s2, _ := c.refresh(ctx); s2 != s1 {
		t.Error("snapshot rebuilt without a change")
	}
	// Prompts only with Filter.Prompts.
	hits, _ = c.Search(ctx, "summarize", 5, Filter{})
	if len(hits) != 0 {
		t.Errorf("prompt without Prompts: %v", hits)
	}
	hits, _ = c.Search(ctx, "summarize", 5, Filter{Prompts: true})
	if len(hits) != 1 || hits[0].Name != "summarize" || hits[0].Description != "prompt summarize" {
		t.Errorf("prompt search: %+v", hits)
	}

	// A change in the set of items rebuilds; old names stay put.
	l.items = append(l.items[:1:1], l.items[2:]...) // get_time removed
	l.items = append(l.items, toolItem("new", "get_time"))
	s3, _ := c.refresh(ctx)
	if s3 == s1 {
		t.Fatal("snapshot not rebuilt after a change")
	}
	if _, ok := c.Resolve("get_time"); ok {
		t.Error("removed tool still resolves")
	}
	if n, _ := c.Namer().Name(toolItem("new", "get_time")); n != "new__get_time" {
		t.Errorf("newcomer took a retired name: %q", n)
	}
	if n, _ := c.Namer().Name(toolItem("srv", "get_weather")); n != "srv__get_weather" {
		t.Errorf("name changed on rebuild: %q", n)
	}
	c.Invalidate()
	if s4, _ := c.refresh(ctx); s4 == s3 {
		t.Error("Invalidate did not force a rebuild")
	}

	// Strict is set only where the schema qualifies.
	l.items = append(l.items, toolkit.Item{Namespace: "builtin", Type: toolkit.ListTypeTools, Name: "add",
		Value: &testTool{name: "add", schema: mustSchema(`{"type":"object","properties":{"a":{"type":"number"}},"required":["a"],"additionalProperties":false}`)}})
	defs, _ = c.Definitions(ctx, Filter{Names: []string{"add", "get_weather"}})
	if len(defs) != 3 || !defs[2].Strict || defs[0].Strict {
		t.Errorf("strict: %+v", defs)
	}
}

func TestNewDefinition(t *testing.T) {
	it := toolkit.Item{Namespace: "builtin", Type: toolkit.ListTypeTools, Name: "t",
		Value: &testTool{name: "t", meta: tool.Meta{Title: "Titled"}}}
	d, err := NewDefinition("t", it)
	if err != nil || d.Description != "Titled" || string(d.Parameters) != `{"type":"object","properties":{}}` {
		t.Errorf("%+v, %v", d, err)
	}
	if _, err := NewDefinition("x", toolkit.Item{Namespace: "a", Name: "x", Value: 42}); !strings.Contains(fmt.Sprint(err), "not a tool") {
		t.Errorf("non-tool: %v", err)
	}
}

// feedLister is a staticLister that publishes changes: change delivers a
// tool-list change to its subscriber, as the toolkit would.
type feedLister struct {
	staticLister
	fn func(toolkit.ConnectorEvent)
}

func (l *feedLister) Subscribe(fn func(toolkit.ConnectorEvent)) func() {
	l.fn = fn
	return func() {}
}

func (l *feedLister) change() { l.fn(toolkit.ToolListChangeEvent()) }

func TestCatalogFollowsChanges(t *testing.T) {
	ctx := context.Background()
	l := &feedLister{staticLister: staticLister{items: searchItems()}}
	c := NewCatalog(l)
	if _, err := c.Definitions(ctx, Filter{}); err != nil {
		t.Fatal(err)
	}
	calls := l.calls
	s1, _ := c.refresh(ctx)
	c.Search(ctx, "file", 3, Filter{})
	if l.calls != calls {
		t.Errorf("List called %d times without a change", l.calls-calls)
	}
	added := indexAdds(c)
	// A change event with the same items: listed, but nothing rebuilt.
	l.change()
	s2, _ := c.refresh(ctx)
	c.Search(ctx, "file", 3, Filter{})
	if l.calls == calls || s2 != s1 || s2.cache != s1.cache || indexAdds(c) != added {
		t.Error("same items after a change event: not listed, or rebuilt")
	}
	// A change with other items: the index follows, without indexing
	// again the items that did not change.
	gone, indexed := l.items[0], c.index.Len()
	l.items = l.items[1:]
	l.change()
	c.Search(ctx, "file", 3, Filter{})
	if s3, _ := c.refresh(ctx); s3 == s1 || c.index.Has(docKey(gone)) || c.index.Len() != indexed-1 || indexAdds(c) != added {
		t.Errorf("a removed item: the index has %d documents (%d added), want %d (%d)", c.index.Len(), indexAdds(c), indexed-1, added)
	}
}

// indexAdds returns how many documents c's index was given since it was
// made.
func indexAdds(c *Catalog) int {
	c.indexMu.Lock()
	defer c.indexMu.Unlock()
	return c.puts
}

// cancelLister records whether its subscription was cancelled.
type cancelLister struct {
	staticLister
	cancelled chan struct{}
}

func (l *cancelLister) Subscribe(func(toolkit.ConnectorEvent)) func() {
	return func() { close(l.cancelled) }
}

// TestCatalogUnsubscribesWhenCollected: a catalog that is dropped ends its
// subscription, so catalogs made per request do not pile up subscribers.
func TestCatalogUnsubscribesWhenCollected(t *testing.T) {
	l := &cancelLister{staticLister: staticLister{items: searchItems()}, cancelled: make(chan struct{})}
	func() {
		c := NewCatalog(l)
		if _, err := c.Definitions(context.Background(), Filter{}); err != nil {
			t.Fatal(err)
		}
	}()
	for range 50 {
		runtime.GC()
		select {
		case <-l.cancelled:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("the subscription of a collected catalog was not cancelled")
}

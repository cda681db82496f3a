package model

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/resource"
)

// defNames returns the model names of the catalog's definitions.
func defNames(t *testing.T, c *Catalog) map[string]bool {
	t.Helper()
	defs, err := c.Definitions(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, d := range defs {
		out[d.Name] = true
	}
	return out
}

// A change made through the toolkit's methods is in the catalog's next
// answer once the method returned, without waiting for any event: here
// every subscriber of the toolkit is held in its first event for the
// whole test, so no event is delivered after the catalog's first query.
func TestCatalogReadYourWrites(t *testing.T) {
	ctx := context.Background()
	tk, err := toolkit.New(toolkit.WithTool(text("first", "1")))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer func() { close(release); tk.WaitEvents() }()
	held := make(chan struct{}, 1)
	defer tk.Subscribe(func(toolkit.ConnectorEvent) {
		select {
		case held <- struct{}{}:
		default:
		}
		<-release
	})()

	c := NewCatalog(tk)
	dsp := NewDispatcher(tk, c)
	if got := defNames(t, c); !got["first"] || len(got) != 1 {
		t.Fatalf("definitions: %v", got)
	}
	for i := range 20 {
		name := fmt.Sprintf("added_%d", i)
		if err := tk.AddTool(text(name, name)); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			<-held
		}
		// Dispatch first: Resolve catches up by itself.
		if r := dsp.Call(ctx, ToolCall{Name: name, Arguments: "{}"}); r.IsError || r.Content != name {
			t.Fatalf("call of %s right after AddTool: %+v", name, r)
		}
		if got := defNames(t, c); !got[name] {
			t.Fatalf("%s not in the definitions right after AddTool: %v", name, got)
		}
		if err := tk.RemoveBuiltin(name); err != nil {
			t.Fatal(err)
		}
		if got := defNames(t, c); got[name] {
			t.Fatalf("%s still in the definitions right after RemoveBuiltin", name)
		}
		hits, _ := c.Search(ctx, name, 5, Filter{})
		for _, h := range hits {
			if h.Name == name {
				t.Fatalf("search finds %s after its removal", name)
			}
		}
	}
}

// Read-your-writes holds for every goroutine, also while other goroutines
// keep the catalog busy refreshing: a writer never gets an answer older
// than its own change.
func TestCatalogReadYourWritesConcurrent(t *testing.T) {
	tk, err := toolkit.New()
	if err != nil {
		t.Fatal(err)
	}
	c := NewCatalog(tk)
	ctx := context.Background()
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := c.Definitions(ctx, Filter{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var writers sync.WaitGroup
	for w := range 3 {
		writers.Go(func() {
			for i := range 50 {
				name := fmt.Sprintf("w%d_%d", w, i)
				if err := tk.AddTool(text(name, name)); err != nil {
					t.Error(err)
					return
				}
				if _, ok := c.Resolve(name); !ok {
					t.Errorf("%s does not resolve right after AddTool", name)
					return
				}
				if err := tk.RemoveBuiltin(name); err != nil {
					t.Error(err)
					return
				}
				defs, err := c.Definitions(ctx, Filter{})
				if err != nil {
					t.Error(err)
					return
				}
				for _, d := range defs {
					if d.Name == name {
						t.Errorf("%s is still defined right after RemoveBuiltin", name)
						return
					}
				}
			}
		})
	}
	writers.Wait()
	close(stop)
	readers.Wait()
}

// A failed listing leaves the catalog marked as behind: the next query
// lists again.
func TestCatalogRetriesFailedListing(t *testing.T) {
	ctx := context.Background()
	l := &failingNotifier{staticLister: staticLister{items: []toolkit.Item{toolItem("builtin", "a")}}}
	c := NewCatalog(l)
	if _, err := c.Definitions(ctx, Filter{}); err != nil {
		t.Fatal(err)
	}
	l.items = append(l.items, toolItem("builtin", "b"))
	l.fail = true
	l.signal()
	if _, err := c.Definitions(ctx, Filter{}); err == nil {
		t.Fatal("no error from a failed listing")
	}
	l.fail = false
	if defs, err := c.Definitions(ctx, Filter{}); err != nil || len(defs) != 2 {
		t.Errorf("after the failure: %d definitions, %v", len(defs), err)
	}
	calls := l.calls
	if _, err := c.Definitions(ctx, Filter{}); err != nil || l.calls != calls {
		t.Errorf("listed again without a change (%d calls), %v", l.calls-calls, err)
	}
}

// failingNotifier is a Notifier whose List can be made to fail.
type failingNotifier struct {
	staticLister
	fail bool
	c    chan<- struct{}
}

func (l *failingNotifier) List(ctx context.Context, req toolkit.ListRequest) (*toolkit.ListResponse, error) {
	if l.fail {
		return nil, fmt.Errorf("%w: listing failed", toolkit.ErrUnavailable)
	}
	return l.staticLister.List(ctx, req)
}

func (l *failingNotifier) Notify(c chan<- struct{}, _ ...toolkit.ConnectorEventKind) func() {
	l.c = c
	return func() {}
}

func (l *failingNotifier) signal() {
	select {
	case l.c <- struct{}{}:
	default:
	}
}

// NameFor gives the model name a tool choice must name, for a key the
// toolkit resolves, and refuses keys that name nothing offered.
func TestCatalogNameFor(t *testing.T) {
	ctx := context.Background()
	d := &delegate{remote: &remote{started: make(chan struct{})}, events: make(chan toolkit.ConnectorEvent, 64)}
	tk, err := toolkit.New(toolkit.WithDelegate(d), toolkit.WithTool(text("search", "builtin")),
		toolkit.WithPrompt(&testPrompt{name: "summarize", title: "Summarize"}),
		toolkit.WithResource(resource.WithURI("file:///r", resource.Must("r", "data"))))
	if err != nil {
		t.Fatal(err)
	}
	runWithRemote(t, tk, d)
	d.setTools(t, true, text("search", "remote"), text("get.page", "page"))
	c := NewCatalog(tk)
	dotted, err := c.NameFor(ctx, "srv.get.page", Filter{})
	if err != nil || !IsModelName(dotted) || dotted == "get.page" {
		t.Fatalf("srv.get.page: %q, %v", dotted, err)
	}
	for key, want := range map[string]string{
		"search":         "search",
		"builtin.search": "search",
		"srv.search":     "srv__search",
	} {
		if got, err := c.NameFor(ctx, key, Filter{}); err != nil || got != want {
			t.Errorf("NameFor(%q) = %q, %v; want %q", key, got, err, want)
		}
	}
	if got, err := c.NameFor(ctx, "summarize", Filter{Prompts: true}); err != nil || got != "summarize" {
		t.Errorf("prompt: %q, %v", got, err)
	}
	for key, f := range map[string]Filter{
		"nothing":          {},
		"summarize":        {}, // prompts are not offered by default
		"file:///r":        {}, // a resource
		"srv.search":       {Namespaces: []string{"builtin"}},
		"builtin.search":   {Exclude: []string{"search"}},
		"srv.nothing":      {},
		"builtin.get.page": {},
	} {
		if got, err := c.NameFor(ctx, key, f); !errors.Is(err, toolkit.ErrNotFound) {
			t.Errorf("NameFor(%q, %+v) = %q, %v; want ErrNotFound", key, f, got, err)
		}
	}

	// A tool added a moment ago is found at once.
	if err := tk.AddTool(text("fresh", "new")); err != nil {
		t.Fatal(err)
	}
	if got, err := c.NameFor(ctx, "fresh", Filter{}); err != nil || got != "fresh" {
		t.Errorf("fresh tool: %q, %v", got, err)
	}

	// Over a Lister without LookupItem, keys and bare names are matched in
	// List order.
	sc := NewCatalog(&staticLister{items: []toolkit.Item{toolItem("a", "x"), toolItem("b", "x"), promptItem("b", "p")}})
	for key, want := range map[string]string{"x": "x", "a.x": "x", "b.x": "b__x"} {
		if got, err := sc.NameFor(ctx, key, Filter{Prompts: true}); err != nil || got != want {
			t.Errorf("static NameFor(%q) = %q, %v; want %q", key, got, err, want)
		}
	}
	if _, err := sc.NameFor(ctx, "y", Filter{}); !errors.Is(err, toolkit.ErrNotFound) {
		t.Errorf("static unknown: %v", err)
	}
}

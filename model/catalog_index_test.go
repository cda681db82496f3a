package model

import (
	"context"
	"fmt"
	"github.com/llmkit/toolkit/search"
	"slices"
	"testing"

	toolkit "github.com/llmkit/toolkit"
)

// copyValue returns it with a new value (a copy of its tool): the same
// identity, redefined.
func copyValue(it toolkit.Item) toolkit.Item {
	t := *it.Value.(*testTool)
	it.Value = &t
	return it
}

// hitNames returns the names of every item c finds for query.
func hitNames(t *testing.T, c *Catalog, query string) []string {
	t.Helper()
	defs, err := c.Search(context.Background(), query, 1000, Filter{Prompts: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range defs {
		out = append(out, d.Item.Key())
	}
	slices.Sort(out)
	return out
}

// TestCatalogIndexFollowsSources checks that a catalog's index, brought
// up to date change by change, finds what an index made afresh finds:
// a source's tools replaced, redefined, removed, a source gone, a new
// one, a source whose items come apart in the listing.
func TestCatalogIndexFollowsSources(t *testing.T) {
	base := searchItems()
	l := &feedLister{staticLister: staticLister{items: slices.Clone(base)}}
	c := NewCatalog(l)
	queries := []string{"file", "weather", "delete a file", "time", "issue", "send"}
	check := func(step string) {
		t.Helper()
		fresh := NewCatalog(&staticLister{items: l.items})
		for _, q := range queries {
			if got, want := hitNames(t, c, q), hitNames(t, fresh, q); !slices.Equal(got, want) {
				t.Errorf("%s: %q finds %v, want %v", step, q, got, want)
			}
		}
	}
	check("first")
	steps := []struct {
		name   string
		change func([]toolkit.Item) []toolkit.Item
	}{
		{"a redefined tool", func(items []toolkit.Item) []toolkit.Item {
			items[0] = copyValue(items[0])
			items[0].Value.(*testTool).desc = "Tells the temperature outside."
			return items
		}},
		{"a removed tool", func(items []toolkit.Item) []toolkit.Item { return items[1:] }},
		{"a new source", func(items []toolkit.Item) []toolkit.Item {
			it := toolItem("files2", "delete_file")
			it.Value.(*testTool).desc = "Delete a file, for good."
			return append(items, it)
		}},
		{"a source split in the listing", func(items []toolkit.Item) []toolkit.Item {
			it := toolItem(items[0].Namespace, "send_weather")
			it.Value.(*testTool).desc = "Send the weather report."
			return append(items, it)
		}},
		{"a source gone", func(items []toolkit.Item) []toolkit.Item {
			ns := items[0].Namespace
			return slices.DeleteFunc(items, func(it toolkit.Item) bool { return it.Namespace == ns })
		}},
		{"everything back", func([]toolkit.Item) []toolkit.Item { return slices.Clone(base) }},
	}
	for _, s := range steps {
		l.items = s.change(slices.Clone(l.items))
		l.change()
		check(s.name)
	}
}

// BenchmarkCatalogIndexChange measures how a catalog's index follows one
// source's change in a catalogue of 10,290 real tools (the corpus copied
// 30 times): n tools of one server redefined, for n of 1, 10 and 100
// (its whole list of 27 is "server"), then a Search (index-only: the
// index's update alone, after the catalog has listed). "rebuild" indexes
// the whole catalogue again, as a catalog did on every change.
//
//	go test -run '^$' -bench CatalogIndexChange -benchmem ./model/
func BenchmarkCatalogIndexChange(b *testing.B) {
	ctx := context.Background()
	var items []toolkit.Item
	for c := range 30 {
		for _, it := range loadCorpus(b) {
			it.Namespace = fmt.Sprintf("%s-%d", it.Namespace, c)
			items = append(items, it)
		}
	}
	// The sources, in listing order, and their sizes.
	var first []int
	for i, it := range items {
		if i == 0 || it.Namespace != items[i-1].Namespace {
			first = append(first, i)
		}
	}
	first = append(first, len(items))
	redefine := func(n int) func() {
		// n tools from the start of consecutive sources, as if those
		// servers had re-listed.
		return func() {
			for i, s := 0, 0; i < n && s+1 < len(first); s++ {
				for p := first[s]; p < first[s+1] && i < n; p++ {
					items[p] = copyValue(items[p])
					i++
				}
			}
		}
	}
	l := &feedLister{staticLister: staticLister{items: items}}
	c := NewCatalog(l)
	if _, err := c.Search(ctx, "warm up", 10, Filter{}); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 10, 100, 1000} {
		change := redefine(n)
		b.Run(fmt.Sprintf("changed-%d-of-%d", n, len(items)), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				change()
				l.change()
				s, err := c.refresh(ctx)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				c.syncIndex(s)
			}
		})
	}
	b.Run(fmt.Sprintf("rebuild-%d", len(items)), func(b *testing.B) {
		for b.Loop() {
			x := search.NewToolIndex()
			docs := make([]search.Doc, len(items))
			for i, it := range items {
				docs[i] = search.DocOf(docKey(it), it)
			}
			if err := x.Put(ctx, docs...); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestCatalogIndexConcurrent searches a catalog from several goroutines
// while its toolkit changes (for the race detector), then checks that the
// index agrees with the toolkit's final tools.
func TestCatalogIndexConcurrent(t *testing.T) {
	ctx := context.Background()
	tk, err := toolkit.New()
	if err != nil {
		t.Fatal(err)
	}
	c := NewCatalog(tk)
	mk := func(i int) toolkit.Tool {
		return &testTool{name: fmt.Sprintf("fetch_page_%d", i), desc: "Fetch a web page."}
	}
	done := make(chan struct{})
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				if _, err := c.Search(ctx, "fetch a page", 5, Filter{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 40 {
		if err := tk.AddTool(mk(i)); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if err := tk.RemoveBuiltin(mk(i).Name()); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	defs, err := c.Search(ctx, "fetch a page", 100, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 26 {
		t.Errorf("found %d tools, want the 26 left", len(defs))
	}
}

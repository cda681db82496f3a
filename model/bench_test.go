package model

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/llmkit/toolkit/search"
	"slices"
	"strings"
	"testing"

	toolkit "github.com/llmkit/toolkit"
)

var (
	benchVerbs = []string{"get", "list", "create", "update", "delete", "search", "read", "write", "send", "sync", "export", "import"}
	benchNouns = []string{"issue", "repo", "file", "user", "invoice", "calendar", "event", "message", "ticket", "order", "weather", "report",
		"image", "document", "contact", "task", "project", "comment", "label", "branch"}
	benchWords = []string{"quickly", "remote", "account", "project", "team", "archive", "draft", "status", "history", "summary",
		"region", "billing", "customer", "workspace", "channel", "metadata", "permission", "timestamp", "attachment", "queue"}
)

// benchItems makes n tools with realistic names, descriptions and schemas.
func benchItems(n int) []toolkit.Item {
	items := make([]toolkit.Item, n)
	schema := mustSchema(`{"type":"object","properties":{"id":{"type":"string","description":"Identifier"},"limit":{"type":"integer","minimum":1},"filter":{"type":["string","null"]},"tags":{"type":"array","items":{"type":"string"}}},"required":["id"],"additionalProperties":false}`)
	for i := range items {
		v, no := benchVerbs[i%len(benchVerbs)], benchNouns[(i/len(benchVerbs))%len(benchNouns)]
		ns := fmt.Sprintf("server%d", i/(len(benchVerbs)*len(benchNouns)))
		name := v + "_" + no
		desc := fmt.Sprintf("%s a %s in the %s %s with %s and %s.", strings.ToUpper(v[:1])+v[1:], no,
			benchWords[i%len(benchWords)], benchWords[(i/3)%len(benchWords)], benchWords[(i/7)%len(benchWords)], benchWords[(i/11)%len(benchWords)])
		items[i] = toolkit.Item{Namespace: ns, Type: toolkit.ListTypeTools, Name: name,
			Value: &testTool{name: name, desc: desc, schema: schema}}
	}
	return items
}

// BenchmarkDefinitions1000 builds model definitions for 1,000 tools.
//
//	go test -run XXX -bench Definitions1000 -benchtime 200ms ./model/
func BenchmarkDefinitions1000(b *testing.B) {
	items := benchItems(1000)
	b.Run("baseline-marshal-schemas", func(b *testing.B) {
		for b.Loop() {
			for _, it := range items {
				s, _ := it.Value.(toolkit.Tool).InputSchema()
				if _, err := json.Marshal(s); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("name+define", func(b *testing.B) {
		for b.Loop() {
			names := NewNamer().Names(items)
			for i, it := range items {
				if _, err := NewDefinition(names[i], it); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("catalog-cached", func(b *testing.B) {
		c := NewCatalog(&staticLister{items: items})
		ctx := context.Background()
		c.Definitions(ctx, Filter{}) // build the snapshot and the cache
		for b.Loop() {
			if defs, err := c.Definitions(ctx, Filter{}); err != nil || len(defs) != 1000 {
				b.Fatal(len(defs), err)
			}
		}
	})
	defs, err := NewCatalog(&staticLister{items: items}).Definitions(context.Background(), Filter{})
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []Format{OpenAIChat, Anthropic, Gemini} {
		b.Run("encode-"+string(f), func(b *testing.B) {
			for b.Loop() {
				if _, err := Encode(f, defs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// linearSearch is the baseline: rank items by how many query words their
// lower-cased name and description contain.
func linearSearch(items []toolkit.Item, query string, k int) []toolkit.Item {
	words := strings.Fields(strings.ToLower(query))
	type hit struct {
		i, n int
	}
	var hits []hit
	for i, it := range items {
		text := strings.ToLower(it.Name + " " + it.Description())
		n := 0
		for _, w := range words {
			if strings.Contains(text, w) {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, hit{i, n})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return b.n - a.n })
	out := make([]toolkit.Item, 0, k)
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, items[h.i])
	}
	return out
}

// BenchmarkSearch10k ranks 10,000 tools for a user message.
//
//	go test -run XXX -bench Search10k -benchtime 200ms ./model/
func BenchmarkSearch10k(b *testing.B) {
	items := benchItems(10000)
	const query = "please search the customer invoice history for the billing team"
	b.Run("baseline-linear-substring", func(b *testing.B) {
		for b.Loop() {
			if len(linearSearch(items, query, 10)) != 10 {
				b.Fatal("no hits")
			}
		}
	})
	x := search.NewIndex(items)
	b.Run("bm25-index", func(b *testing.B) {
		for b.Loop() {
			if len(x.Search(query, 10, nil)) != 10 {
				b.Fatal("no hits")
			}
		}
	})
	b.Run("bm25-index-filtered", func(b *testing.B) {
		f := Filter{Names: []string{"*_invoice", "*_report"}}
		for b.Loop() {
			if len(x.Search(query, 10, f.Match)) == 0 {
				b.Fatal("no hits")
			}
		}
	})
	b.Run("catalog-search", func(b *testing.B) {
		c := NewCatalog(&staticLister{items: items})
		ctx := context.Background()
		c.Search(ctx, query, 10, Filter{}) // build the snapshot and the index
		for b.Loop() {
			if defs, err := c.Search(ctx, query, 10, Filter{}); err != nil || len(defs) != 10 {
				b.Fatal(len(defs), err)
			}
		}
	})
	b.Run("index-build", func(b *testing.B) {
		for b.Loop() {
			search.NewIndex(items)
		}
	})
}

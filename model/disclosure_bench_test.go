package model

import (
	"context"
	"fmt"
	"github.com/llmkit/toolkit/search"
	"testing"

	toolkit "github.com/llmkit/toolkit"
)

// corpusDocs returns the corpus's tools copied under n server names each
// (copy i of server s is namespace "s-i"), as search documents.
func corpusDocs(tb testing.TB, copies int) []search.Doc {
	items := loadCorpus(tb)
	docs := make([]search.Doc, 0, len(items)*copies)
	for c := range copies {
		for _, it := range items {
			it.Namespace = fmt.Sprintf("%s-%d", it.Namespace, c)
			docs = append(docs, search.DocOf(it.Key(), it))
		}
	}
	return docs
}

// BenchmarkToolSearch measures search_tools's index at 10,000 tools: a
// search (the real corpus copied 30 times, 10,290 tools, queried with the
// labelled tasks in turn; and 10,000 synthetic tools whose words are far
// more common than real ones'), and the update that follows one server's
// list change (its 27 tools replaced) against building the index again.
//
//	go test -run '^$' -bench ToolSearch -benchmem ./model/
func BenchmarkToolSearch(b *testing.B) {
	ctx := context.Background()
	docs := corpusDocs(b, 30)
	tasks := loadTasks(b)
	x := search.NewToolIndex()
	if err := x.Put(ctx, docs...); err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("search-real-%d", len(docs)), func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := x.Search(ctx, tasks[i%len(tasks)].Task, 10, nil); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run(fmt.Sprintf("search-real-%d-keep", len(docs)), func(b *testing.B) {
		i := 0
		keep := func(key string) bool { return len(key)%2 == 0 } // a per-client filter's cost
		for b.Loop() {
			x.Search(ctx, tasks[i%len(tasks)].Task, 10, keep)
			i++
		}
	})
	synthetic := search.NewToolIndex()
	for _, it := range benchItems(10000) {
		synthetic.Put(ctx, search.DocOf(it.Key(), it))
	}
	b.Run("search-synthetic-10000", func(b *testing.B) {
		for b.Loop() {
			if hits, _ := synthetic.Search(ctx, "please search the customer invoice history for the billing team", 10, nil); len(hits) != 10 {
				b.Fatal(len(hits))
			}
		}
	})
	// One server's list change: mongodb-7's 27 tools are replaced.
	var server []search.Doc
	var keys []string
	for _, d := range docs {
		if d.Namespace == "mongodb-7" {
			server = append(server, d)
			keys = append(keys, d.Key)
		}
	}
	b.Run(fmt.Sprintf("update-one-server-%d-tools", len(server)), func(b *testing.B) {
		for b.Loop() {
			x.Delete(keys...)
			if err := x.Put(ctx, server...); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(fmt.Sprintf("baseline-rebuild-%d", len(docs)), func(b *testing.B) {
		for b.Loop() {
			y := search.NewToolIndex()
			y.Put(ctx, docs...)
		}
	})
}

// toolkitItems keeps the compiler honest about the import in files that
// only benchmark.
var _ = toolkit.ListTypeTools

package model

import (
	"context"
	"fmt"
	"testing"

	toolkit "github.com/llmkit/toolkit"
)

// corpusIndex indexes the corpus as a server face's search_tools does:
// one document per tool, keyed namespace.name.
func corpusIndex(t testing.TB, items []toolkit.Item) *ToolIndex {
	t.Helper()
	x := NewToolIndex()
	docs := make([]SearchDoc, len(items))
	for i, it := range items {
		docs[i] = SearchDocOf(it.Key(), it)
	}
	if err := x.Put(context.Background(), docs...); err != nil {
		t.Fatal(err)
	}
	return x
}

// TestDisclosureFigures measures how well tool search finds the tools of
// the labelled tasks (testdata/disclosure): recall@1, recall@5 and MRR
// over all tasks, and apart over the even-numbered tasks (the only ones
// looked at while the ranking was tuned) and the odd-numbered ones (held
// out). It prints every task whose tool is not in the first five, and
// holds the figures reached.
//
//	go test -run TestDisclosureFigures -v ./model/
func TestDisclosureFigures(t *testing.T) {
	items := loadCorpus(t)
	tasks := loadTasks(t)
	if len(items) < 300 || len(tasks) < 150 {
		t.Fatalf("%d tools and %d tasks: the corpus is too small", len(items), len(tasks))
	}
	x := corpusIndex(t, items)
	search := func(q string, k int) []string {
		hits, err := x.Search(context.Background(), q, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		return keysOf(hits)
	}
	var even, odd []corpusTask
	for i, tk := range tasks {
		if i%2 == 0 {
			even = append(even, tk)
		} else {
			odd = append(odd, tk)
		}
	}
	all := evaluate(tasks, search)
	fmt.Printf("Finding: %d tools of %d servers, %d tasks\n", len(items), countNamespaces(items), len(tasks))
	fmt.Printf("  all   %v\n", all)
	fmt.Printf("  tuned %v\n", evaluate(even, search))
	fmt.Printf("  held  %v\n", evaluate(odd, search))
	fmt.Printf("Tasks whose tool is not in the first five (%d):\n", len(all.misses))
	for _, m := range all.misses {
		fmt.Printf("  %s\n", m)
	}
	n := float64(all.tasks)
	if r1, r5, mrr := float64(all.at1)/n, float64(all.at5)/n, all.rr/n; r5 < 0.95 || r1 < 0.70 || mrr < 0.80 {
		t.Errorf("recall@1 %.3f (want >= 0.70), recall@5 %.3f (want >= 0.95), MRR %.3f (want >= 0.80)", r1, r5, mrr)
	}
}

func countNamespaces(items []toolkit.Item) int {
	ns := map[string]bool{}
	for _, it := range items {
		ns[it.Namespace] = true
	}
	return len(ns)
}

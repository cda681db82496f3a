package model

import (
	"context"
	"github.com/llmkit/toolkit/search"

	toolkit "github.com/llmkit/toolkit"
)

// docKey is the key of an item's document in a catalog's index: its
// identity (kind, namespace and name), which no two items of one listing
// share.
func docKey(it toolkit.Item) string {
	return string(it.Type) + "\x00" + it.Namespace + "\x00" + it.Name
}

// syncIndex returns the catalog's keyword index, brought up to date with s
// when s is later than the snapshot it holds: the documents of the items
// that are new in s, or whose value changed, are put again, those of the
// items s no longer has are deleted, and nothing else is touched, so a
// change costs in proportion to what changed (and a comparison per item).
// The first call indexes every item of s.
func (c *Catalog) syncIndex(s *snapshot) *search.ToolIndex {
	c.indexMu.Lock()
	defer c.indexMu.Unlock()
	if c.index == nil {
		c.index, c.indexed, c.puts = search.NewToolIndex(), nil, 0
	}
	if c.indexed != nil && c.indexed.gen >= s.gen {
		return c.index
	}
	put, del := indexChanges(c.indexed, s)
	c.index.Delete(del...)
	// Without an embedder, Put fails never.
	_ = c.index.Put(context.Background(), put...)
	c.indexed, c.puts = s, c.puts+len(put)
	return c.index
}

// source is the items of one kind and namespace in a listing: the unit a
// toolkit changes (a connector re-lists its tools, the store its
// prompts).
type source struct {
	typ toolkit.ListType
	ns  string
}

// span is a run of positions [lo, hi) of one source's items in a listing.
type span struct{ lo, hi int }

// run is a span of one source.
type run struct {
	src source
	span
}

// runs returns the runs of a listing: its items cut where the source
// changes (one run per source, in a toolkit's listing).
func runs(items []toolkit.Item) []run {
	var out []run
	for lo := 0; lo < len(items); {
		src := source{items[lo].Type, items[lo].Namespace}
		hi := lo + 1
		for hi < len(items) && items[hi].Type == src.typ && items[hi].Namespace == src.ns {
			hi++
		}
		out = append(out, run{src, span{lo, hi}})
		lo = hi
	}
	return out
}

// sources groups runs by source.
func sources(rs []run) map[source][]span {
	out := make(map[source][]span, len(rs))
	for _, r := range rs {
		out[r.src] = append(out[r.src], r.span)
	}
	return out
}

// positions returns the positions spans cover, in order.
func positions(spans []span) []int {
	var out []int
	for _, s := range spans {
		for i := s.lo; i < s.hi; i++ {
			out = append(out, i)
		}
	}
	return out
}

// indexChanges returns the documents to put and the keys to delete to
// take an index of from's items to to's (from nil: every item of to). A
// source whose items are the same values in the same order costs a
// comparison per item; only the items of a changed source are looked up
// one by one.
func indexChanges(from, to *snapshot) (put []search.Doc, del []string) {
	if from == nil {
		for _, it := range to.items {
			if it.Type != toolkit.ListTypeResources {
				put = append(put, search.DocOf(docKey(it), it))
			}
		}
		return put, nil
	}
	fr, tr := from.sourceRuns(), to.sourceRuns()
	if len(fr) == len(tr) {
		// The usual case: the same sources in the same order, most of
		// them unchanged; no map is needed to pair them.
		same := true
		for i := range fr {
			if fr[i].src != tr[i].src {
				same = false
				break
			}
		}
		if same {
			for i := range tr {
				if !sameSource(from.items, fr[i].span, to.items, tr[i].span) {
					put, del = sourceChanges(from, []span{fr[i].span}, to, []span{tr[i].span}, tr[i].src, put, del)
				}
			}
			return put, del
		}
	}
	before := sources(fr)
	for src, now := range sources(tr) {
		was := before[src]
		delete(before, src)
		if len(was) == 1 && len(now) == 1 && sameSource(from.items, was[0], to.items, now[0]) {
			continue
		}
		put, del = sourceChanges(from, was, to, now, src, put, del)
	}
	for _, was := range before {
		for _, i := range positions(was) {
			del = append(del, docKey(from.items[i]))
		}
	}
	return put, del
}

// sourceChanges adds to put and del the changes of one source, whose
// items are at was in from and at now in to.
func sourceChanges(from *snapshot, was []span, to *snapshot, now []span, src source, put []search.Doc, del []string) ([]search.Doc, []string) {
	old := make(map[string]any)
	for _, i := range positions(was) {
		old[from.items[i].Name] = from.items[i].Value
	}
	for _, i := range positions(now) {
		it := to.items[i]
		v, ok := old[it.Name]
		delete(old, it.Name)
		if !ok || !sameValue(v, it.Value) {
			put = append(put, search.DocOf(docKey(it), it))
		}
	}
	for name := range old {
		del = append(del, docKey(toolkit.Item{Type: src.typ, Namespace: src.ns, Name: name}))
	}
	return put, del
}

// sameSource reports whether the items of a in the span sa are those of b
// in sb: the same names and values in the same order.
func sameSource(a []toolkit.Item, sa span, b []toolkit.Item, sb span) bool {
	x, y := a[sa.lo:sa.hi], b[sb.lo:sb.hi]
	if len(x) != len(y) {
		return false
	}
	for j := range x {
		if x[j].Name != y[j].Name || !sameValue(x[j].Value, y[j].Value) {
			return false
		}
	}
	return true
}

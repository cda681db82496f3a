package model

import (
	"container/heap"
	"math"
	"strings"
	"sync"
	"unicode"

	toolkit "github.com/llmkit/toolkit"
)

// BM25 parameters and the weight of a name's words against a
// description's.
const (
	bm25K1     = 1.2
	bm25B      = 0.75
	nameWeight = 3
)

// Index is a keyword index (Okapi BM25) over the names and descriptions of
// toolkit items. It is immutable once built and safe for concurrent use;
// build it once per set of items and query it many times.
//
// Text is split into words on anything that is not a letter or digit and
// on camelCase boundaries ("getHTTPStatus" is get, http, status), lower-
// cased, stripped of a plural "s" and of common English stop words. Words
// of a name count nameWeight times as much as words of a description.
type Index struct {
	items    []toolkit.Item
	docLen   []float32
	avgLen   float64
	postings map[string][]posting
	scratch  sync.Pool // *[]float64, one score per item
}

type posting struct {
	doc int32
	tf  float32
}

// Hit is one search result.
type Hit struct {
	// Item is the matching item.
	Item toolkit.Item
	// Pos is its position in the slice given to NewIndex.
	Pos int
	// Score is its BM25 score (higher is better).
	Score float64
}

// NewIndex indexes the tools and prompts of items (resources are skipped
// but keep their positions).
func NewIndex(items []toolkit.Item) *Index {
	x := &Index{
		items:    items,
		docLen:   make([]float32, len(items)),
		postings: make(map[string][]posting),
	}
	tf := map[string]float32{}
	var total float64
	for i, it := range items {
		if it.Type == toolkit.ListTypeResources {
			continue
		}
		clear(tf)
		var n float32
		for _, w := range Words(it.Name) {
			tf[w] += nameWeight
			n += nameWeight
		}
		for _, w := range Words(it.Description()) {
			tf[w]++
			n++
		}
		for w, f := range tf {
			x.postings[w] = append(x.postings[w], posting{doc: int32(i), tf: f})
		}
		x.docLen[i] = n
		total += float64(n)
	}
	if len(items) > 0 {
		x.avgLen = total / float64(len(items))
	}
	if x.avgLen == 0 {
		x.avgLen = 1
	}
	n := len(items)
	x.scratch.New = func() any { s := make([]float64, n); return &s }
	return x
}

// Len returns the number of items indexed (resources included).
func (x *Index) Len() int { return len(x.items) }

// Search returns up to k items that best match the words of query, best
// first (ties in index order), keeping only items for which keep returns
// true (nil keeps all). Items that share no word with the query are never
// returned.
func (x *Index) Search(query string, k int, keep func(toolkit.Item) bool) []Hit {
	if k <= 0 || len(x.items) == 0 {
		return nil
	}
	words := Words(query)
	if len(words) == 0 {
		return nil
	}
	sp := x.scratch.Get().(*[]float64)
	scores := *sp
	var touched []int32
	n := float64(len(x.items))
	seen := map[string]bool{}
	for _, w := range words {
		if seen[w] {
			continue
		}
		seen[w] = true
		ps := x.postings[w]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			norm := tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(x.docLen[p.doc])/x.avgLen))
			if scores[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			scores[p.doc] += idf * norm
		}
	}
	h := &hitHeap{}
	for _, d := range touched {
		s := scores[d]
		scores[d] = 0
		if s <= 0 {
			continue
		}
		cand := scored{d, s}
		if h.Len() == k && !better(cand, (*h)[0]) {
			continue
		}
		if keep != nil && !keep(x.items[d]) {
			continue
		}
		if h.Len() < k {
			heap.Push(h, cand)
		} else {
			(*h)[0] = cand
			heap.Fix(h, 0)
		}
	}
	x.scratch.Put(sp)
	out := make([]Hit, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		s := heap.Pop(h).(scored)
		out[i] = Hit{Item: x.items[s.doc], Pos: int(s.doc), Score: s.score}
	}
	return out
}

type scored struct {
	doc   int32
	score float64
}

// better orders hits: higher score first, then lower index.
func better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.doc < b.doc
}

// hitHeap is a min-heap by better: the root is the worst kept hit.
type hitHeap []scored

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(v any)        { *h = append(*h, v.(scored)) }
func (h *hitHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// stopWords are words too common to rank by.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "of": true,
	"to": true, "in": true, "on": true, "for": true, "with": true, "by": true,
	"is": true, "are": true, "be": true, "it": true, "this": true, "that": true,
	"as": true, "at": true, "from": true, "me": true, "my": true, "i": true,
	"you": true, "your": true, "please": true, "can": true, "could": true,
	"would": true, "will": true, "do": true, "does": true, "what": true,
}

// Words splits text into index words: runs of letters and digits, split
// again at camelCase boundaries, lower-cased, without stop words, with a
// plural "s" removed from words longer than three letters (not "ss").
func Words(text string) []string {
	var out []string
	emit := func(w string) {
		w = strings.ToLower(w)
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		if w != "" && !stopWords[w] {
			out = append(out, w)
		}
	}
	start := -1
	rs := []rune(text)
	for i, r := range rs {
		alnum := isAlnumRune(r)
		if !alnum {
			if start >= 0 {
				emit(string(rs[start:i]))
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		// camelCase: aB splits before B; ABc splits before B; a1 does not.
		if isUpperRune(r) && (isLowerRune(prev) || isDigitRune(prev) ||
			(isUpperRune(prev) && i+1 < len(rs) && isLowerRune(rs[i+1]))) {
			emit(string(rs[start:i]))
			start = i
		}
	}
	if start >= 0 {
		emit(string(rs[start:]))
	}
	return out
}

func isUpperRune(r rune) bool { return unicode.IsUpper(r) }
func isLowerRune(r rune) bool { return unicode.IsLower(r) }
func isDigitRune(r rune) bool { return unicode.IsDigit(r) }
func isAlnumRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

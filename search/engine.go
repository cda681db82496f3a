package search

import (
	"container/heap"
	"math"
	"slices"
)

// BM25 parameters.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// engine is a BM25 index over weighted term frequencies (BM25F with the
// field weights of docTerms) whose documents are added and removed one by
// one: adding a document costs its terms, removing one costs its terms
// too, and the space of removed documents is reclaimed by a compaction
// once they outnumber the live ones, so a change costs in proportion to
// its size (amortised), never to the whole index. It is not safe for
// concurrent use.
type engine struct {
	docs  []edoc
	lens  []float32 // by document id: the length (apart, for the search loop)
	alive []bool    // by document id
	terms map[string]*term
	live  int
	dead  int
	total float64 // the summed lengths of the live documents
}

// edoc is one document: its length, its terms (nil once removed) and the
// stems of its name.
type edoc struct {
	n     float32
	terms []*term
	name  []string
}

// term is one term's postings, in document order, removed documents
// included until the next compaction; df counts the live ones.
type term struct {
	word     string
	postings []posting
	df       int
}

type posting struct {
	doc int32
	tf  float32
}

func newEngine() *engine { return &engine{terms: map[string]*term{}} }

// add adds a document with the term frequencies tf, the length n and the
// stems of its name, and returns its id.
func (e *engine) add(tf map[string]float32, n float32, name []string) int32 {
	id := int32(len(e.docs))
	ts := make([]*term, 0, len(tf))
	for w, f := range tf {
		t := e.terms[w]
		if t == nil {
			t = &term{word: w}
			e.terms[w] = t
		}
		t.postings = append(t.postings, posting{doc: id, tf: f})
		t.df++
		ts = append(ts, t)
	}
	e.docs = append(e.docs, edoc{n: n, terms: ts, name: name})
	e.lens = append(e.lens, n)
	e.alive = append(e.alive, true)
	e.live++
	e.total += float64(n)
	return id
}

// remove removes the document with the given id; removing it again does
// nothing.
func (e *engine) remove(id int32) {
	if id < 0 || int(id) >= len(e.docs) || !e.alive[id] {
		return
	}
	d := &e.docs[id]
	for _, t := range d.terms {
		t.df--
	}
	e.total -= float64(d.n)
	*d = edoc{}
	e.alive[id] = false
	e.live--
	e.dead++
	if e.live == 0 {
		e.total = 0 // no rounding left over
	}
}

// minCompaction is how many removed documents an engine keeps before it
// considers a compaction.
const minCompaction = 64

// wantsCompaction reports whether the removed documents outnumber the
// live ones (and minCompaction).
func (e *engine) wantsCompaction() bool { return e.dead >= minCompaction && e.dead > e.live }

// compact drops the removed documents and renumbers the others in order.
// It returns the new id of each old id, -1 for a removed one.
func (e *engine) compact() []int32 {
	remap := make([]int32, len(e.docs))
	next := int32(0)
	for i, ok := range e.alive {
		if ok {
			remap[i] = next
			next++
		} else {
			remap[i] = -1
		}
	}
	docs := make([]edoc, 0, next)
	lens := make([]float32, 0, next)
	for i, d := range e.docs {
		if e.alive[i] {
			docs = append(docs, d)
			lens = append(lens, d.n)
		}
	}
	for w, t := range e.terms {
		if t.df == 0 {
			delete(e.terms, w)
			continue
		}
		ps := t.postings[:0]
		for _, p := range t.postings {
			if id := remap[p.doc]; id >= 0 {
				ps = append(ps, posting{doc: id, tf: p.tf})
			}
		}
		t.postings = ps
	}
	e.docs, e.lens = docs, lens
	e.alive = make([]bool, len(docs))
	for i := range e.alive {
		e.alive[i] = true
	}
	e.dead = 0
	return remap
}

// scored is a document and its score.
type scored struct {
	doc   int32
	score float64
}

// searchScratch is what one search needs per document, kept between
// searches: scores must hold a zero for each document and is left so.
type searchScratch struct {
	scores  []float32
	touched []int32
}

// search returns the k live documents that best match the query terms,
// best first (ties by id), keeping only those keep accepts (nil keeps
// all). Documents that match no term are never returned.
func (e *engine) search(q []queryTerm, k int, keep func(int32) bool, sc *searchScratch) []scored {
	if k <= 0 || e.live == 0 || len(q) == 0 {
		return nil
	}
	if len(sc.scores) < len(e.docs) {
		sc.scores = make([]float32, len(e.docs)+len(e.docs)/4)
	}
	scores, touched := sc.scores, sc.touched[:0]
	defer func() { sc.touched = touched[:0] }()
	n := float64(e.live)
	avg := float32(e.total / n)
	if avg <= 0 {
		avg = 1
	}
	lens, alive := e.lens, e.alive
	const k1, b = float32(bm25K1), float32(bm25B)
	for _, qt := range q {
		t := e.terms[qt.term]
		if t == nil || t.df == 0 {
			continue
		}
		df := float64(t.df)
		w := qt.w * float32(math.Log(1+(n-df+0.5)/(df+0.5)))
		for _, p := range t.postings {
			if !alive[p.doc] {
				continue
			}
			norm := p.tf * (k1 + 1) / (p.tf + k1*(1-b+b*lens[p.doc]/avg))
			if scores[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			scores[p.doc] += w * norm
		}
	}
	// The best r by BM25 are ranked again by how much of their name the
	// query covers.
	r := max(k, rerankDepth)
	h := make(hitHeap, 0, min(r, len(touched)))
	for _, d := range touched {
		s := float64(scores[d])
		scores[d] = 0
		if s <= 0 {
			continue
		}
		cand := scored{d, s}
		if len(h) == r && !better(cand, h[0]) {
			continue
		}
		if keep != nil && !keep(d) {
			continue
		}
		if len(h) < r {
			heap.Push(&h, cand)
		} else {
			h[0] = cand
			heap.Fix(&h, 0)
		}
	}
	out := []scored(h)
	inQuery := make(map[string]bool, len(q))
	for _, qt := range q {
		inQuery[qt.term] = true
	}
	for i := range out {
		out[i].score *= 1 + coverageBoost*nameCoverage(e.docs[out[i].doc].name, inQuery)
	}
	slices.SortFunc(out, func(a, b scored) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	return out[:min(k, len(out))]
}

// The best rerankDepth documents by BM25 are ranked again by how much of
// their name the query covers: a score grows by up to coverageBoost (half)
// when every word of the name is in the query, as a word or a concept.
const (
	rerankDepth   = 50
	coverageBoost = 0.5
)

// nameCoverage returns the share of the words of a name that a query has,
// as a word or as a concept.
func nameCoverage(name []string, inQuery map[string]bool) float64 {
	if len(name) == 0 {
		return 0
	}
	hit := 0
	for _, w := range name {
		if inQuery[w] {
			hit++
			continue
		}
		for _, c := range concepts[w] {
			if inQuery[c] {
				hit++
				break
			}
		}
	}
	return float64(hit) / float64(len(name))
}

// better orders hits: higher score first, then lower id.
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

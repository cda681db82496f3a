package search

import (
	"context"
	"sync"
)

// ToolIndex is a search index over tool documents that come and go one by
// one: the catalogue behind a search tool (see the server face's tool
// search, and [Disclosure]). It ranks as [Index] does. Put and Delete cost
// in proportion to the documents they touch (amortised: the space of
// deleted documents is reclaimed once they outnumber the live ones), never
// to the whole index, so a server that follows a toolkit's changes keeps
// it up to date for the price of each change. It is safe for concurrent
// use: searches run in parallel, changes one at a time.
//
// With [WithEmbedder], documents and queries are also embedded, and a
// search merges the keyword ranking with the ranking by vector similarity
// (hybrid search, see Embedder).
type ToolIndex struct {
	emb Embedder

	mu   sync.RWMutex
	eng  *engine
	ids  map[string]int32 // key → document id
	keys []string         // document id → key ("" once deleted)
	vecs [][]float32      // document id → embedding (nil without one)

	scratch sync.Pool // *searchScratch
}

// ToolHit is one result of a ToolIndex search.
type ToolHit struct {
	// Key is the document's key.
	Key string
	// Score is its relevance (higher is better): its BM25 score, or with
	// an embedder its fused rank score.
	Score float64
}

// Option configures a ToolIndex.
type Option func(*ToolIndex)

// WithEmbedder makes the index embed every document it is given and
// every query, and rank by keywords and vector similarity together (see
// Embedder). A nil e is ignored.
func WithEmbedder(e Embedder) Option {
	return func(x *ToolIndex) {
		if e != nil {
			x.emb = e
		}
	}
}

// NewToolIndex returns an empty index.
func NewToolIndex(opts ...Option) *ToolIndex {
	x := &ToolIndex{eng: newEngine(), ids: map[string]int32{}}
	for _, o := range opts {
		if o != nil {
			o(x)
		}
	}
	x.scratch.New = func() any { return new(searchScratch) }
	return x
}

// Put adds documents, replacing any with the same key. With an embedder
// the documents are embedded first; when that fails they are indexed for
// keywords alone and the embedder's error is returned. ctx bounds the
// embedder only.
func (x *ToolIndex) Put(ctx context.Context, docs ...Doc) error {
	if len(docs) == 0 {
		return nil
	}
	var vecs [][]float32
	var err error
	if x.emb != nil {
		vecs, err = embedDocs(ctx, x.emb, docs)
	}
	type built struct {
		tf   map[string]float32
		n    float32
		name []string
	}
	// The terms are worked out before the lock is taken.
	bs := make([]built, len(docs))
	for i, d := range docs {
		tf := make(map[string]float32, 64)
		bs[i] = built{tf, docTerms(d, tf), nameStems(d.Name)}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for i, d := range docs {
		if id, ok := x.ids[d.Key]; ok {
			x.eng.remove(id)
			x.keys[id], x.vecs[id] = "", nil
		}
		id := x.eng.add(bs[i].tf, bs[i].n, bs[i].name)
		x.ids[d.Key] = id
		x.keys = append(x.keys, d.Key)
		var v []float32
		if vecs != nil {
			v = vecs[i]
		}
		x.vecs = append(x.vecs, v)
	}
	x.compactLocked()
	return err
}

// Delete removes the documents with these keys; unknown keys are ignored.
func (x *ToolIndex) Delete(keys ...string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, k := range keys {
		if id, ok := x.ids[k]; ok {
			x.eng.remove(id)
			x.keys[id], x.vecs[id] = "", nil
			delete(x.ids, k)
		}
	}
	x.compactLocked()
}

// compactLocked reclaims the space of deleted documents when they
// outnumber the live ones.
func (x *ToolIndex) compactLocked() {
	if !x.eng.wantsCompaction() {
		return
	}
	remap := x.eng.compact()
	keys := make([]string, 0, len(x.ids))
	vecs := make([][]float32, 0, len(x.ids))
	for old, id := range remap {
		if id < 0 {
			continue
		}
		keys = append(keys, x.keys[old])
		vecs = append(vecs, x.vecs[old])
		x.ids[x.keys[old]] = id
	}
	x.keys, x.vecs = keys, vecs
}

// Len returns the number of documents.
func (x *ToolIndex) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.ids)
}

// Has reports whether a document with this key is indexed.
func (x *ToolIndex) Has(key string) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	_, ok := x.ids[key]
	return ok
}

// Search returns up to k documents that best match query, best first,
// keeping only those whose key keep accepts (nil keeps all). Documents
// that share no word or concept with the query are not returned (unless
// an embedder ranks them among the closest). The error is the embedder's,
// when the query cannot be embedded; the keyword hits are returned with
// it.
func (x *ToolIndex) Search(ctx context.Context, query string, k int, keep func(key string) bool) ([]ToolHit, error) {
	if k <= 0 {
		return nil, nil
	}
	var qv []float32
	var err error
	if x.emb != nil {
		qv, err = embedQuery(ctx, x.emb, query)
	}
	q := queryTerms(query)
	x.mu.RLock()
	defer x.mu.RUnlock()
	var keepDoc func(int32) bool
	if keep != nil {
		keepDoc = func(d int32) bool { return keep(x.keys[d]) }
	}
	depth := k
	if qv != nil {
		depth = max(k, fusionDepth)
	}
	sc := x.scratch.Get().(*searchScratch)
	found := x.eng.search(q, depth, keepDoc, sc)
	x.scratch.Put(sc)
	if qv != nil {
		found = fuse(found, x.nearest(qv, depth, keepDoc), k)
	}
	out := make([]ToolHit, len(found))
	for i, s := range found {
		out[i] = ToolHit{Key: x.keys[s.doc], Score: s.score}
	}
	return out, err
}

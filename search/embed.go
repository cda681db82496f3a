package search

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/llmkit/toolkit/internal/errs"
)

// Embedder turns texts into vectors whose closeness says how alike the
// texts mean: an embedding model, served by the application (a local
// model, a provider's embeddings API). The library ships none and
// downloads none; keyword search with stems and synonyms works without
// it. Given to a [ToolIndex] (WithEmbedder), it makes search hybrid: each
// tool's text (name, title, description, parameter names) is embedded
// when it is put, each query when it is searched, and the ranking by
// cosine similarity is merged with the keyword ranking by reciprocal rank
// fusion, so a tool found by either way ranks, and one found by both ranks
// first.
//
// Embed returns one vector per text, in order, all of the same length. It
// may be called concurrently.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// How many of the best hits of each ranking are fused, and the constant of
// reciprocal rank fusion (the usual 60: a hit's fused score is the sum
// over the rankings of 1/(60+rank)).
const (
	fusionDepth = 50
	rrfK        = 60
)

// embedText is what is embedded of a document.
func embedText(d Doc) string {
	var b strings.Builder
	b.WriteString(d.Name)
	if d.Title != "" {
		b.WriteString(": ")
		b.WriteString(d.Title)
	}
	if d.Description != "" {
		b.WriteString(". ")
		head, _ := splitDescription(d.Description)
		b.WriteString(head)
	}
	if len(d.Params) > 0 {
		b.WriteString(" Parameters:")
		for _, p := range d.Params {
			b.WriteString(" ")
			b.WriteString(p.Name)
		}
	}
	return b.String()
}

// embedDocs embeds the documents, checking what the embedder returns.
func embedDocs(ctx context.Context, e Embedder, docs []Doc) ([][]float32, error) {
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = embedText(d)
	}
	return embed(ctx, e, texts)
}

func embedQuery(ctx context.Context, e Embedder, query string) ([]float32, error) {
	if len(query) > maxDocText {
		query = query[:maxDocText]
	}
	vs, err := embed(ctx, e, []string{query})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// embed calls the embedder and checks that it returned one unit-normed
// vector per text (it normalises them), all of one length.
func embed(ctx context.Context, e Embedder, texts []string) ([][]float32, error) {
	vs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embedding %d texts: %w", len(texts), err)
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("%w: the embedder returned %d vectors for %d texts", errs.ErrBadParameter, len(vs), len(texts))
	}
	for i, v := range vs {
		if len(v) == 0 || len(v) != len(vs[0]) {
			return nil, fmt.Errorf("%w: the embedder returned vectors of lengths %d and %d", errs.ErrBadParameter, len(vs[0]), len(v))
		}
		var sum float64
		for _, f := range v {
			sum += float64(f) * float64(f)
		}
		if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
			return nil, fmt.Errorf("%w: the embedder returned a zero or non-finite vector", errs.ErrBadParameter)
		}
		norm := float32(1 / math.Sqrt(sum))
		u := make([]float32, len(v))
		for j, f := range v {
			u[j] = f * norm
		}
		vs[i] = u
	}
	return vs, nil
}

// nearest returns the k live documents whose vectors are closest to q
// (cosine similarity; vectors are unit-normed), best first, among those
// keep accepts. Documents without a vector, or with one of another
// length, are skipped. The caller holds x.mu.
func (x *ToolIndex) nearest(q []float32, k int, keep func(int32) bool) []scored {
	var out []scored
	for id, v := range x.vecs {
		if v == nil || len(v) != len(q) || !x.eng.alive[id] || (keep != nil && !keep(int32(id))) {
			continue
		}
		var dot float32
		for i := range v {
			dot += v[i] * q[i]
		}
		out = append(out, scored{int32(id), float64(dot)})
	}
	slices.SortFunc(out, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.doc, b.doc)
	})
	return out[:min(k, len(out))]
}

// fuse merges two rankings by reciprocal rank fusion and returns the best
// k.
func fuse(a, b []scored, k int) []scored {
	score := map[int32]float64{}
	for _, l := range [][]scored{a, b} {
		for rank, s := range l {
			score[s.doc] += 1.0 / float64(rrfK+rank+1)
		}
	}
	out := make([]scored, 0, len(score))
	for d, s := range score {
		out = append(out, scored{d, s})
	}
	slices.SortFunc(out, func(x, y scored) int {
		if better(x, y) {
			return -1
		}
		if better(y, x) {
			return 1
		}
		return 0
	})
	return out[:min(k, len(out))]
}

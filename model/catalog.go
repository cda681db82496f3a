package model

import (
	"context"
	"errors"
	"hash/maphash"
	"sync"

	toolkit "github.com/llmkit/toolkit"
)

// Lister is the part of a Toolkit a Catalog reads. *toolkit.Toolkit
// implements it.
type Lister interface {
	List(ctx context.Context, req toolkit.ListRequest) (*toolkit.ListResponse, error)
}

// Generationer is implemented by a Lister that can tell cheaply whether
// its items may have changed: Generation returns a number that changes
// whenever they do. A Catalog over such a Lister skips List entirely while
// the generation stays the same.
type Generationer interface {
	Generation() uint64
}

// Catalog keeps a toolkit's tools and prompts together with their model
// names (a Namer) and a keyword Index, and hands selections of them to a
// model as Definitions. It is safe for concurrent use.
//
// Every Definitions or Search call reads the toolkit's current items with
// List (which does no network I/O) and compares their identities (kind,
// namespace and name, in order) with those of the last snapshot through a
// hash. Only when they differ are the names extended and the index and the
// definition cache rebuilt; queries never rebuild anything otherwise. An
// item that changes its description or schema under the same identity is
// picked up on the next rebuild; call Invalidate (for example on a
// connector's list-changed event) to force one.
type Catalog struct {
	tk     Lister
	namer  *Namer
	strict bool

	mu   sync.Mutex
	snap *snapshot
	seed maphash.Seed
}

// snapshot is an immutable view of the toolkit's items.
type snapshot struct {
	gen   uint64 // the Lister's generation, when it has one
	sum   uint64
	items []toolkit.Item // tools then prompts, List order
	names []string       // model names, parallel to items
	index *Index
	cache *defCache
}

// defCache holds the definitions built for a snapshot, by item position.
type defCache struct {
	mu   sync.Mutex
	defs map[int]defResult
}

type defResult struct {
	def Definition
	err error
}

// CatalogOption configures a Catalog.
type CatalogOption func(*Catalog)

// WithNamer makes the catalog use n, for example one shared with another
// catalog over the same toolkit.
func WithNamer(n *Namer) CatalogOption { return func(c *Catalog) { c.namer = n } }

// WithStrict sets Definition.Strict on every definition whose schema
// qualifies for OpenAI's strict mode (see IsStrictSchema).
func WithStrict(on bool) CatalogOption { return func(c *Catalog) { c.strict = on } }

// NewCatalog returns a catalog over tk.
func NewCatalog(tk Lister, opts ...CatalogOption) *Catalog {
	c := &Catalog{tk: tk, seed: maphash.MakeSeed()}
	for _, o := range opts {
		o(c)
	}
	if c.namer == nil {
		c.namer = NewNamer()
	}
	return c
}

// Namer returns the catalog's Namer.
func (c *Catalog) Namer() *Namer { return c.namer }

// Refresh brings the catalog up to date with the toolkit now. Definitions
// and Search do it themselves; call Refresh when only dispatching.
func (c *Catalog) Refresh(ctx context.Context) error {
	_, err := c.refresh(ctx)
	return err
}

// Resolve returns the item a model name stands for, as of the catalog's
// latest snapshot (names are known once Definitions, Search or Refresh has
// run). It implements Resolver.
func (c *Catalog) Resolve(name string) (toolkit.Item, bool) { return c.namer.Resolve(name) }

func (c *Catalog) suggest(name string, max int) []string { return c.namer.suggest(name, max) }

// Invalidate makes the next query rebuild the names, index and definitions
// even if the toolkit's item identities did not change.
func (c *Catalog) Invalidate() {
	c.mu.Lock()
	c.snap = nil
	c.mu.Unlock()
}

// refresh returns an up-to-date snapshot.
func (c *Catalog) refresh(ctx context.Context) (*snapshot, error) {
	g, hasGen := c.tk.(Generationer)
	var gen uint64
	if hasGen {
		gen = g.Generation()
		c.mu.Lock()
		s := c.snap
		c.mu.Unlock()
		if s != nil && s.gen == gen {
			return s, nil
		}
	}
	var items []toolkit.Item
	for _, t := range []toolkit.ListType{toolkit.ListTypeTools, toolkit.ListTypePrompts} {
		resp, err := c.tk.List(ctx, toolkit.ListRequest{Type: t})
		if err != nil {
			return nil, err
		}
		items = append(items, resp.Items...)
	}
	var h maphash.Hash
	h.SetSeed(c.seed)
	for _, it := range items {
		h.WriteString(string(it.Type))
		h.WriteByte(0)
		h.WriteString(it.Namespace)
		h.WriteByte(0)
		h.WriteString(it.Name)
		h.WriteByte(0)
	}
	sum := h.Sum64()

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap != nil && c.snap.sum == sum && len(c.snap.items) == len(items) {
		if hasGen {
			// Same items under a new generation: keep everything built.
			s := *c.snap
			s.gen = gen
			c.snap = &s
		}
		return c.snap, nil
	}
	s := &snapshot{
		gen:   gen,
		sum:   sum,
		items: items,
		names: c.namer.Names(items),
		index: NewIndex(items),
		cache: &defCache{defs: make(map[int]defResult)},
	}
	c.snap = s
	return s, nil
}

// definition returns the (cached) definition of the item at position i.
func (c *Catalog) definition(s *snapshot, i int) (Definition, error) {
	s.cache.mu.Lock()
	r, ok := s.cache.defs[i]
	s.cache.mu.Unlock()
	if ok {
		return r.def, r.err
	}
	d, err := NewDefinition(s.names[i], s.items[i])
	if err == nil && c.strict {
		d.Strict = IsStrictSchema(d.Parameters)
	}
	s.cache.mu.Lock()
	s.cache.defs[i] = defResult{d, err}
	s.cache.mu.Unlock()
	return d, err
}

// Definitions returns the definitions of the items f keeps, in List order
// (tools, then prompts). Items whose definition cannot be built are left
// out and reported in the error (joined); the others are returned.
func (c *Catalog) Definitions(ctx context.Context, f Filter) ([]Definition, error) {
	s, err := c.refresh(ctx)
	if err != nil {
		return nil, err
	}
	var defs []Definition
	var errList []error
	for i, it := range s.items {
		if !f.Match(it) {
			continue
		}
		d, err := c.definition(s, i)
		if err != nil {
			errList = append(errList, err)
			continue
		}
		defs = append(defs, d)
	}
	return defs, errors.Join(errList...)
}

// Search returns the definitions of the k items f keeps that best match
// query (typically the user's message), best first. See Index for the
// ranking. Items whose definition cannot be built are left out and
// reported in the error.
func (c *Catalog) Search(ctx context.Context, query string, k int, f Filter) ([]Definition, error) {
	s, err := c.refresh(ctx)
	if err != nil {
		return nil, err
	}
	hits := s.index.Search(query, k, f.Match)
	var defs []Definition
	var errList []error
	for _, h := range hits {
		d, err := c.definition(s, h.Pos)
		if err != nil {
			errList = append(errList, err)
			continue
		}
		defs = append(defs, d)
	}
	return defs, errors.Join(errList...)
}

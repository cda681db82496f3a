package model

import (
	"context"
	"errors"
	"hash/maphash"
	"runtime"
	"sync"
	"sync/atomic"

	toolkit "github.com/llmkit/toolkit"
)

// Lister is the part of a Toolkit a Catalog reads. *toolkit.Toolkit
// implements it.
type Lister interface {
	List(ctx context.Context, req toolkit.ListRequest) (*toolkit.ListResponse, error)
}

// Subscriber is implemented by a Lister that publishes its changes, as
// [toolkit.Toolkit.Subscribe] does. A Catalog over such a Lister lists
// again only after a tool or prompt list changed.
type Subscriber interface {
	Subscribe(fn func(toolkit.ConnectorEvent)) (cancel func())
}

// Catalog keeps a toolkit's tools and prompts together with their model
// names (a Namer) and a keyword Index, and hands selections of them to a
// model as Definitions. It is safe for concurrent use.
//
// Every Definitions, Search or Refresh call reads the toolkit's current
// items with List (which does no network I/O); over a [Subscriber] (a
// *toolkit.Toolkit) it does so only after the toolkit reported a change of
// its tools or prompts, so an unchanged toolkit costs one atomic read. A
// change is seen once its event is delivered ([toolkit.Toolkit.WaitEvents]
// waits for that); the subscription ends when the Catalog is garbage
// collected. The items listed
// replace those of the last snapshot whenever any of them differs, even
// under the same identity (kind, namespace and name): a builtin removed and
// added again, a store prompt edited or a remote tool redefined is the new
// value from then on, for definitions, search and dispatch alike. What is
// rebuilt depends on what changed: new identities extend the names; any
// changed value rebuilds the index; definitions are rebuilt only for the
// changed values. An item that mutates its own description or schema in
// place (same value) is not noticed; call Invalidate to force a rebuild.
type Catalog struct {
	tk     Lister
	namer  *Namer
	strict bool

	building sync.Mutex // held by refresh while it lists and builds
	mu       sync.Mutex // guards snap
	snap     *snapshot
	seed     maphash.Seed
	// stale, over a Subscriber, is set by the toolkit's list-change events
	// and cleared when a refresh starts listing; nil over another Lister.
	stale *atomic.Bool
}

// snapshot is an immutable view of the toolkit's items.
type snapshot struct {
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
	if sub, ok := tk.(Subscriber); ok {
		// The subscription holds the flag, not the catalog, so that the
		// catalog can be collected; its cleanup ends the subscription.
		stale := new(atomic.Bool)
		stale.Store(true)
		cancel := sub.Subscribe(func(ev toolkit.ConnectorEvent) {
			switch ev.Kind {
			case toolkit.ConnectorEventToolListChanged, toolkit.ConnectorEventPromptListChanged, toolkit.ConnectorEventPolicyChanged:
				stale.Store(true)
			}
		})
		c.stale = stale
		runtime.AddCleanup(c, func(cancel func()) { cancel() }, cancel)
	}
	return c
}

// Namer returns the catalog's Namer.
func (c *Catalog) Namer() *Namer { return c.namer }

// Refresh brings the catalog up to date with the toolkit now. Definitions,
// Search and, over a Subscriber, Resolve do it themselves; over another
// Lister call Refresh before dispatching.
func (c *Catalog) Refresh(ctx context.Context) error {
	_, err := c.refresh(ctx)
	return err
}

// Resolve returns the item a model name stands for. Over a Subscriber the
// catalog first catches up with the toolkit if it reported a change since
// the last snapshot, so the item returned is the toolkit's current one as
// of its last delivered event; otherwise the answer is as of the latest
// Definitions, Search or Refresh. (A Dispatcher over a *toolkit.Toolkit
// looks the item up again by key anyway, so it never runs a replaced
// item.) It implements Resolver.
func (c *Catalog) Resolve(name string) (toolkit.Item, bool) {
	if c.stale != nil {
		// List does no network I/O; on a failure the last names still hold.
		_, _ = c.refresh(context.Background())
	}
	return c.namer.Resolve(name)
}

func (c *Catalog) suggest(name string, max int) []string { return c.namer.suggest(name, max) }

// Invalidate makes the next query rebuild the names, index and definitions
// even if the toolkit's item identities did not change.
func (c *Catalog) Invalidate() {
	c.mu.Lock()
	c.snap = nil
	c.mu.Unlock()
}

// latest returns the last snapshot built (nil before the first).
func (c *Catalog) latest() *snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snap
}

// refresh returns an up-to-date snapshot.
func (c *Catalog) refresh(ctx context.Context) (*snapshot, error) {
	if s := c.latest(); s != nil && c.stale != nil && !c.stale.Load() {
		return s, nil
	}
	// One refresh at a time, so that a slower one never replaces the
	// snapshot of a later one with older items.
	c.building.Lock()
	defer c.building.Unlock()
	if c.stale != nil {
		if s := c.latest(); s != nil && !c.stale.Load() {
			return s, nil // another refresh just caught up
		}
		// Cleared before listing: a change from now on marks it again.
		c.stale.Store(false)
	}
	var items []toolkit.Item
	for _, t := range []toolkit.ListType{toolkit.ListTypeTools, toolkit.ListTypePrompts} {
		resp, err := c.tk.List(ctx, toolkit.ListRequest{Type: t})
		if err != nil {
			if c.stale != nil {
				c.stale.Store(true)
			}
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
	old := c.snap
	if old != nil && old.sum == sum && len(old.items) == len(items) {
		changed := false
		for i := range items {
			if !sameValue(items[i].Value, old.items[i].Value) {
				changed = true
				break
			}
		}
		if !changed {
			return old, nil // same items: keep everything built
		}
		// Same identities, some new values: the names stay, but the namer
		// must hand out the new values, the index must see their
		// descriptions and hints, and their definitions must be rebuilt.
		// Definitions of unchanged values are kept.
		cache := &defCache{defs: make(map[int]defResult)}
		old.cache.mu.Lock()
		for i, r := range old.cache.defs {
			if sameValue(items[i].Value, old.items[i].Value) {
				cache.defs[i] = r
			}
		}
		old.cache.mu.Unlock()
		s := &snapshot{sum: sum, items: items, names: c.namer.Names(items), index: NewIndex(items), cache: cache}
		c.snap = s
		return s, nil
	}
	s := &snapshot{
		sum:   sum,
		items: items,
		names: c.namer.Names(items),
		index: NewIndex(items),
		cache: &defCache{defs: make(map[int]defResult)},
	}
	c.snap = s
	return s, nil
}

// sameValue reports whether two item values are the same value. Values
// that cannot be compared (a struct holding a map, say) count as different.
func sameValue(a, b any) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
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

package model

import (
	"context"
	"errors"
	"github.com/llmkit/toolkit/search"
	"hash/maphash"
	"iter"
	"runtime"
	"slices"
	"sync"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/policyctx"
)

// Lister is the part of a Toolkit a Catalog reads. *toolkit.Toolkit
// implements it.
type Lister interface {
	List(ctx context.Context, req toolkit.ListRequest) (*toolkit.ListResponse, error)
}

// Notifier is implemented by a Lister that signals its changes as it
// makes them, as [toolkit.Toolkit.Notify] does. A Catalog over such a
// Lister lists again only after a tool or prompt list changed, and a
// change made through the toolkit's own methods (AddTool, RemoveBuiltin,
// ...) is in the catalog's next answer once the method has returned.
type Notifier interface {
	Notify(c chan<- struct{}, kinds ...toolkit.ConnectorEventKind) (stop func())
}

// Subscriber is implemented by a Lister that publishes its changes, as
// [toolkit.Toolkit.Subscribe] does. A Catalog over a Subscriber that is
// not a [Notifier] lists again only after a tool or prompt list changed,
// as of the delivery of the change's event.
type Subscriber interface {
	Subscribe(fn func(toolkit.ConnectorEvent)) (cancel func())
}

// viewer is implemented by a Lister whose lists depend on the caller, as
// [toolkit.Toolkit.Visible] does under a policy.
type viewer interface {
	Visible(ctx context.Context, it toolkit.Item) bool
}

// policyHolder is implemented by a Lister that tells its policy, as
// [toolkit.Toolkit.Policy] does: without one (or with one that allows
// every call) nothing is hidden from anyone.
type policyHolder interface {
	Policy() toolkit.Policy
}

// Catalog keeps a toolkit's tools and prompts together with their model
// names (a Namer) and a keyword Index, and hands selections of them to a
// model as Definitions. It is safe for concurrent use.
//
// One catalog serves every caller. Over a toolkit with a policy (a Lister
// with the method Visible(ctx, Item) bool, as *toolkit.Toolkit has) the
// snapshot holds every item, and each Definitions, Search or NameFor
// answers with the items the policy lets the principal of its ctx
// (toolkit.WithPrincipal) see: a tool denied to a caller is never offered
// to it, nor found by its searches, whoever asked before.
//
// Every Definitions, Search or Refresh call reads the toolkit's current
// items with List (which does no network I/O); over a [Notifier] (a
// *toolkit.Toolkit) it does so only after the toolkit signalled a change
// of its tools or prompts, so an unchanged toolkit costs a lock and a
// channel check. A change made through the toolkit's methods is seen as
// soon as the method returns, by every goroutine that calls the catalog
// after that; a connector's change as soon as the toolkit has published
// it. The signals stop when the Catalog is garbage collected. The items
// listed replace those of the last snapshot whenever any of them differs,
// even under the same identity (kind, namespace and name): a builtin
// removed and added again, a store prompt edited or a remote tool
// redefined is the new value from then on, for definitions, search and
// dispatch alike. What is rebuilt depends on what changed, and only that:
// new identities get names, the next Search re-indexes the new or changed
// items of the sources (kind and namespace) that changed and drops the
// items gone, leaving the rest of its index as it was (it is built whole
// by the first Search), and a definition is built for each new or changed
// value while the definitions of the others are kept. An item that mutates its own
// description or schema in place (same value) is not noticed; call
// Invalidate to force a rebuild.
type Catalog struct {
	tk     Lister
	namer  *Namer
	strict bool
	seed   maphash.Seed

	building sync.Mutex // held by refresh while it lists and builds
	// mu guards snap, dirty and listing, and every receive from changed.
	mu   sync.Mutex
	snap *snapshot
	// changed receives the toolkit's change signals, over a Notifier or a
	// Subscriber; it is nil over another Lister, which is listed on every
	// query.
	changed chan struct{}
	// dirty is set when a signal is taken from changed and cleared when a
	// refresh starts listing; listing is set from then until that refresh
	// has stored its snapshot or failed. A query that finds either set
	// lists, or waits for the listing under way, so that it never answers
	// from a snapshot older than a change signalled before it started.
	dirty   bool
	listing bool
	gen     uint64 // the last snapshot's gen; guarded by mu

	// indexMu guards index and indexed: the keyword index, made by the
	// first Search, and the snapshot whose items it holds. A Search
	// brings it up to date with its own snapshot by the difference
	// between the two (see syncIndex).
	indexMu sync.Mutex
	index   *search.ToolIndex
	indexed *snapshot
	puts    int // documents given to index since it was made
}

// snapshot is an immutable view of the toolkit's items.
type snapshot struct {
	gen   uint64 // counts the snapshots of a catalog, in order
	sum   uint64
	items []toolkit.Item // tools then prompts, List order
	names []string       // model names, parallel to items
	cache *defCache

	posOnce sync.Once
	pos     map[string]int // by search key (docKey): the item's position

	runsOnce sync.Once
	runs     []run // the runs of items by source (see runs)
}

// sourceRuns returns the runs of s's items by source, made once.
func (s *snapshot) sourceRuns() []run {
	s.runsOnce.Do(func() { s.runs = runs(s.items) })
	return s.runs
}

// positions returns the position of each item of s by its search key,
// made once.
func (s *snapshot) positions() map[string]int {
	s.posOnce.Do(func() {
		s.pos = make(map[string]int, len(s.items))
		for i, it := range s.items {
			s.pos[docKey(it)] = i
		}
	})
	return s.pos
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
	// The toolkit holds the channel, not the catalog, so that the catalog
	// can be collected; its cleanup stops the signals.
	var stop func()
	switch v := tk.(type) {
	case Notifier:
		c.changed = make(chan struct{}, 1)
		stop = v.Notify(c.changed, toolkit.ConnectorEventToolListChanged, toolkit.ConnectorEventPromptListChanged, toolkit.ConnectorEventPolicyChanged, toolkit.ConnectorEventSkillListChanged)
	case Subscriber:
		changed := make(chan struct{}, 1)
		c.changed = changed
		stop = v.Subscribe(func(ev toolkit.ConnectorEvent) {
			if ev.Kind == toolkit.ConnectorEventToolListChanged || ev.Kind == toolkit.ConnectorEventPromptListChanged || ev.Kind == toolkit.ConnectorEventPolicyChanged || ev.Kind == toolkit.ConnectorEventSkillListChanged {
				select {
				case changed <- struct{}{}:
				default:
				}
			}
		})
	}
	if stop != nil {
		runtime.AddCleanup(c, func(stop func()) { stop() }, stop)
	}
	return c
}

// Namer returns the catalog's Namer.
func (c *Catalog) Namer() *Namer { return c.namer }

// Refresh brings the catalog up to date with the toolkit now. Definitions,
// Search and, over a Notifier or a Subscriber, Resolve do it themselves; over another
// Lister call Refresh before dispatching.
func (c *Catalog) Refresh(ctx context.Context) error {
	_, err := c.refresh(ctx)
	return err
}

// Resolve returns the item a model name stands for. Over a Notifier or a
// Subscriber the catalog first catches up with the toolkit if it signalled
// a change since the last snapshot, so the item returned is the toolkit's
// current one; otherwise the answer is as of the latest Definitions,
// Search or Refresh. (A Dispatcher over a *toolkit.Toolkit
// looks the item up again by key anyway, so it never runs a replaced
// item.) It implements Resolver.
func (c *Catalog) Resolve(name string) (toolkit.Item, bool) {
	if c.changed != nil {
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
	c.indexMu.Lock()
	c.index, c.indexed = nil, nil
	c.indexMu.Unlock()
}

// current returns the last snapshot when it is known to be current: the
// toolkit signals its changes and none was signalled since the snapshot's
// listing started. c.mu is held.
func (c *Catalog) current() *snapshot {
	if c.changed == nil || c.snap == nil {
		return nil
	}
	select {
	case <-c.changed:
		c.dirty = true
	default:
	}
	if c.dirty || c.listing {
		return nil
	}
	return c.snap
}

// refresh returns an up-to-date snapshot.
func (c *Catalog) refresh(ctx context.Context) (*snapshot, error) {
	c.mu.Lock()
	s := c.current()
	c.mu.Unlock()
	if s != nil {
		return s, nil
	}
	// One refresh at a time, so that a slower one never replaces the
	// snapshot of a later one with older items.
	c.building.Lock()
	defer c.building.Unlock()
	c.mu.Lock()
	if s := c.current(); s != nil {
		c.mu.Unlock()
		return s, nil // another refresh just caught up
	}
	// Every change signalled so far is covered by the listing below; one
	// signalled from now on marks the catalog dirty again.
	c.dirty, c.listing = false, true
	c.mu.Unlock()

	var items []toolkit.Item
	lctx := ctx
	if _, ok := c.tk.(viewer); ok {
		// The snapshot is every caller's: each query filters it for its
		// own caller (visible).
		lctx = policyctx.Unfiltered(ctx)
	}
	for _, t := range []toolkit.ListType{toolkit.ListTypeTools, toolkit.ListTypePrompts} {
		resp, err := c.tk.List(lctx, toolkit.ListRequest{Type: t})
		if err != nil {
			c.mu.Lock()
			c.dirty, c.listing = true, false
			c.mu.Unlock()
			return nil, err
		}
		items = append(items, resp.Items...)
	}
	// A tool reserved for an MCP App's view gets no name a model could
	// call (apps.go).
	items = slices.DeleteFunc(items, AppOnly)
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
	c.listing = false
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
		cache := &defCache{defs: make(map[int]defResult, len(old.cache.defs))}
		old.cache.mu.Lock()
		for i, r := range old.cache.defs {
			if sameValue(items[i].Value, old.items[i].Value) {
				cache.defs[i] = r
			}
		}
		old.cache.mu.Unlock()
		c.gen++
		s := &snapshot{gen: c.gen, sum: sum, items: items, names: c.namer.Names(items), cache: cache}
		c.snap = s
		return s, nil
	}
	c.gen++
	s = &snapshot{
		gen:   c.gen,
		sum:   sum,
		items: items,
		names: c.namer.Names(items),
		cache: &defCache{defs: make(map[int]defResult)},
	}
	if old != nil {
		s.cache.keep(old, s)
	}
	c.snap = s
	return s, nil
}

// itemKey is the identity of an item within one listing.
type itemKey struct {
	typ      toolkit.ListType
	ns, name string
}

// keep copies into c the definitions of from's items that are in to with
// the same value and model name, at their positions in to.
func (c *defCache) keep(from, to *snapshot) {
	from.cache.mu.Lock()
	defer from.cache.mu.Unlock()
	if len(from.cache.defs) == 0 {
		return
	}
	pos := make(map[itemKey]int, len(from.cache.defs))
	for i := range from.cache.defs {
		it := from.items[i]
		pos[itemKey{it.Type, it.Namespace, it.Name}] = i
	}
	for i, it := range to.items {
		j, ok := pos[itemKey{it.Type, it.Namespace, it.Name}]
		if ok && from.names[j] == to.names[i] && sameValue(it.Value, from.items[j].Value) {
			c.defs[i] = from.cache.defs[j]
		}
	}
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
	keep := c.keep(ctx, f)
	return c.definitions(s, func(yield func(int) bool) {
		for i, it := range s.items {
			if keep(it) && !yield(i) {
				return
			}
		}
	})
}

// definitions returns the definitions of the items of s at the positions
// at gives, in its order; those that cannot be built are left out and
// reported in the error.
func (c *Catalog) definitions(s *snapshot, at iter.Seq[int]) ([]Definition, error) {
	var defs []Definition
	var errList []error
	for i := range at {
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
	x := c.syncIndex(s)
	pos := s.positions()
	keep := c.keep(ctx, f)
	// The index may hold a later snapshot than s (another Search brought
	// it forward meanwhile): its documents that s does not have are
	// skipped.
	hits, _ := x.Search(ctx, query, k, func(key string) bool {
		i, ok := pos[key]
		return ok && keep(s.items[i])
	})
	return c.definitions(s, func(yield func(int) bool) {
		for _, h := range hits {
			if i, ok := pos[h.Key]; ok && !yield(i) {
				return
			}
		}
	})
}

// keep returns the test of the items a query over f answers the caller of
// ctx with: those f keeps and the toolkit's policy lets the caller see.
func (c *Catalog) keep(ctx context.Context, f Filter) func(toolkit.Item) bool {
	v, ok := c.tk.(viewer)
	if !ok {
		return f.Match
	}
	if ph, ok := c.tk.(policyHolder); ok {
		p := ph.Policy()
		if p == nil {
			return f.Match
		}
		if a, ok := p.(interface{ AllowsAll() bool }); ok && a.AllowsAll() {
			return f.Match
		}
	}
	return func(it toolkit.Item) bool { return f.Match(it) && v.Visible(ctx, it) }
}

package mcp

import (
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/errs"
)

// RootSet is a list of roots (file:// URIs of directories and files) that
// connectors offer their servers: give it to connectors with OptRootSet,
// once for all of them through [Delegate] options. Set replaces the roots,
// and every running connector that uses the set tells its server
// (notifications/roots/list_changed). A RootSet is safe for concurrent use.
type RootSet struct {
	mu    sync.Mutex
	roots []*sdk.Root
	conns map[*Connector]struct{} // running connectors using the set
}

// NewRootSet returns a set holding roots. It fails like Set.
func NewRootSet(roots ...*sdk.Root) (*RootSet, error) {
	return newRootSet("NewRootSet", roots)
}

func newRootSet(what string, roots []*sdk.Root) (*RootSet, error) {
	clean, err := checkRoots(what, roots)
	if err != nil {
		return nil, err
	}
	return &RootSet{roots: clean}, nil
}

// checkRoots copies roots, refusing a nil root and URIs that are not
// absolute file:// URIs; a later root with the URI of an earlier one
// replaces it.
func checkRoots(what string, roots []*sdk.Root) ([]*sdk.Root, error) {
	out := make([]*sdk.Root, 0, len(roots))
	for i, r := range roots {
		if r == nil {
			return nil, fmt.Errorf("%w: %s: root %d is nil", errs.ErrBadParameter, what, i)
		}
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" || u.Path == "" || u.Path[0] != '/' {
			return nil, fmt.Errorf("%w: %s: root %q: want an absolute file:// URI", errs.ErrBadParameter, what, r.URI)
		}
		c := copyRoot(r)
		if j := slices.IndexFunc(out, func(o *sdk.Root) bool { return o.URI == r.URI }); j >= 0 {
			out[j] = c
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// Roots returns a copy of the roots.
func (s *RootSet) Roots() []*sdk.Root {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneRoots(s.roots)
}

func cloneRoots(roots []*sdk.Root) []*sdk.Root {
	out := make([]*sdk.Root, len(roots))
	for i, r := range roots {
		out[i] = copyRoot(r)
	}
	return out
}

// copyRoot returns a copy of r with a map of _meta of its own.
func copyRoot(r *sdk.Root) *sdk.Root {
	c := *r
	c.Meta = maps.Clone(r.Meta)
	return &c
}

// sameRoot reports whether a and b are equal.
func sameRoot(a, b *sdk.Root) bool {
	return a.URI == b.URI && a.Name == b.Name && reflect.DeepEqual(a.Meta, b.Meta)
}

// Set replaces the roots. Every running connector using the set that
// sees a change tells its server, concurrently; Set returns when they
// all did (each notification is bounded by the SDK, 10 seconds). It fails,
// changing nothing, when a root is nil or its URI is not an absolute
// file:// URI.
func (s *RootSet) Set(roots ...*sdk.Root) error {
	clean, err := checkRoots("RootSet.Set", roots)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.roots = clean
	conns := make([]*Connector, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(c.syncRoots)
	}
	wg.Wait()
	return nil
}

// attach makes c follow the set's changes; detach stops it.
func (s *RootSet) attach(c *Connector) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns == nil {
		s.conns = map[*Connector]struct{}{}
	}
	s.conns[c] = struct{}{}
}

func (s *RootSet) detach(c *Connector) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
}

// rootsMirror is what the connector's SDK client was last given of its
// roots. The connector answers roots/list itself (from the RootSet, or
// the caller's session); the SDK client holds a mirror of the roots so
// that its AddRoots and RemoveRoots send notifications/roots/list_changed
// to the server when they change.
type rootsMirror struct {
	mu   sync.Mutex
	sent []*sdk.Root
}

// initRoots gives the SDK client the connector's roots before any session
// exists (so nothing is sent).
func (c *Connector) initRoots() { c.syncRoots() }

// watchRoots makes the connector follow its RootSet while it runs, and
// brings the SDK client up to date; the function it returns stops that.
func (c *Connector) watchRoots() func() {
	rs := c.o.roots
	if rs == nil {
		return func() {}
	}
	rs.attach(c)
	c.syncRoots()
	return func() { rs.detach(c) }
}

// syncRoots gives the SDK client the roots of the connector's RootSet that
// changed since it last did: RemoveRoots for those gone, AddRoots for
// those new or changed. Each call that changes something notifies the
// connected server.
func (c *Connector) syncRoots() {
	if c.o.roots == nil {
		return
	}
	m := &c.srv.roots
	m.mu.Lock()
	defer m.mu.Unlock()
	want := c.o.roots.Roots()
	var gone []string
	for _, r := range m.sent {
		if !slices.ContainsFunc(want, func(w *sdk.Root) bool { return w.URI == r.URI }) {
			gone = append(gone, r.URI)
		}
	}
	var changed []*sdk.Root
	for _, w := range want {
		if !slices.ContainsFunc(m.sent, func(r *sdk.Root) bool { return sameRoot(r, w) }) {
			changed = append(changed, w)
		}
	}
	if len(gone) > 0 {
		c.link.client.RemoveRoots(gone...)
	}
	if len(changed) > 0 {
		c.link.client.AddRoots(changed...)
	}
	m.sent = want
}

// SetRoots replaces the roots the connector offers its server, which is
// told with notifications/roots/list_changed when it is connected. With
// OptRootSet it replaces the roots of the set, for every connector that
// uses it. It fails with an error wrapping toolkit.ErrBadParameter when the
// connector was made without OptRoots or OptRootSet (it did not advertise
// roots), or a root is invalid (see RootSet.Set).
func (c *Connector) SetRoots(roots ...*sdk.Root) error {
	if c.o.roots == nil {
		return fmt.Errorf("%w: connector %s has no roots: create it with OptRoots or OptRootSet", errs.ErrBadParameter, c.ep.display)
	}
	if err := c.o.roots.Set(roots...); err != nil {
		return err
	}
	// A connector that is not running follows the set when it runs.
	c.syncRoots()
	return nil
}

// Roots returns the roots the connector offers its server (nil without
// OptRoots or OptRootSet).
func (c *Connector) Roots() []*sdk.Root {
	if c.o.roots == nil {
		return nil
	}
	return c.o.roots.Roots()
}

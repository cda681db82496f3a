package mcpserver

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/fingerprint"
	"github.com/llmkit/toolkit/internal/policyctx"
	"github.com/llmkit/toolkit/resource"
)

// registration is one item registered with the SDK server: the toolkit key
// of the item and a fingerprint of what was registered.
type registration struct {
	key string
	fp  string
}

// definition is what a kind registers for one item under its exposed name.
type definition struct {
	sdk   any            // *sdk.Tool, *sdk.Prompt, *sdk.Resource or *sdk.ResourceTemplate
	route *templateRoute // templates only
}

// kindSpec is what synchronisation needs to know of one kind of item; the
// algorithm (sync) is the same for all four.
type kindSpec struct {
	// uris: items are named by URI (resources, templates): the name policy
	// qualifies them with "#namespace".
	uris bool
	// define builds the SDK definition of an item under its exposed name.
	define func(s *Server, exposed string, it toolkit.Item) (definition, error)
	// add registers a definition with the SDK server (which may panic).
	add func(s *Server, key string, d definition)
	// remove unregisters exposed names.
	remove func(s *Server, exposed ...string)
}

// kinds describes the four kinds of item.
var kinds = [toolkit.NumKinds]kindSpec{
	toolkit.KindTool: {
		define: withMeta(defineAs(sdkTool)),
		add:    func(s *Server, key string, d definition) { s.addTool(key, d.sdk.(*sdk.Tool)) },
		remove: (*Server).removeTools, // toolsearch_sync.go
	},
	toolkit.KindPrompt: {
		define: withMeta(defineAs(sdkPrompt)),
		add:    addAs((*sdk.Server).AddPrompt, (*Server).promptHandler),
		remove: func(s *Server, e ...string) { s.server.RemovePrompts(e...) },
	},
	toolkit.KindResource: {
		uris:   true,
		define: withMeta(defineResource),
		add:    addAs((*sdk.Server).AddResource, (*Server).resourceHandler),
		remove: func(s *Server, e ...string) { s.server.RemoveResources(e...) },
	},
	toolkit.KindTemplate: {
		uris:   true,
		define: withMeta(defineTemplate),
		add: func(s *Server, _ string, d definition) {
			s.server.AddResourceTemplate(d.sdk.(*sdk.ResourceTemplate), s.readTemplated)
		},
		remove: func(s *Server, e ...string) { s.server.RemoveResourceTemplates(e...) },
	},
}

// kindSync is what synchronisation keeps of one kind between two runs, so
// that a change costs in proportion to the source that changed rather than
// to every item of the kind. It is guarded by Server.syncMu.
type kindSync struct {
	// defs caches the definition registered under each exposed name, with
	// the item value it was made of: an item whose value is the same
	// pointer is not described and fingerprinted again.
	defs map[string]cachedDef
	// sources holds the keys of each namespace's items, in toolkit order,
	// as the last full run listed them.
	sources map[string][]string
	// total is the number of items of the kind.
	total int
	// names is the name policy's state (sync_names.go).
	names nameState
}

// cachedDef is a definition registered under an exposed name.
type cachedDef struct {
	key   string
	value any // the item's value, compared by identity (pointers only)
	def   definition
	fp    string
}

// reuses reports whether c can stand for the definition of it under the
// same exposed name: the same key and the same pointer value. A value of
// any other type is described again each time.
func (c cachedDef) reuses(it toolkit.Item) bool {
	if c.key != it.Key() || c.value == nil {
		return false
	}
	if v := reflect.ValueOf(it.Value); v.Kind() != reflect.Pointer || v.IsNil() {
		return false
	}
	return c.value == it.Value
}

// sync registers the toolkit's current items of kind k with the SDK
// server, adding and removing only what changed, so that clients get one
// list_changed notification for a real change and none otherwise. ns is
// the namespace a toolkit event says changed ("" when unknown): when ns
// kept the same keys (so every exposed name stays), only ns's items are
// looked at (syncSource); when its keys changed, ns's items and those
// whose bare name it takes or gives back (syncNames). Otherwise every
// item of the kind is named again (syncAll); a definition is made again
// only for an item whose value changed (a different pointer), unless
// force is set (Sync), which describes every item again.
func (s *Server) sync(ctx context.Context, k toolkit.Kind, ns string, force bool) error {
	// List under syncMu, so that a list read earlier is never applied
	// after one read later.
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	// Every tool is registered; each client's lists are filtered by the
	// policy for its principal (policyMiddleware).
	ctx = policyctx.Unfiltered(ctx)
	if ns != "" && !s.serves(ns) {
		return nil // no item of ns is served here (WithNamespaces)
	}
	if ns != "" && !force {
		done, err := s.syncSource(ctx, k, ns)
		if done || err != nil {
			return err
		}
		if s.syncNames(ctx, k, ns) {
			return nil
		}
	}
	return s.syncAll(ctx, k, force)
}

// pending is a definition to register.
type pending struct {
	key string
	def definition
}

// syncSource applies a change of namespace ns's items of kind k when the
// namespace kept the same keys and the kind the same number of items: then
// no exposed name changes, and only ns's items whose value changed are
// described again. It reports false when that does not hold (syncAll must
// run). Templates, whose read routes depend on every template, always go
// through syncAll.
func (s *Server) syncSource(ctx context.Context, k toolkit.Kind, ns string) (bool, error) {
	st := &s.kinds[k]
	keys, known := st.sources[ns]
	if !known || k == toolkit.KindTemplate {
		return false, nil
	}
	resp, err := s.list(ctx, toolkit.ListRequest{Type: k.ListType(), Namespace: ns})
	if err != nil {
		// A namespace that is gone changed the kind's names.
		return false, nil
	}
	if len(resp.Items) != len(keys) {
		return false, nil
	}
	for i, it := range resp.Items {
		if it.Key() != keys[i] {
			return false, nil
		}
	}
	// An addition or removal elsewhere that is still to be announced
	// changes names too.
	var zero uint
	if all, err := s.list(ctx, toolkit.ListRequest{Type: k.ListType(), Limit: &zero}); err != nil || all.Count != uint(st.total) {
		return false, nil
	}
	spec := &kinds[k]
	var adds []pending
	defs := map[string]cachedDef{}
	s.mu.Lock()
	namer, old := s.namers[k], s.regs[k]
	s.mu.Unlock()
	for _, it := range resp.Items {
		key := it.Key()
		exposed, ok := namer.exposed(key)
		if !ok {
			return false, nil
		}
		if c, ok := st.defs[exposed]; ok && c.reuses(it) {
			continue
		}
		d, err := spec.define(s, exposed, it)
		if err != nil {
			// It leaves the list: let the full run remove it and log why.
			return false, nil
		}
		c := cachedDef{key: key, value: it.Value, def: d, fp: fingerprint.Of(d.sdk)}
		defs[exposed] = c
		if old[exposed] != (registration{key: key, fp: c.fp}) {
			adds = append(adds, pending{key, d})
		}
	}
	s.mu.Lock()
	for exposed, c := range defs {
		s.regs[k][exposed] = registration{key: c.key, fp: c.fp}
		st.defs[exposed] = c
	}
	s.mu.Unlock()
	if failed := s.register(k, adds); len(failed) > 0 {
		s.mu.Lock()
		for _, exposed := range failed {
			delete(s.regs[k], exposed)
			delete(st.defs, exposed)
		}
		s.mu.Unlock()
	}
	return true, nil
}

// register adds definitions to the SDK server and returns the exposed
// names of those it refused.
func (s *Server) register(k toolkit.Kind, adds []pending) (failed []string) {
	spec := &kinds[k]
	for _, a := range adds {
		if err := safely(func() { spec.add(s, a.key, a.def) }); err != nil {
			s.logger.Warn("mcp server: skipping "+k.String(), "key", a.key, "error", err)
			failed = append(failed, exposedOf(a.def))
		}
	}
	return failed
}

// syncAll registers every item of kind k, naming them all again.
func (s *Server) syncAll(ctx context.Context, k toolkit.Kind, force bool) error {
	spec := &kinds[k]
	st := &s.kinds[k]
	resp, err := s.list(ctx, toolkit.ListRequest{Type: k.ListType()})
	if err != nil {
		return err
	}

	items := make([]nameItem, 0, len(resp.Items))
	byKey := make(map[string]toolkit.Item, len(resp.Items))
	order := make(map[string]int, len(resp.Items))
	sources := map[string][]string{}
	for i, it := range resp.Items {
		key := it.Key()
		name := it.Name
		if spec.uris {
			name = it.URI
		}
		items = append(items, nameItem{Key: key, Namespace: it.Namespace, Name: name})
		byKey[key] = it
		order[key] = i
		sources[it.Namespace] = append(sources[it.Namespace], key)
	}
	s.mu.Lock()
	table := s.namers[k].assign(items)
	old := s.regs[k]
	s.mu.Unlock()

	next := make(map[string]registration, len(table))
	cache := make(map[string]cachedDef, len(table))
	var adds []pending
	for exposed, ni := range table {
		it := byKey[ni.Key]
		c, ok := st.defs[exposed]
		if force || !ok || !c.reuses(it) {
			d, err := spec.define(s, exposed, it)
			if err != nil {
				s.logger.Warn("mcp server: skipping "+k.String(), "key", ni.Key, "error", err)
				continue
			}
			c = cachedDef{key: ni.Key, value: it.Value, def: d, fp: fingerprint.Of(d.sdk)}
		}
		reg := registration{key: ni.Key, fp: c.fp}
		next[exposed], cache[exposed] = reg, c
		if old[exposed] != reg {
			adds = append(adds, pending{ni.Key, c.def})
		}
	}
	var remove []string
	for exposed := range old {
		if _, ok := next[exposed]; !ok {
			remove = append(remove, exposed)
		}
	}
	if len(remove) > 0 {
		spec.remove(s, remove...)
	}
	// The tables (and template routes) are published before the SDK
	// announces the new items, so a client that sees one can use it at once.
	publish := func() {
		s.regs[k] = next
		if k == toolkit.KindTemplate {
			s.tmplRoutes = templateRoutes(cache, next, order)
		}
	}
	s.mu.Lock()
	publish()
	s.mu.Unlock()
	if failed := s.register(k, adds); len(failed) > 0 {
		s.mu.Lock()
		for _, exposed := range failed {
			delete(next, exposed)
			delete(cache, exposed)
		}
		publish()
		s.mu.Unlock()
	}
	st.defs, st.sources, st.total = cache, sources, len(resp.Items)
	s.mu.Lock()
	st.names = buildNames(s.namers[k], items)
	s.mu.Unlock()
	return nil
}

// exposedOf returns the exposed name an SDK definition was made for.
func exposedOf(d definition) string {
	switch v := d.sdk.(type) {
	case *sdk.Tool:
		return v.Name
	case *sdk.Prompt:
		return v.Name
	case *sdk.Resource:
		return v.URI
	case *sdk.ResourceTemplate:
		return v.URITemplate
	}
	return ""
}

// safely runs f and turns a panic into an error: the SDK panics on some
// invalid registrations.
func safely(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}

// valueOf returns the item's value as the kind's interface T.
func valueOf[T any](it toolkit.Item) (T, error) {
	v, ok := it.Value.(T)
	if !ok {
		return v, fmt.Errorf("%w: %s %q holds a %T", toolkit.ErrBadParameter, it.Type, it.Key(), it.Value)
	}
	return v, nil
}

// defineAs makes the define function of a kind whose SDK definition
// describe builds from the item's value alone.
func defineAs[T, D any](describe func(exposed string, v T) (D, error)) func(*Server, string, toolkit.Item) (definition, error) {
	return func(_ *Server, exposed string, it toolkit.Item) (definition, error) {
		v, err := valueOf[T](it)
		if err != nil {
			return definition{}, err
		}
		d, err := describe(exposed, v)
		return definition{sdk: d}, err
	}
}

// addAs returns a kindSpec.add that registers a definition of type *D with
// add and the handler that handler makes for the item's key.
func addAs[D, H any](add func(*sdk.Server, *D, H), handler func(s *Server, key string) H) func(*Server, string, definition) {
	return func(s *Server, key string, d definition) { add(s.server, d.sdk.(*D), handler(s, key)) }
}

func defineResource(_ *Server, exposed string, it toolkit.Item) (definition, error) {
	r, err := valueOf[toolkit.Resource](it)
	if err != nil {
		return definition{}, err
	}
	if u, err := url.Parse(exposed); err != nil || u.Scheme == "" {
		return definition{}, fmt.Errorf("%w: invalid URI %q", toolkit.ErrBadParameter, exposed)
	}
	sr := &sdk.Resource{URI: exposed, Name: r.Name(), Description: r.Description(), MIMEType: r.Type()}
	if sr.Name == "" {
		sr.Name = it.URI
	}
	return definition{sdk: sr}, nil
}

// defineTemplate exposes a toolkit template under a URI template chosen
// like resource URIs: a URI template that two sources share is exposed as
// "uriTemplate#namespace" for the later one, so a client reads
// "uri#namespace" from it. Every exposed template has the same read
// handler, readTemplated, which resolves the URI through the toolkit. A
// toolkit template whose exposed URI template is one of
// WithResourceTemplate is skipped; so is one the SDK refuses.
func defineTemplate(s *Server, exposed string, it toolkit.Item) (definition, error) {
	t, err := valueOf[toolkit.ResourceTemplate](it)
	if err != nil {
		return definition{}, err
	}
	if _, ok := s.static[exposed]; ok {
		return definition{}, fmt.Errorf("%w: WithResourceTemplate registered the same URI template", toolkit.ErrConflict)
	}
	tmpl, err := resource.ParseURITemplate(it.URI)
	if err != nil {
		return definition{}, err
	}
	suffix, found := strings.CutPrefix(exposed, it.URI)
	if !found {
		return definition{}, fmt.Errorf("%w: exposed template %q does not extend %q", toolkit.ErrBadParameter, exposed, it.URI)
	}
	st, err := sdkTemplate(exposed, t)
	if err != nil {
		return definition{}, err
	}
	return definition{sdk: st, route: &templateRoute{suffix: suffix, ns: it.Namespace, tmpl: tmpl}}, nil
}

// templateRoute is one toolkit template registered with the SDK server:
// suffix is what its exposed URI template adds to the toolkit's ("" or
// "#namespace", see the guide docs/serving.md), tmpl the toolkit's URI template.
type templateRoute struct {
	suffix string
	ns     string
	tmpl   *resource.URITemplate
}

// routeOf returns the route a read of uri takes (see readTemplated) and
// the URI its template matched: uri without the route's suffix.
func routeOf(routes []templateRoute, uri string) (templateRoute, string, bool) {
	for _, r := range routes {
		u := uri
		if r.suffix != "" {
			var ok bool
			if u, ok = strings.CutSuffix(uri, r.suffix); !ok {
				continue
			}
		}
		if _, ok := r.tmpl.Match(u); ok {
			return r, u, true
		}
	}
	return templateRoute{}, "", false
}

// templateRoutes orders the routes of the registered templates as reads
// try them: qualified templates first (their suffix tells them apart),
// then in toolkit order, as Lookup tries templates.
func templateRoutes(defs map[string]cachedDef, regs map[string]registration, order map[string]int) []templateRoute {
	list := make([]string, 0, len(defs))
	for exposed := range defs {
		list = append(list, exposed)
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := defs[list[i]].def.route, defs[list[j]].def.route
		if len(a.suffix) != len(b.suffix) {
			return len(a.suffix) > len(b.suffix)
		}
		return order[regs[list[i]].key] < order[regs[list[j]].key]
	})
	routes := make([]templateRoute, len(list))
	for i, exposed := range list {
		routes[i] = *defs[exposed].def.route
	}
	return routes
}

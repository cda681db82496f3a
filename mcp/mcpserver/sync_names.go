package mcpserver

import (
	"context"
	"slices"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/fingerprint"
)

// nameState is the name policy's view of one kind, kept between
// synchronisations so that a source that adds or removes items (or
// appears, or goes) is named without naming every item again. It is
// guarded by Server.syncMu.
//
// Every item claims one candidate name: its bare name when it is the
// first valid holder of that name in toolkit order (and names are not
// always qualified), its qualified name otherwise. When no two items claim
// the same candidate, the name policy (namer.assign) gives every item
// exactly its candidate: no suffix is needed anywhere. The incremental
// path keeps the claims up to date and falls back to naming everything
// as soon as two claims collide.
type nameState struct {
	valid      bool                // built by the last full run
	items      map[string]nameItem // key → item
	holders    map[string][]string // bare name → keys of its valid holders, in toolkit order
	claims     map[string]int      // candidate name → items claiming it
	collisions int                 // candidates claimed more than once
	order      []string            // namespaces with items, in toolkit order
}

// buildNames records the state of items (in toolkit order, unique keys)
// after a full run of n.assign.
func buildNames(n *namer, items []nameItem) nameState {
	ns := nameState{
		valid:   true,
		items:   make(map[string]nameItem, len(items)),
		holders: map[string][]string{},
		claims:  make(map[string]int, len(items)),
	}
	for _, it := range items {
		if _, dup := ns.items[it.Key]; dup {
			ns.valid = false
			continue
		}
		ns.items[it.Key] = it
		if ns.bareable(n, it) {
			ns.holders[it.Name] = append(ns.holders[it.Name], it.Key)
		}
		if len(ns.order) == 0 || ns.order[len(ns.order)-1] != it.Namespace {
			ns.order = append(ns.order, it.Namespace)
		}
	}
	for _, it := range ns.items {
		ns.claim(ns.candidate(n, it))
	}
	return ns
}

// bareable reports whether it may hold its bare name.
func (ns *nameState) bareable(n *namer, it nameItem) bool { return !n.always && n.valid(it.Name) }

// candidate returns the name it claims.
func (ns *nameState) candidate(n *namer, it nameItem) string {
	if ns.bareable(n, it) {
		if hs := ns.holders[it.Name]; len(hs) > 0 && hs[0] == it.Key {
			return it.Name
		}
	}
	return n.qualify(it)
}

func (ns *nameState) claim(name string) {
	ns.claims[name]++
	if ns.claims[name] == 2 {
		ns.collisions++
	}
}

func (ns *nameState) unclaim(name string) {
	if ns.claims[name] == 2 {
		ns.collisions--
	}
	if ns.claims[name]--; ns.claims[name] <= 0 {
		delete(ns.claims, name)
	}
}

// sourceRanks returns the position of each namespace in toolkit order:
// builtins, connectors in registration order, the user namespace.
func (s *Server) sourceRanks() map[string]int {
	conns := s.tk.Connectors()
	ranks := make(map[string]int, len(conns)+1)
	ranks[toolkit.BuiltinNamespace] = 0
	for i, c := range conns {
		ranks[c.Namespace] = i + 1
	}
	return ranks
}

// syncNames applies a change of namespace ns's items of kind k whose keys
// changed (or whose namespace appeared or went): only the items of ns,
// and the items of other sources whose bare name ns takes or gives back,
// are named and described again. It reports false when the change cannot
// be applied so (a name collision somewhere, another source's change not
// yet announced, templates): syncAll must run, and rebuilds the state.
func (s *Server) syncNames(ctx context.Context, k toolkit.Kind, ns string) bool {
	st := &s.kinds[k]
	names := &st.names
	if !names.valid || names.collisions > 0 || k == toolkit.KindTemplate {
		return false
	}
	spec := &kinds[k]
	resp, err := s.list(ctx, toolkit.ListRequest{Type: k.ListType(), Namespace: ns})
	var fresh []toolkit.Item
	if err == nil {
		fresh = resp.Items
	} else if _, known := st.sources[ns]; !known {
		return false
	}
	oldKeys := st.sources[ns]
	var zero uint
	all, err := s.list(ctx, toolkit.ListRequest{Type: k.ListType(), Limit: &zero})
	if err != nil || all.Count != uint(st.total-len(oldKeys)+len(fresh)) {
		return false
	}
	// Every other source must be where it was, in the same order.
	ranks := s.sourceRanks()
	if _, ok := ranks[ns]; !ok && len(fresh) > 0 {
		return false
	}
	prev := -1
	for _, o := range names.order {
		if o == ns && len(fresh) == 0 {
			continue
		}
		r, ok := ranks[o]
		if !ok || r <= prev {
			return false
		}
		prev = r
	}

	s.mu.Lock()
	namer := s.namers[k]
	s.mu.Unlock()
	freshKeys := make([]string, len(fresh))
	byKey := make(map[string]toolkit.Item, len(fresh))
	for i, it := range fresh {
		freshKeys[i] = it.Key()
		byKey[freshKeys[i]] = it
	}
	affected := map[string]bool{} // keys whose name may change
	for _, key := range oldKeys {
		if _, kept := byKey[key]; kept {
			continue
		}
		it := names.items[key]
		names.unclaim(names.candidate(namer, it))
		if names.bareable(namer, it) {
			hs := names.holders[it.Name]
			first := hs[0] == key
			hs = slices.DeleteFunc(slices.Clone(hs), func(h string) bool { return h == key })
			if len(hs) == 0 {
				delete(names.holders, it.Name)
			} else {
				names.holders[it.Name] = hs
				if first { // the next holder takes the bare name
					y := names.items[hs[0]]
					names.unclaim(namer.qualify(y))
					names.claim(y.Name)
					affected[y.Key] = true
				}
			}
		}
		delete(names.items, key)
		affected[key] = true
	}
	had := make(map[string]bool, len(oldKeys))
	for _, key := range oldKeys {
		had[key] = true
	}
	for _, key := range freshKeys {
		if had[key] {
			continue
		}
		it := byKey[key]
		name := it.Name
		if spec.uris {
			name = it.URI
		}
		ni := nameItem{Key: key, Namespace: it.Namespace, Name: name}
		names.items[key] = ni
		affected[key] = true
		if !names.bareable(namer, ni) {
			names.claim(namer.qualify(ni))
			continue
		}
		hs := slices.Clone(names.holders[ni.Name])
		at, _ := slices.BinarySearchFunc(hs, ranks[ns], func(h string, r int) int {
			return ranks[names.items[h].Namespace] - r
		})
		hs = slices.Insert(hs, at, key)
		names.holders[ni.Name] = hs
		if at == 0 {
			if len(hs) > 1 { // the former holder is qualified now
				z := names.items[hs[1]]
				names.unclaim(z.Name)
				names.claim(namer.qualify(z))
				affected[z.Key] = true
			}
			names.claim(ni.Name)
		} else {
			names.claim(namer.qualify(ni))
		}
	}
	if names.collisions > 0 {
		names.valid = false // syncAll rebuilds it
		return false
	}

	// The new names, and what to register under them.
	var removeNames []string
	var adds []pending
	type rename struct{ key, from, to string }
	var renames []rename
	for key := range affected {
		from, had := namer.exposed(key)
		ni, present := names.items[key]
		to := ""
		if present {
			to = names.candidate(namer, ni)
		}
		if had && from != to {
			removeNames = append(removeNames, from)
		}
		renames = append(renames, rename{key, from, to})
	}
	defs := map[string]cachedDef{}
	regs := s.regs[k] // written under syncMu only, which is held
	describe := func(key, exposed string, it toolkit.Item) {
		c, ok := st.defs[exposed]
		if ok && c.reuses(it) {
			return
		}
		d, err := spec.define(s, exposed, it)
		if err != nil {
			s.logger.Warn("mcp server: skipping "+k.String(), "key", key, "error", err)
			return
		}
		c = cachedDef{key: key, value: it.Value, def: d, fp: fingerprint.Of(d.sdk)}
		defs[exposed] = c
		if regs[exposed] != (registration{key: key, fp: c.fp}) || slices.Contains(removeNames, exposed) {
			adds = append(adds, pending{key, d})
		}
	}
	for _, r := range renames {
		_, mine := byKey[r.key]
		if r.to == "" || (r.to == r.from && !mine) {
			continue
		}
		it, ok := byKey[r.key]
		if !ok {
			// Another source's item that was renamed.
			got, err := s.tk.LookupType(ctx, k.ListType(), r.key)
			if err != nil {
				names.valid = false
				return false
			}
			it = got
		}
		describe(r.key, r.to, it)
	}
	// ns's items that kept their key may have changed too.
	for _, key := range freshKeys {
		if affected[key] {
			continue
		}
		exposed, _ := namer.exposed(key)
		describe(key, exposed, byKey[key])
	}

	if len(removeNames) > 0 {
		spec.remove(s, removeNames...)
	}
	s.mu.Lock()
	for _, e := range removeNames {
		delete(regs, e)
		delete(st.defs, e)
	}
	for _, r := range renames {
		if r.to == "" {
			delete(namer.byKey, r.key)
			continue
		}
		namer.byKey[r.key] = r.to
	}
	for exposed, c := range defs {
		regs[exposed] = registration{key: c.key, fp: c.fp}
		st.defs[exposed] = c
	}
	s.mu.Unlock()
	if failed := s.register(k, adds); len(failed) > 0 {
		s.mu.Lock()
		for _, exposed := range failed {
			delete(regs, exposed)
			delete(st.defs, exposed)
		}
		s.mu.Unlock()
	}

	// The sources as they are now.
	st.total = st.total - len(oldKeys) + len(fresh)
	names.order = slices.DeleteFunc(names.order, func(o string) bool { return o == ns })
	if len(fresh) > 0 {
		st.sources[ns] = freshKeys
		at, _ := slices.BinarySearchFunc(names.order, ranks[ns], func(o string, r int) int { return ranks[o] - r })
		names.order = slices.Insert(names.order, at, ns)
	} else {
		delete(st.sources, ns)
	}
	return true
}

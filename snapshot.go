package toolkit

import (
	"slices"
	"strings"

	"github.com/llmkit/toolkit/resource"
)

// entry is one item of a snapshot. It is immutable once published, except
// for the lazily resolved schemas, which are guarded by a sync.Once.
type entry struct {
	item    Item
	kind    Kind
	key     string // name for tools and prompts, URI for resources, URI template for templates
	schemas *toolSchemas
	tmpl    *resource.URITemplate // templates: the parsed URI template
}

// namespace returns the namespace of e, or "" for an item called by value
// that the toolkit does not hold.
func (e *entry) namespace() string {
	if e == nil {
		return ""
	}
	return e.item.Namespace
}

// source is the immutable view of one namespace: the builtins, a
// connector, or the user namespace.
type source struct {
	ns    string
	items [NumKinds][]*entry // sorted by key
	index [NumKinds]map[string]*entry
}

func newSource(ns string, items [NumKinds][]*entry) *source {
	s := &source{ns: ns}
	for k := range NumKinds {
		list := items[k]
		slices.SortFunc(list, func(a, b *entry) int { return strings.Compare(a.key, b.key) })
		s.items[k] = list
		m := make(map[string]*entry, len(list))
		for _, e := range list {
			m[e.key] = e
		}
		s.index[k] = m
	}
	return s
}

// snapshot is the immutable state read by Lookup, List and Call. A change
// builds a new snapshot and publishes it atomically; readers never lock.
type snapshot struct {
	sources []*source // builtin, connectors in registration order, user
	byNS    map[string]*source
	all     [NumKinds][]*entry
	// bareName maps a bare name to the entry Lookup returns for it: the
	// first source (builtin, connectors in registration order, user) that
	// has an item of that name wins, and within that source a tool beats a
	// prompt, which beats a resource (by resource name). Kinds never
	// compete across sources, so a connector item never shadows a builtin
	// or an item of an earlier connector.
	bareName map[string]*entry
	// bareURI maps a resource URI to its first resource in source order.
	// Templates have no bare name and no entry here: a URI that no
	// resource has is matched against them (see lookupURI).
	bareURI map[string]*entry
	// byValue maps pointer-typed tool and prompt values to their entries,
	// so a Call with a Tool value finds its cached schemas.
	byValue map[any]*entry
	// gen counts the snapshots published by a toolkit.
	gen uint64
}

func buildSnapshot(sources []*source) *snapshot {
	s := &snapshot{sources: sources, byNS: make(map[string]*source, len(sources))}
	var total [NumKinds]int
	for _, src := range sources {
		s.byNS[src.ns] = src
		for k := range NumKinds {
			total[k] += len(src.items[k])
		}
	}
	s.byValue = make(map[any]*entry, total[KindTool]+total[KindPrompt])
	s.bareName = make(map[string]*entry, total[KindTool]+total[KindPrompt]+total[KindResource])
	s.bareURI = make(map[string]*entry, total[KindResource])
	for k := range NumKinds {
		s.all[k] = make([]*entry, 0, total[k])
	}
	// Sources in order, and kinds in order within a source: the first
	// entry to claim a bare name keeps it.
	for _, src := range sources {
		for k := range NumKinds {
			for _, e := range src.items[k] {
				s.all[k] = append(s.all[k], e)
				if k == KindTemplate {
					continue
				}
				name := e.key
				if k == KindResource {
					name = e.item.Name
					if _, ok := s.bareURI[e.key]; !ok {
						s.bareURI[e.key] = e
					}
				} else if isPointer(e.item.Value) {
					if _, ok := s.byValue[e.item.Value]; !ok {
						s.byValue[e.item.Value] = e
					}
				}
				if _, ok := s.bareName[name]; !ok {
					s.bareName[name] = e
				}
			}
		}
	}
	return s
}

// entryFor returns the entry of a tool or prompt value, or nil.
func (s *snapshot) entryFor(v any) *entry {
	if !isPointer(v) {
		return nil
	}
	return s.byValue[v]
}

// sameItems reports whether two sorted entry lists hold the same keys and
// the same values.
func sameItems(a, b []*entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].key != b[i].key || !identical(a[i].item.Value, b[i].item.Value) {
			return false
		}
	}
	return true
}

package toolkit

import (
	"context"
	"fmt"
	"strings"

	"github.com/llmkit/toolkit/internal/names"
)

// maxKey bounds the length of a Lookup key.
const maxKey = 8192

// Lookup finds a tool, prompt or resource and returns it (a Tool, Prompt or
// Resource). Keys take four forms, tried in this order:
//
//  1. "namespace.name": a tool or prompt of one namespace ("builtin", a
//     connector's namespace, or "user"). When the part before the first dot
//     is a namespace, the key is qualified and never matches elsewhere.
//  2. "uri#namespace": a resource of one namespace.
//  3. "name": an item of that name from the first source that has one —
//     the builtins, then connectors in registration order, then "user" —
//     and within that source a tool before a prompt before a resource (by
//     name). An item of a later source never shadows one of an earlier
//     source, whatever their kinds: a remote tool cannot hide a builtin
//     prompt of the same name.
//  4. "uri": the first resource with this URI, in the same source order.
//
// A URI that no resource has is matched against the resource templates:
// for "uri#namespace" those of that namespace only, for "uri" those of
// every source in the same order (within a source, in byte order of the
// URI templates, which puts a letter, digit or most punctuation before an
// expression where two templates differ).
// The first template that matches gives the resource (ResourceTemplate's
// Open), an item of the template's namespace whose Key leads back through
// the template. Templates themselves have no bare name; LookupType with
// ListTypeTemplates finds them by URI template.
//
// A key that is not of these forms wraps ErrBadParameter; a key that matches
// nothing wraps ErrNotFound. Lookup reads the latest snapshot: it never
// blocks on a connector and does not allocate on a hit of forms 1 to 4 (a
// resource given by a template is made for the call).
func (tk *Toolkit) Lookup(ctx context.Context, key string) (any, error) {
	e, err := tk.snap.Load().lookup(key)
	if err != nil {
		return nil, tk.explainMiss(key, err)
	}
	return e.item.Value, nil
}

// LookupItem is Lookup returning the item with its namespace and kind.
func (tk *Toolkit) LookupItem(ctx context.Context, key string) (Item, error) {
	e, err := tk.snap.Load().lookup(key)
	if err != nil {
		return Item{}, tk.explainMiss(key, err)
	}
	return e.item, nil
}

// LookupType is LookupItem restricted to one kind of item: it finds the
// tool, the prompt or the resource (t) that the key names, with the same key
// forms and order as Lookup, ignoring items of other kinds. MCP keeps tools,
// prompts and resources apart, so a server and a prompt of the same name as
// a tool are both reachable this way. Resources include those templates
// give, as in Lookup. With ListTypeTemplates it finds a resource template
// by its URI template: "uriTemplate#namespace" (Item.Key) in that
// namespace, or "uriTemplate" in the first source that has it. It wraps
// ErrBadParameter for an unknown type or a malformed key and ErrNotFound
// for a miss; it does not allocate on a hit (but for a resource a template
// gives).
func (tk *Toolkit) LookupType(ctx context.Context, t ListType, key string) (Item, error) {
	k, ok := t.Kind()
	if !ok {
		return Item{}, fmt.Errorf("%w: item type %q", ErrBadParameter, t)
	}
	e, err := tk.snap.Load().lookupKind(k, key)
	if err != nil {
		return Item{}, tk.explainMiss(key, err)
	}
	return e.item, nil
}

// lookupKind finds an item of kind k. A qualified key is one map read; a
// bare name walks the sources in order (there are few of them).
func (s *snapshot) lookupKind(k Kind, key string) (*entry, error) {
	uri, err := parseKey(key)
	if err != nil {
		return nil, err
	}
	switch {
	case uri && k == KindResource:
		return s.lookupURI(key)
	case uri && k == KindTemplate:
		return s.lookupTemplate(key)
	case uri:
		return nil, fmt.Errorf("%w: no %s %q (a URI names a resource)", ErrNotFound, k, key)
	case k == KindResource:
		// A resource by name: the one Lookup would give, if a resource.
		if e := s.bareName[key]; e != nil && e.kind == KindResource {
			return e, nil
		}
		return nil, fmt.Errorf("%w: no resource named %q", ErrNotFound, key)
	case k == KindTemplate:
		return nil, fmt.Errorf("%w: no resource template %q (templates are found by URI template)", ErrNotFound, key)
	}
	if i := strings.IndexByte(key, '.'); i > 0 {
		if src := s.byNS[key[:i]]; src != nil {
			if e := src.index[k][key[i+1:]]; e != nil {
				return e, nil
			}
			return nil, fmt.Errorf("%w: no %s %q in namespace %q", ErrNotFound, k, key[i+1:], key[:i])
		}
	}
	for _, src := range s.sources {
		if e := src.index[k][key]; e != nil {
			return e, nil
		}
	}
	return nil, fmt.Errorf("%w: no %s named %q", ErrNotFound, k, key)
}

func (s *snapshot) lookup(key string) (*entry, error) {
	uri, err := parseKey(key)
	if err != nil {
		return nil, err
	}
	if uri {
		return s.lookupURI(key)
	}
	if i := strings.IndexByte(key, '.'); i > 0 {
		if src := s.byNS[key[:i]]; src != nil {
			name := key[i+1:]
			if e := src.index[KindTool][name]; e != nil {
				return e, nil
			}
			if e := src.index[KindPrompt][name]; e != nil {
				return e, nil
			}
			return nil, fmt.Errorf("%w: no tool or prompt %q in namespace %q", ErrNotFound, name, key[:i])
		}
	}
	if e := s.bareName[key]; e != nil {
		return e, nil
	}
	return nil, fmt.Errorf("%w: no tool, prompt or resource named %q", ErrNotFound, key)
}

// lookupURI finds the resource of a URI key ("uri" or "uri#namespace"):
// a resource with that URI, else one that a template gives.
func (s *snapshot) lookupURI(key string) (*entry, error) {
	var qualified *source
	if i := strings.LastIndexByte(key, '#'); i > 0 {
		if src := s.byNS[key[i+1:]]; src != nil {
			if e := src.index[KindResource][key[:i]]; e != nil {
				return e, nil
			}
			qualified = src
		}
	}
	if e := s.bareURI[key]; e != nil {
		return e, nil
	}
	// The allocation-free paths are over: try the templates.
	if qualified != nil {
		uri := key[:len(key)-len(qualified.ns)-1]
		if e, err := qualified.fromTemplate(uri); e != nil || err != nil {
			return e, err
		}
		return nil, fmt.Errorf("%w: no resource with URI %q in namespace %q", ErrNotFound, uri, qualified.ns)
	}
	for _, src := range s.sources {
		if e, err := src.fromTemplate(key); e != nil || err != nil {
			return e, err
		}
	}
	return nil, fmt.Errorf("%w: no resource with URI %q", ErrNotFound, key)
}

// fromTemplate returns the resource that the first of src's templates to
// match uri gives, as an entry of src's namespace, or nil if none matches.
// A template whose Open fails or panics makes the error.
func (src *source) fromTemplate(uri string) (*entry, error) {
	for _, t := range src.items[KindTemplate] {
		if _, ok := t.tmpl.Match(uri); !ok {
			continue
		}
		r, err := openTemplate(t.item.Value.(ResourceTemplate), uri)
		if err == nil && isNil(r) {
			err = fmt.Errorf("%w: no resource", ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("resource %q from template %q of namespace %q: %w", uri, t.key, src.ns, err)
		}
		return &entry{
			item: Item{Namespace: src.ns, Type: ListTypeResources, Name: r.Name(), URI: uri, Value: r},
			kind: KindResource,
			key:  uri,
		}, nil
	}
	return nil, nil
}

// openTemplate calls t.Open, turning a panic into an error.
func openTemplate(t ResourceTemplate, uri string) (r Resource, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("%w: Open panicked: %v", ErrBadParameter, p)
		}
	}()
	return t.Open(uri)
}

// lookupTemplate finds a template by "uriTemplate#namespace" or, in source
// order, by "uriTemplate".
func (s *snapshot) lookupTemplate(key string) (*entry, error) {
	if i := strings.LastIndexByte(key, '#'); i > 0 {
		if src := s.byNS[key[i+1:]]; src != nil {
			if e := src.index[KindTemplate][key[:i]]; e != nil {
				return e, nil
			}
			return nil, fmt.Errorf("%w: no resource template %q in namespace %q", ErrNotFound, key[:i], src.ns)
		}
	}
	for _, src := range s.sources {
		if e := src.index[KindTemplate][key]; e != nil {
			return e, nil
		}
	}
	return nil, fmt.Errorf("%w: no resource template %q", ErrNotFound, key)
}

// parseKey checks the form of a Lookup key and reports whether it is a URI
// (a scheme followed by ':'). Names are made of [A-Za-z0-9_.-]; URIs may hold
// any printable ASCII or UTF-8 but no spaces or control characters.
func parseKey(key string) (uri bool, err error) {
	if key == "" {
		return false, fmt.Errorf("%w: empty lookup key", ErrBadParameter)
	}
	if len(key) > maxKey {
		return false, fmt.Errorf("%w: lookup key of %d bytes is longer than %d", ErrBadParameter, len(key), maxKey)
	}
	if colon := strings.IndexByte(key, ':'); colon >= 0 {
		if !names.IsScheme(key[:colon]) {
			return false, fmt.Errorf("%w: lookup key %q: invalid URI scheme", ErrBadParameter, key)
		}
		for i := colon + 1; i < len(key); i++ {
			if c := key[i]; c <= ' ' || c == 0x7f {
				return false, fmt.Errorf("%w: lookup key %q: space or control character in URI", ErrBadParameter, key)
			}
		}
		return true, nil
	}
	if !validNameKey(key) {
		return false, fmt.Errorf("%w: lookup key %q: want name, namespace.name, uri or uri#namespace", ErrBadParameter, key)
	}
	return false, nil
}

// validNameKey reports whether key is made of [A-Za-z0-9_.-] and is not
// longer than a namespace, a dot and a remote name.
func validNameKey(key string) bool {
	if len(key) > names.MaxName+1+names.MaxRemoteName {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

package toolkit

import (
	"context"
	"fmt"

	"github.com/llmkit/toolkit/internal/names"
	"github.com/llmkit/toolkit/internal/schemaguard"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

// kindOps is what registration needs to know about the items of one kind,
// of Go type T: how an item becomes an entry, what a builtin and an item a
// connector serves must satisfy, and how a connector lists them. The
// algorithms that register items (the Add methods, a connector's listing)
// are written once over it.
type kindOps[T any] struct {
	kind Kind
	// noun names the kind in messages.
	noun string
	// entry makes the entry of v for namespace ns, checking what every item
	// of the kind must satisfy wherever it comes from (a resource's URI, a
	// template's URI template).
	entry func(ns string, v T) (*entry, error)
	// builtin checks what a builtin must satisfy besides, and may complete
	// e. Nil when there is nothing more.
	builtin func(v T, e *entry) error
	// remote checks what an item a connector serves must satisfy besides.
	// Nil when there is nothing more.
	remote func(e *entry) error
	// list lists a connector's items of the kind: nil when the connector
	// does not serve it. It takes the connector first, as a method
	// expression of Connector does.
	list func(c Connector, ctx context.Context) ([]T, error)
}

// kindLister is a kindOps with its item type hidden, so that code holding
// only a Kind can list a connector's items of that kind.
type kindLister interface {
	// connEntries lists c's items and makes the entries of those that can
	// be served in namespace ns, passing the error of each skipped one to
	// skip.
	connEntries(ctx context.Context, c Connector, ns string, skip func(error)) ([]*entry, error)
}

// kindListers holds the kindOps of each kind.
var kindListers = [NumKinds]kindLister{&toolOps, &promptOps, &resourceOps, &templateOps}

func (ops *kindOps[T]) connEntries(ctx context.Context, c Connector, ns string, skip func(error)) ([]*entry, error) {
	items, err := ops.list(c, ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*entry, 0, len(items))
	seen := make(map[string]bool, len(items))
	for _, v := range items {
		e, err := connEntry(ops, ns, v)
		if err == nil && seen[e.key] {
			err = fmt.Errorf("%w: duplicate %s %q", ErrConflict, ops.kind, e.key)
		}
		if err != nil {
			skip(err)
			continue
		}
		seen[e.key] = true
		out = append(out, e)
	}
	return out, nil
}

// addItems checks builtins of one kind and installs them: every item is
// checked before any is added, so one bad item refuses the whole call.
func addItems[T any](tk *Toolkit, ops *kindOps[T], items []T) error {
	entries := make([]*entry, 0, len(items))
	seen := make(map[string]bool, len(items))
	for i, v := range items {
		if isNil(v) {
			return fmt.Errorf("%w: %s %d is nil", ErrBadParameter, ops.noun, i)
		}
		e, err := ops.entry(BuiltinNamespace, v)
		if err == nil && ops.builtin != nil {
			err = ops.builtin(v, e)
		}
		if err != nil {
			return err
		}
		if seen[e.key] {
			return fmt.Errorf("%w: %w: %s %q is given twice", ErrBadParameter, ErrConflict, ops.noun, e.key)
		}
		seen[e.key] = true
		entries = append(entries, e)
	}
	return tk.addBuiltins(ops.kind, entries)
}

var toolOps = kindOps[Tool]{
	kind:  KindTool,
	noun:  "tool",
	entry: named[Tool](KindTool),
	builtin: builtinNamed(func(t Tool) bool { _, output := t.(*tool.OutputTool); return output },
		func(t Tool, e *entry) error {
			r, err := resolveToolSchemas(t)
			if err != nil {
				return err
			}
			e.schemas = &toolSchemas{resolvedSchemas: r}
			e.schemas.once.Do(func() {})
			return nil
		}),
	remote: remoteName,
	list:   Connector.ListTools,
}

var promptOps = kindOps[Prompt]{
	kind:  KindPrompt,
	noun:  "prompt",
	entry: named[Prompt](KindPrompt),
	builtin: builtinNamed(nil, func(p Prompt, _ *entry) error {
		s, err := p.InputSchema()
		if err == nil && s != nil {
			if _, err = schemaguard.Check(s); err == nil {
				_, err = s.Resolve(nil)
			}
		}
		if err != nil {
			return fmt.Errorf("input schema: %w", err)
		}
		return nil
	}),
	remote: remoteName,
	list:   Connector.ListPrompts,
}

var resourceOps = kindOps[Resource]{
	kind: KindResource,
	noun: "resource",
	entry: func(ns string, r Resource) (*entry, error) {
		uri := r.URI()
		if err := resource.CheckURI(uri); err != nil {
			return nil, fmt.Errorf("resource %q: %w", r.Name(), err)
		}
		return &entry{
			item: Item{Namespace: ns, Type: ListTypeResources, Name: r.Name(), URI: uri, Value: r},
			kind: KindResource,
			key:  uri,
		}, nil
	},
	list: Connector.ListResources,
}

var templateOps = kindOps[ResourceTemplate]{
	kind: KindTemplate,
	noun: "resource template",
	entry: func(ns string, t ResourceTemplate) (*entry, error) {
		raw := t.URITemplate()
		tmpl, err := resource.ParseURITemplate(raw)
		if err != nil {
			return nil, fmt.Errorf("resource template %q: %w", t.Name(), err)
		}
		return &entry{
			item: Item{Namespace: ns, Type: ListTypeTemplates, Name: t.Name(), URI: raw, Value: t},
			kind: KindTemplate,
			key:  raw,
			tmpl: tmpl,
		}, nil
	},
	list: func(c Connector, ctx context.Context) ([]ResourceTemplate, error) {
		if tl, ok := c.(TemplateLister); ok {
			return tl.ListResourceTemplates(ctx)
		}
		return nil, nil
	},
}

// named returns the kindOps.entry of tools or prompts (kind k): see
// namedEntry.
func named[T interface{ Name() string }](k Kind) func(ns string, v T) (*entry, error) {
	return func(ns string, v T) (*entry, error) { return namedEntry(ns, k, v.Name(), v), nil }
}

// namedEntry makes the entry of a tool or prompt, whose key is its name.
// A tool's schemas are resolved on its first call.
func namedEntry(ns string, k Kind, name string, v any) *entry {
	e := &entry{
		item: Item{Namespace: ns, Type: k.ListType(), Name: name, Value: v},
		kind: k,
		key:  name,
	}
	if k == KindTool {
		e.schemas = &toolSchemas{}
	}
	return e
}

// builtinNamed returns the kindOps.builtin of tools or prompts: the name is
// checked by builtinName (reserved names allowed where reservedOK, if not
// nil, says so), then resolve resolves the item's schemas into e now, so
// that a bad one is refused here rather than on the first call.
func builtinNamed[T any](reservedOK func(T) bool, resolve func(T, *entry) error) func(T, *entry) error {
	return func(v T, e *entry) error {
		if err := builtinName(e, reservedOK != nil && reservedOK(v)); err != nil {
			return err
		}
		if err := resolve(v, e); err != nil {
			return fmt.Errorf("%w: %s %q: %w", ErrBadParameter, e.kind, e.key, err)
		}
		return nil
	}
}

// builtinName checks the name of a builtin tool or prompt: a valid
// identifier, and not a reserved name unless reservedOK.
func builtinName(e *entry, reservedOK bool) error {
	if err := names.CheckIdent(e.kind.String(), e.key); err != nil {
		return err
	}
	if names.IsReservedName(e.key) && !reservedOK {
		return fmt.Errorf("%w: %s name %q is reserved", ErrBadParameter, e.kind, e.key)
	}
	return nil
}

// remoteName checks the name of a tool or prompt a connector serves: what
// MCP allows.
func remoteName(e *entry) error {
	if !names.IsRemoteName(e.key) {
		return fmt.Errorf("%w: %s name %q: want 1 to %d characters of [A-Za-z0-9_.-]", ErrBadParameter, e.kind, e.key, names.MaxRemoteName)
	}
	return nil
}

package toolkit

import (
	"errors"
	"fmt"

	"github.com/llmkit/toolkit/internal/names"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

// AddTool registers builtin tools. Every tool is checked before any is
// added: a nil tool, an invalid or reserved name, a name already taken by a
// builtin tool or twice in the call, or an input schema that is not a
// resolvable object schema, refuses the whole call with an error wrapping
// ErrBadParameter (and ErrConflict for a duplicate) that names the tool. The
// reserved name "submit_output" is accepted only for a *tool.OutputTool.
func (tk *Toolkit) AddTool(items ...Tool) error {
	entries := make([]*entry, 0, len(items))
	seen := make(map[string]bool, len(items))
	for i, t := range items {
		if isNil(t) {
			return fmt.Errorf("%w: tool %d is nil", ErrBadParameter, i)
		}
		name := t.Name()
		if err := names.CheckIdent("tool", name); err != nil {
			return err
		}
		if names.IsReservedName(name) {
			if _, ok := t.(*tool.OutputTool); !ok {
				return fmt.Errorf("%w: tool name %q is reserved", ErrBadParameter, name)
			}
		}
		if seen[name] {
			return fmt.Errorf("%w: %w: tool %q is given twice", ErrBadParameter, ErrConflict, name)
		}
		seen[name] = true
		in, out, err := resolveToolSchemas(t)
		if err != nil {
			return fmt.Errorf("%w: tool %q: %w", ErrBadParameter, name, err)
		}
		sc := &toolSchemas{in: in, out: out}
		sc.once.Do(func() {})
		entries = append(entries, &entry{
			item:    Item{Namespace: BuiltinNamespace, Type: ListTypeTools, Name: name, Value: t},
			kind:    kindTool,
			key:     name,
			schemas: sc,
		})
	}
	return tk.addBuiltins(kindTool, entries)
}

// AddPrompt registers builtin prompts, with the same all-or-nothing checks
// as AddTool: nil, invalid, reserved or duplicate names and unresolvable
// input schemas are refused.
func (tk *Toolkit) AddPrompt(items ...Prompt) error {
	entries := make([]*entry, 0, len(items))
	seen := make(map[string]bool, len(items))
	for i, p := range items {
		if isNil(p) {
			return fmt.Errorf("%w: prompt %d is nil", ErrBadParameter, i)
		}
		name := p.Name()
		if err := names.CheckIdent("prompt", name); err != nil {
			return err
		}
		if names.IsReservedName(name) {
			return fmt.Errorf("%w: prompt name %q is reserved", ErrBadParameter, name)
		}
		if seen[name] {
			return fmt.Errorf("%w: %w: prompt %q is given twice", ErrBadParameter, ErrConflict, name)
		}
		seen[name] = true
		s, err := p.InputSchema()
		if err == nil && s != nil {
			_, err = s.Resolve(nil)
		}
		if err != nil {
			return fmt.Errorf("%w: prompt %q: input schema: %w", ErrBadParameter, name, err)
		}
		entries = append(entries, &entry{
			item: Item{Namespace: BuiltinNamespace, Type: ListTypePrompts, Name: name, Value: p},
			kind: kindPrompt,
			key:  name,
		})
	}
	return tk.addBuiltins(kindPrompt, entries)
}

// AddResource registers builtin resources. Each needs an absolute URI with
// a scheme; a URI given twice in one call is refused. Adding a URI that is
// already registered replaces that resource and fires a
// ConnectorEventResourceUpdated event; new URIs fire one
// ConnectorEventResourceListChanged.
func (tk *Toolkit) AddResource(items ...Resource) error {
	entries := make([]*entry, 0, len(items))
	seen := make(map[string]bool, len(items))
	for i, r := range items {
		if isNil(r) {
			return fmt.Errorf("%w: resource %d is nil", ErrBadParameter, i)
		}
		uri := r.URI()
		if err := resource.CheckURI(uri); err != nil {
			return fmt.Errorf("resource %q: %w", r.Name(), err)
		}
		if seen[uri] {
			return fmt.Errorf("%w: %w: resource %q is given twice", ErrBadParameter, ErrConflict, uri)
		}
		seen[uri] = true
		entries = append(entries, &entry{
			item: Item{Namespace: BuiltinNamespace, Type: ListTypeResources, Name: r.Name(), URI: uri, Value: r},
			kind: kindResource,
			key:  uri,
		})
	}
	return tk.addBuiltins(kindResource, entries)
}

// AddResourceTemplate registers builtin resource templates, with the same
// all-or-nothing checks as AddTool: a nil template, a URI template that
// resource.ParseURITemplate refuses (it must be valid RFC 6570 and start
// with a scheme), or a URI template already registered as a builtin or
// given twice in the call (also ErrConflict) refuses the whole call with
// an error wrapping ErrBadParameter that names the template. Added
// templates fire one ConnectorEventResourceListChanged, as MCP has no
// separate notification for templates.
func (tk *Toolkit) AddResourceTemplate(items ...ResourceTemplate) error {
	entries := make([]*entry, 0, len(items))
	seen := make(map[string]bool, len(items))
	for i, t := range items {
		if isNil(t) {
			return fmt.Errorf("%w: resource template %d is nil", ErrBadParameter, i)
		}
		e, err := templateEntry(BuiltinNamespace, t)
		if err != nil {
			return fmt.Errorf("resource template %q: %w", t.Name(), err)
		}
		if seen[e.key] {
			return fmt.Errorf("%w: %w: resource template %q is given twice", ErrBadParameter, ErrConflict, e.key)
		}
		seen[e.key] = true
		entries = append(entries, e)
	}
	return tk.addBuiltins(kindTemplate, entries)
}

// templateEntry checks a template and makes its entry for namespace ns.
func templateEntry(ns string, t ResourceTemplate) (*entry, error) {
	raw := t.URITemplate()
	tmpl, err := resource.ParseURITemplate(raw)
	if err != nil {
		return nil, err
	}
	return &entry{
		item: Item{Namespace: ns, Type: ListTypeTemplates, Name: t.Name(), URI: raw, Value: t},
		kind: kindTemplate,
		key:  raw,
		tmpl: tmpl,
	}, nil
}

// addBuiltins installs checked entries of one kind, publishes a snapshot and
// queues the events.
func (tk *Toolkit) addBuiltins(k kind, entries []*entry) error {
	if len(entries) == 0 {
		return nil
	}
	tk.mu.Lock()
	defer tk.mu.Unlock()
	m := tk.builtin[k]
	if k != kindResource {
		for _, e := range entries {
			if _, ok := m[e.key]; ok {
				return fmt.Errorf("%w: %w: builtin %s %q already exists", ErrBadParameter, ErrConflict, kindTypes[k], e.key)
			}
		}
	}
	var events []ConnectorEvent
	added := false
	for _, e := range entries {
		if _, ok := m[e.key]; ok && k == kindResource {
			events = append(events, ConnectorEvent{Kind: ConnectorEventResourceUpdated, Namespace: BuiltinNamespace, URI: e.key})
		} else {
			added = true
		}
		m[e.key] = e
	}
	if added {
		events = append(events, ConnectorEvent{Kind: listChangedKind[k], Namespace: BuiltinNamespace})
	}
	tk.rebuildBuiltins()
	tk.queue(events...)
	return nil
}

// RemoveBuiltin removes a builtin tool by name, else a builtin prompt by
// name, else a builtin resource by URI, else a builtin resource template by
// URI template. It wraps ErrNotFound when nothing matches.
func (tk *Toolkit) RemoveBuiltin(key string) error {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	for k := range numKinds {
		if _, ok := tk.builtin[k][key]; ok {
			delete(tk.builtin[k], key)
			tk.rebuildBuiltins()
			tk.queue(ConnectorEvent{Kind: listChangedKind[k], Namespace: BuiltinNamespace})
			return nil
		}
	}
	return fmt.Errorf("%w: no builtin tool, prompt, resource or resource template %q", ErrNotFound, key)
}

// rebuildBuiltins rebuilds the builtin source and publishes. tk.mu must be
// held.
func (tk *Toolkit) rebuildBuiltins() {
	var items [numKinds][]*entry
	for k := range numKinds {
		items[k] = make([]*entry, 0, len(tk.builtin[k]))
		for _, e := range tk.builtin[k] {
			items[k] = append(items[k], e)
		}
	}
	tk.builtinS = newSource(BuiltinNamespace, items)
	tk.publish()
}

// listChangedKind is the event that reports a change of each kind's list.
// Templates share the resource event: MCP has no notification of its own
// for them (resources/list_changed covers resources/templates/list).
var listChangedKind = [numKinds]ConnectorEventKind{
	ConnectorEventToolListChanged,
	ConnectorEventPromptListChanged,
	ConnectorEventResourceListChanged,
	ConnectorEventResourceListChanged,
}

// appendListChanged appends the list-change event of kind k for ns unless
// events already hold it (resources and templates share one).
func appendListChanged(events []ConnectorEvent, k kind, c Connector, ns string) []ConnectorEvent {
	ev := ConnectorEvent{Kind: listChangedKind[k], Connector: c, Namespace: ns}
	for _, e := range events {
		if e.Kind == ev.Kind && e.Namespace == ns {
			return events
		}
	}
	return append(events, ev)
}

// isNil reports whether v is nil or a typed nil pointer.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	if isPointer(v) {
		return reflectIsNil(v)
	}
	return false
}

var errNoDelegate = errors.New("the toolkit has no delegate to create connectors")

package toolkit

import (
	"errors"
	"fmt"
)

// AddTool registers builtin tools. Every tool is checked before any is
// added: a nil tool, an invalid or reserved name, a name already taken by a
// builtin tool or twice in the call, or an input schema that is not a
// resolvable object schema (or a schema past the limits the package
// documentation gives), refuses the whole call with an error wrapping
// ErrBadParameter (and ErrConflict for a duplicate) that names the tool. The
// reserved name "submit_output" is accepted only for a *tool.OutputTool.
func (tk *Toolkit) AddTool(items ...Tool) error { return addItems(tk, &toolOps, items) }

// AddPrompt registers builtin prompts, with the same all-or-nothing checks
// as AddTool: nil, invalid, reserved or duplicate names and unresolvable
// input schemas are refused.
func (tk *Toolkit) AddPrompt(items ...Prompt) error { return addItems(tk, &promptOps, items) }

// AddResource registers builtin resources. Each needs an absolute URI with
// a scheme; a URI given twice in one call is refused. Adding a URI that is
// already registered replaces that resource and fires a
// ConnectorEventResourceUpdated event; new URIs fire one
// ConnectorEventResourceListChanged.
func (tk *Toolkit) AddResource(items ...Resource) error { return addItems(tk, &resourceOps, items) }

// AddResourceTemplate registers builtin resource templates, with the same
// all-or-nothing checks as AddTool: a nil template, a URI template that
// resource.ParseURITemplate refuses (it must be valid RFC 6570 and start
// with a scheme), or a URI template already registered as a builtin or
// given twice in the call (also ErrConflict) refuses the whole call with
// an error wrapping ErrBadParameter that names the template. Added
// templates fire one ConnectorEventResourceListChanged, as MCP has no
// separate notification for templates.
func (tk *Toolkit) AddResourceTemplate(items ...ResourceTemplate) error {
	return addItems(tk, &templateOps, items)
}

// addBuiltins installs checked entries of one kind, publishes a snapshot and
// queues the events.
func (tk *Toolkit) addBuiltins(k Kind, entries []*entry) error {
	if len(entries) == 0 {
		return nil
	}
	tk.mu.Lock()
	defer tk.mu.Unlock()
	m := tk.builtin[k]
	if k != KindResource {
		for _, e := range entries {
			if _, ok := m[e.key]; ok {
				return fmt.Errorf("%w: %w: builtin %s %q already exists", ErrBadParameter, ErrConflict, k, e.key)
			}
		}
	}
	var events []ConnectorEvent
	added := false
	for _, e := range entries {
		if _, ok := m[e.key]; ok && k == KindResource {
			events = append(events, ConnectorEvent{Kind: ConnectorEventResourceUpdated, Namespace: BuiltinNamespace, URI: e.key})
		} else {
			added = true
		}
		m[e.key] = e
	}
	if added {
		events = append(events, ConnectorEvent{Kind: k.ListChanged(), Namespace: BuiltinNamespace})
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
	for k := range NumKinds {
		if _, ok := tk.builtin[k][key]; ok {
			delete(tk.builtin[k], key)
			tk.rebuildBuiltins()
			tk.queue(ConnectorEvent{Kind: k.ListChanged(), Namespace: BuiltinNamespace})
			return nil
		}
	}
	return fmt.Errorf("%w: no builtin tool, prompt, resource or resource template %q", ErrNotFound, key)
}

// rebuildBuiltins rebuilds the builtin source and publishes. tk.mu must be
// held.
func (tk *Toolkit) rebuildBuiltins() {
	var items [NumKinds][]*entry
	for k := range NumKinds {
		items[k] = make([]*entry, 0, len(tk.builtin[k]))
		for _, e := range tk.builtin[k] {
			items[k] = append(items[k], e)
		}
	}
	tk.builtinS = newSource(BuiltinNamespace, items)
	tk.publish()
}

// appendListChanged appends the list-change event of kind k for ns unless
// events already hold it (resources and templates share one).
func appendListChanged(events []ConnectorEvent, k Kind, c Connector, ns string) []ConnectorEvent {
	ev := ConnectorEvent{Kind: k.ListChanged(), Connector: c, Namespace: ns}
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

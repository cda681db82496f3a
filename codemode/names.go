package codemode

import (
	"context"

	"github.com/llmkit/toolkit"
)

// Names names the tools as a face of the toolkit offers them to its
// clients, so that scripts call them by the names the client sees: an
// MCP server's (*mcpserver.Server is one: under WithQualifiedNames every
// tool is "namespace_name"), in place of the model names of package
// model. Config.Names sets it.
type Names interface {
	// ExposedName returns the name under which the item with the toolkit
	// key ("namespace.name") is offered.
	ExposedName(kind toolkit.ListType, key string) (string, bool)
	// ItemKey returns the toolkit key of the item offered as exposed.
	ItemKey(kind toolkit.ListType, exposed string) (string, bool)
}

// resolve returns the tool scripts call name.
func (m *Mode) resolve(ctx context.Context, name string) (toolkit.Item, bool) {
	if m.names == nil {
		return m.cat.Resolve(name)
	}
	key, ok := m.names.ItemKey(toolkit.ListTypeTools, name)
	if !ok {
		return toolkit.Item{}, false
	}
	it, err := m.tk.LookupType(ctx, toolkit.ListTypeTools, key)
	return it, err == nil
}

// nameOf returns the name scripts call it by; model is its model name.
func (m *Mode) nameOf(it toolkit.Item, model string) (string, bool) {
	if m.names == nil {
		return model, true
	}
	return m.names.ExposedName(toolkit.ListTypeTools, it.Key())
}

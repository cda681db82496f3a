package model

import (
	"slices"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/resource"
)

// An MCP App (SEP-1865) may declare a tool for its own view only:
// `_meta.ui.visibility` lists who may call it, "model" and/or "app", and
// a tool whose list lacks "model" must never reach a model. Such a tool
// is left out of everything this package offers a model (the catalog's
// names, definitions and search, and Filter.Match), so a model cannot
// name it; it stays in the toolkit, callable by the app through a server
// face (package mcpserver lists it to MCP clients, whose host keeps it
// from its own model).

// AppOnly reports whether it is a tool that its `_meta` reserves for an
// MCP App's view: `_meta.ui.visibility` is a list without "model".
func AppOnly(it toolkit.Item) bool {
	if it.Type != toolkit.ListTypeTools {
		return false
	}
	ui, _ := resource.MetaOf(it.Value)["ui"].(map[string]any)
	vis, ok := ui["visibility"].([]any)
	if !ok {
		return false
	}
	return !slices.Contains(vis, any("model"))
}

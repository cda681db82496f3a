package bridge

import "slices"

// AppOnly reports whether a tool's _meta reserves it for an MCP App's view
// (SEP-1865): `_meta.ui.visibility` is a list without "model". Such a tool
// must never reach a model: it is called by the app, through the host.
func AppOnly(meta map[string]any) bool {
	ui, _ := meta["ui"].(map[string]any)
	switch vis := ui["visibility"].(type) {
	case []any:
		return !slices.Contains(vis, any("model"))
	case []string:
		return !slices.Contains(vis, "model")
	}
	return false
}

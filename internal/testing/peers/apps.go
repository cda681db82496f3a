package peers

import (
	"os"
	"path/filepath"
	"testing"
)

// App names one of the MCP Apps example servers of the ext-apps project
// (npm @modelcontextprotocol/server-*), each an MCP server whose tools
// carry `_meta.ui.resourceUri` and whose ui:// resources hold the HTML of
// their views.
type App string

// The MCP Apps servers pinned in tools/peers.
const (
	// AppBasicVanillaJS is server-basic-vanillajs: the tool get-time
	// (with an output schema and structuredContent) and its view
	// ui://get-time/mcp-app.html.
	AppBasicVanillaJS App = "server-basic-vanillajs"
	// AppBasicReact is server-basic-react: the same tool and view URI as
	// AppBasicVanillaJS, another HTML, no output schema.
	AppBasicReact App = "server-basic-react"
	// AppMap is server-map: show-map (its result has a `_meta`), geocode
	// (no view; it asks OpenStreetMap, so tests do not call it) and the
	// view ui://cesium-map/mcp-app.html with a CSP in its contents' `_meta`.
	AppMap App = "server-map"
	// AppPDF is server-pdf: list_pdfs, display_pdf (view
	// ui://pdf-viewer/mcp-app.html, whose contents' `_meta` carries a CSP
	// and permissions), the app-only tools (`_meta.ui.visibility` ["app"])
	// read_pdf_bytes, save_pdf and the view's own submit_* and poll_*, and
	// interact. Its arguments name the PDF files and folders it may open.
	AppPDF App = "server-pdf"
	// AppBudgetAllocator is server-budget-allocator: get-budget-data and
	// the view ui://budget-allocator/mcp-app.html.
	AppBudgetAllocator App = "server-budget-allocator"
)

// AppStdio returns the command line that runs app over stdio with Node 22
// (its "--stdio" flag; without it the servers listen on HTTP), followed by
// args. It skips the test when the peers are not installed.
func AppStdio(t testing.TB, app App, args ...string) (cmd string, argv []string) {
	t.Helper()
	in := usable(t)
	entry := filepath.Join(in.root, "tools/peers/node_modules/@modelcontextprotocol", string(app), "dist/index.js")
	if _, err := os.Stat(entry); err != nil {
		unavailable(t, err)
	}
	return in.node, append([]string{entry, "--stdio"}, args...)
}

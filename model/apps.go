package model

import (
	"context"
	"fmt"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
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
	return bridge.AppOnly(resource.MetaOf(it.Value))
}

// AppView is what a host that renders MCP Apps itself needs of a tool's
// view: the HTML of the `ui://` resource its `_meta.ui.resourceUri`
// names, read from the tool's own source, and the sandbox the view asks
// for (the `ui` object of the contents' `_meta`, else of the listed
// resource's: `csp`, `permissions`, `domain`, `prefersBorder`).
type AppView struct {
	// URI is the view's resource URI, as the tool's source names it.
	URI string
	// Namespace is the source of the tool and of its view.
	Namespace string
	// HTML is the view's content and MIMEType its type (for an MCP App,
	// "text/html;profile=mcp-app").
	HTML     []byte
	MIMEType string
	// UI is the `_meta.ui` of the view's contents (nil when it has none).
	UI map[string]any
}

// ErrNoAppView is wrapped by the error of [AppViewOf] for a tool whose
// `_meta` names no view, and matches toolkit.ErrNotFound.
var ErrNoAppView = fmt.Errorf("%w: the tool names no MCP App view", toolkit.ErrNotFound)

// AppViewOf reads the MCP App view of the tool key names (any key
// toolkit.Lookup takes): the resource of its source whose URI the tool's
// `_meta.ui.resourceUri` gives (never another source's, whatever their
// URIs), read now, with the sandbox metadata it comes with. A tool
// without a view gives an error wrapping ErrNoAppView.
func AppViewOf(ctx context.Context, tk *toolkit.Toolkit, key string) (*AppView, error) {
	it, err := tk.LookupType(ctx, toolkit.ListTypeTools, key)
	if err != nil {
		return nil, err
	}
	ui, _ := resource.MetaOf(it.Value)["ui"].(map[string]any)
	uri, _ := ui["resourceUri"].(string)
	if uri == "" {
		return nil, fmt.Errorf("tool %q: %w", key, ErrNoAppView)
	}
	res, err := tk.LookupType(ctx, toolkit.ListTypeResources, uri+"#"+it.Namespace)
	if err != nil {
		return nil, fmt.Errorf("tool %q: its view %s: %w", key, uri, err)
	}
	r, ok := res.Value.(toolkit.Resource)
	if !ok {
		return nil, fmt.Errorf("tool %q: its view %s is no resource: %w", key, uri, toolkit.ErrNotFound)
	}
	v := &AppView{URI: uri, Namespace: it.Namespace, MIMEType: r.Type()}
	meta := resource.MetaOf(r)
	if tr, ok := r.(bridge.TypedReader); ok {
		// A remote view: its contents carry their own type and `_meta`.
		c, err := tr.ReadTyped(ctx)
		if err != nil {
			return nil, fmt.Errorf("tool %q: reading its view %s: %w", key, uri, err)
		}
		v.HTML = c.Data
		if c.MIMEType != "" {
			v.MIMEType = c.MIMEType
		}
		if c.Meta != nil {
			meta = c.Meta
		}
	} else if v.HTML, err = r.Read(ctx); err != nil {
		return nil, fmt.Errorf("tool %q: reading its view %s: %w", key, uri, err)
	}
	v.UI, _ = meta["ui"].(map[string]any)
	return v, nil
}

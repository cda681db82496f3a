package mcpserver

import (
	"context"
	"maps"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// An MCP App's tool names the HTML of its view in `_meta.ui.resourceUri`,
// a resource of the tool's own server. The server face may expose that
// resource under another URI ("uri#namespace" with WithQualifiedNames, or
// when two sources list the same URI, see the guide docs/serving.md): each
// tools/list answer then names the URI the server serves for the
// resource of the tool's own namespace, so every tool opens its own
// server's view; so does the legacy flat key `_meta["ui/resourceUri"]`.
// The rewrite is made when the list is answered, from the names exposed
// at that moment, so it follows renames; only tools whose view URI is
// rewritten are copied, the others are sent as they are.

// uiResourceURI returns the `_meta.ui.resourceUri` of m, if any.
func uiResourceURI(m map[string]any) (map[string]any, string, bool) {
	ui, ok := m["ui"].(map[string]any)
	if !ok {
		return nil, "", false
	}
	uri, ok := ui["resourceUri"].(string)
	return ui, uri, ok && uri != ""
}

// appsMiddleware rewrites the `_meta.ui.resourceUri` of the tools of a
// tools/list answer to the URI the server exposes.
func (s *Server) appsMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/list" {
			return res, err
		}
		if r, ok := res.(*sdk.ListToolsResult); ok {
			r.Tools = s.exposeResourceURIs(r.Tools)
		}
		return res, err
	}
}

// legacyResourceURIKey is the flat `_meta` key that named a tool's view
// before `_meta.ui.resourceUri`; the MCP Apps SDK still writes it beside
// the new one, and hosts that predate the new one read it.
const legacyResourceURIKey = "ui/resourceUri"

// exposeResourceURIs returns tools with each `_meta.ui.resourceUri` (and
// legacy `_meta["ui/resourceUri"]`) that the server exposes under another
// URI rewritten, in copies (the registered definitions are never changed):
// tools itself when there is nothing to rewrite.
func (s *Server) exposeResourceURIs(tools []*sdk.Tool) []*sdk.Tool {
	copied := false
	for i, t := range tools {
		if t == nil || t.Meta == nil {
			continue
		}
		meta := s.exposeViewURIs(t.Name, t.Meta)
		if meta == nil {
			continue
		}
		if !copied {
			tools, copied = append([]*sdk.Tool(nil), tools...), true
		}
		c := *t
		c.Meta = meta
		tools[i] = &c
	}
	return tools
}

// exposeViewURIs returns a copy of m, the `_meta` of the tool exposed as
// tool, with the URIs of its view rewritten to those the server exposes,
// or nil when none needs it.
func (s *Server) exposeViewURIs(tool string, m map[string]any) map[string]any {
	var out map[string]any
	if ui, uri, ok := uiResourceURI(m); ok {
		if exposed, ok := s.exposedResourceOf(tool, uri); ok && exposed != uri {
			out = maps.Clone(m)
			ui = maps.Clone(ui)
			ui["resourceUri"] = exposed
			out["ui"] = ui
		}
	}
	if uri, ok := m[legacyResourceURIKey].(string); ok && uri != "" {
		if exposed, ok := s.exposedResourceOf(tool, uri); ok && exposed != uri {
			if out == nil {
				out = maps.Clone(m)
			}
			out[legacyResourceURIKey] = exposed
		}
	}
	return out
}

// exposedResourceOf returns the URI under which the server exposes the
// resource uri of the namespace of the tool exposed as tool.
func (s *Server) exposedResourceOf(tool, uri string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	reg, ok := s.regs[toolkit.KindTool][tool]
	if !ok {
		return "", false
	}
	ns, _, ok := strings.Cut(reg.key, ".")
	if !ok {
		return "", false
	}
	return s.namers[toolkit.KindResource].exposed(uri + "#" + ns)
}

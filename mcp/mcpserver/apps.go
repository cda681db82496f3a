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
// server's view. The rewrite is made when the list is answered, from the
// names exposed at that moment, so it follows renames; only tools that
// carry a `_meta.ui.resourceUri` are copied, the others are sent as they
// are.

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

// exposeResourceURIs returns tools with each `_meta.ui.resourceUri` that
// the server exposes under another URI rewritten, in copies (the
// registered definitions are never changed): tools itself when there is
// nothing to rewrite.
func (s *Server) exposeResourceURIs(tools []*sdk.Tool) []*sdk.Tool {
	copied := false
	for i, t := range tools {
		if t == nil || t.Meta == nil {
			continue
		}
		ui, uri, ok := uiResourceURI(t.Meta)
		if !ok {
			continue
		}
		exposed, ok := s.exposedResourceOf(t.Name, uri)
		if !ok || exposed == uri {
			continue
		}
		if !copied {
			tools, copied = append([]*sdk.Tool(nil), tools...), true
		}
		ui = maps.Clone(ui)
		ui["resourceUri"] = exposed
		c := *t
		c.Meta = maps.Clone(t.Meta)
		c.Meta["ui"] = ui
		tools[i] = &c
	}
	return tools
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

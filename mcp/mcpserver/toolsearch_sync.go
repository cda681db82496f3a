package mcpserver

import (
	"context"
	"path"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/search"
)

// addTool registers the toolkit tool with the key under its exposed name
// st.Name. Without tool search it is registered with the SDK server. With
// it, it joins the search index, and is registered with the SDK server
// too when an Always pattern matches it (and its name is not a
// meta-tool's); the SDK server is asked first, so that a definition it
// refuses (it panics) is not indexed either. A tool reserved for an MCP
// App's view (bridge.AppOnly) is registered with the SDK server, where
// the host finds it for its app and keeps it from its model, and never
// joins the index: search_tools, describe_tools and call_tool are a
// model's way to tools.
func (s *Server) addTool(key string, st *sdk.Tool) {
	handler := s.toolHandler(key, st.OutputSchema != nil)
	ts := s.search
	if ts == nil {
		s.server.AddTool(st, handler)
		return
	}
	appOnly := bridge.AppOnly(st.Meta) && !isMetaTool(st.Name)
	direct := appOnly || ts.always(st.Name, key) && !isMetaTool(st.Name)
	if direct {
		s.server.AddTool(st, handler)
	}
	ts.put(key, st, direct, appOnly)
}

// removeTools unregisters exposed tool names: from the SDK server (a name
// it does not hold changes nothing, and sends no list_changed) and from
// the search index.
func (s *Server) removeTools(names ...string) {
	if ts := s.search; ts != nil {
		ts.delete(names...)
		var direct []string
		for _, n := range names {
			if ts.wasDirect(n) {
				direct = append(direct, n)
			}
		}
		ts.forget(names...)
		names = direct
	}
	if len(names) > 0 {
		s.server.RemoveTools(names...)
	}
}

// always reports whether an Always pattern matches a tool: its exposed
// name, or its toolkit key for a pattern with a '.'.
func (ts *toolSearch) always(exposed, key string) bool {
	for _, p := range ts.cfg.Always {
		target := exposed
		if strings.Contains(p, ".") {
			target = key
		}
		if ok, _ := path.Match(p, target); ok {
			return true
		}
	}
	return false
}

func isMetaTool(name string) bool {
	return name == SearchToolsName || name == DescribeToolsName || name == CallToolName
}

// put indexes a tool under its exposed name (an app-only one is kept,
// to be removed, but not indexed).
func (ts *toolSearch) put(key string, st *sdk.Tool, direct, appOnly bool) {
	ns, _, _ := strings.Cut(key, ".")
	t := &searchEntry{SearchableTool: SearchableTool{Name: st.Name, Key: key, Namespace: ns, Tool: st}, direct: direct, appOnly: appOnly}
	doc := search.Doc{Key: st.Name, Name: key[len(ns)+1:], Namespace: ns, Title: st.Title, Description: st.Description}
	doc.Params = search.ParamsOf(inputSchemaDecoded(st))
	ts.mu.Lock()
	ts.tools[st.Name] = t
	ts.mu.Unlock()
	if appOnly {
		return
	}
	// An embedder's failure leaves the tool found by keywords; it is
	// logged by the caller's logger through ts.onError.
	if err := ts.index.Put(context.Background(), doc); err != nil && ts.onError != nil {
		ts.onError(st.Name, err)
	}
}

// delete removes exposed names from the index.
func (ts *toolSearch) delete(names ...string) { ts.index.Delete(names...) }

// wasDirect reports whether the exposed name is registered with the SDK
// server as itself.
func (ts *toolSearch) wasDirect(name string) bool {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	t, ok := ts.tools[name]
	return ok && t.direct
}

// forget drops the entries of exposed names.
func (ts *toolSearch) forget(names ...string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, n := range names {
		delete(ts.tools, n)
	}
}

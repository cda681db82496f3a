package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/search"
)

// toolSearch is the state of WithToolSearch: every toolkit tool under its
// exposed name, and their search index. The sync code keeps both (through
// addTool and removeTools, toolsearch_sync.go); the meta-tools read them.
type toolSearch struct {
	cfg     ToolSearch
	index   *search.ToolIndex
	onError func(name string, err error) // an embedder's failure

	mu    sync.RWMutex
	tools map[string]*searchEntry // exposed name → tool
}

// searchEntry is one tool of the search.
type searchEntry struct {
	SearchableTool
	direct  bool // also registered with the SDK server (Always, or appOnly)
	appOnly bool // reserved for an MCP App's view: never searched, described or called by call_tool
}

func newToolSearch(cfg ToolSearch) *toolSearch {
	return &toolSearch{
		cfg:   cfg,
		index: search.NewToolIndex(search.WithEmbedder(cfg.Embedder)),
		tools: map[string]*searchEntry{},
	}
}

// addMetaTools registers search_tools, describe_tools and call_tool.
func (s *Server) addMetaTools() {
	s.search.onError = func(name string, err error) {
		s.logger.Warn("mcp server: tool search: embedding a tool; it is found by keywords only", "tool", name, "error", err)
	}
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)}
	s.metaTools = map[string]*metaTool{}
	searchTools := &sdk.Tool{
		Name:  SearchToolsName,
		Title: "Search tools",
		Description: "Search the tools of this server: only a few are listed. Say what you want to do in a few words " +
			"(for example \"delete a file\" or \"list open pull requests\"); the answer gives the best matching tools, best first, " +
			"with their names, titles and one-line descriptions. Then describe_tools gives a tool's input schema, and call_tool calls it.",
		InputSchema: mustJSONSchema(fmt.Sprintf(`{"type":"object","properties":{`+
			`"query":{"type":"string","description":"What you want to do, in a few words."},`+
			`"limit":{"type":"integer","minimum":1,"maximum":%d,"description":"How many tools to return (default %d)."}},`+
			`"required":["query"],"additionalProperties":false}`, MaxSearchLimit, s.search.cfg.Limit)),
		OutputSchema: mustJSONSchema(`{"type":"object","properties":{"tools":{"type":"array","items":{"type":"object","properties":{` +
			`"name":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"}},"required":["name"]}}},"required":["tools"]}`),
		Annotations: readOnly,
	}
	s.server.AddTool(searchTools, s.governed(searchTools, s.searchTools))
	describeTools := &sdk.Tool{
		Name:  DescribeToolsName,
		Title: "Describe tools",
		Description: "Get the full definitions of tools by name, as search_tools names them: description, " +
			"input schema (the arguments call_tool takes), output schema and annotations.",
		InputSchema: mustJSONSchema(fmt.Sprintf(`{"type":"object","properties":{`+
			`"names":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":%d,"description":"The tools' names."}},`+
			`"required":["names"],"additionalProperties":false}`, MaxDescribeTools)),
		OutputSchema: mustJSONSchema(`{"type":"object","properties":{"tools":{"type":"array","items":{"type":"object"}},` +
			`"unknown":{"type":"array","items":{"type":"string"}}},"required":["tools"]}`),
		Annotations: readOnly,
	}
	s.server.AddTool(describeTools, s.governed(describeTools, s.describeTools))
	s.server.AddTool(&sdk.Tool{
		Name:  CallToolName,
		Title: "Call a tool",
		Description: "Call a tool by name, as search_tools names it, with its arguments: an object that matches " +
			"the tool's input schema (see describe_tools). The answer is the tool's own.",
		InputSchema: mustJSONSchema(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"The tool's name."},` +
			`"arguments":{"type":"object","description":"The tool's arguments."}},` +
			`"required":["name"],"additionalProperties":false}`),
	}, s.callThrough)
}

// mustJSONSchema parses a schema written in this file.
func mustJSONSchema(s string) *jsonschema.Schema {
	var sc jsonschema.Schema
	if err := json.Unmarshal([]byte(s), &sc); err != nil {
		panic(err)
	}
	return &sc
}

// searchable returns the tool with the exposed name if the client of the
// request may find, describe and call it: the Filter keeps it, and, when
// listing is set, the toolkit's policy shows it to the principal of ctx
// (see Toolkit.Visible). A call does not ask the policy here: the
// toolkit's Call does, and refuses a denied tool naming the rule, as a
// tools/call of a tool left out of tools/list is refused.
func (s *Server) searchable(ctx context.Context, principal, name string, listing bool) (*searchEntry, bool) {
	ts := s.search
	ts.mu.RLock()
	t, ok := ts.tools[name]
	ts.mu.RUnlock()
	if !ok || t.appOnly || (ts.cfg.Filter != nil && !ts.cfg.Filter(ctx, principal, &t.SearchableTool)) {
		return nil, false
	}
	if listing && s.tk.Policy() != nil {
		it, err := s.tk.LookupType(ctx, toolkit.ListTypeTools, t.Key)
		if err != nil || !s.tk.Visible(ctx, it) {
			return nil, false
		}
	}
	return t, true
}

// foundTool is one tool in the answer of search_tools.
type foundTool struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// jsonResult answers with v as structured content and as its JSON text.
func jsonResult(v any) (*sdk.CallToolResult, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(data)}}, StructuredContent: json.RawMessage(data)}, nil
}

// badArguments is the answer to a meta-tool call with arguments it cannot
// use: a tool error, which the model reads and corrects.
func badArguments(tool string, err error, want string) *sdk.CallToolResult {
	return errorResult(fmt.Errorf("%s: bad arguments (%v): want %s", tool, err, want))
}

func (s *Server) searchTools(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	ts := s.search
	var in struct {
		Query string `json:"query"`
		Limit *int   `json:"limit"`
	}
	const want = `{"query": "what you want to do", "limit": 10}`
	if err := json.Unmarshal(argumentsOf(req), &in); err != nil {
		return badArguments(SearchToolsName, err, want), nil
	}
	if in.Query == "" {
		return badArguments(SearchToolsName, fmt.Errorf("no query"), want), nil
	}
	limit := ts.cfg.Limit
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > MaxSearchLimit {
			return badArguments(SearchToolsName, fmt.Errorf("limit %d", *in.Limit), fmt.Sprintf("a limit of 1 to %d", MaxSearchLimit)), nil
		}
		limit = *in.Limit
	}
	principal := principalOf(req.Extra)
	var keep func(string) bool
	if ts.cfg.Filter != nil || s.tk.Policy() != nil {
		pctx := toolkit.WithPrincipal(ctx, principal)
		keep = func(name string) bool { _, ok := s.searchable(pctx, principal, name, true); return ok }
	}
	hits, err := ts.index.Search(ctx, in.Query, limit, keep)
	if err != nil {
		s.logger.Warn("mcp server: tool search: embedding a query; searching by keywords only", "error", err)
	}
	out := struct {
		Tools []foundTool `json:"tools"`
	}{Tools: []foundTool{}}
	ts.mu.RLock()
	for _, h := range hits {
		t, ok := ts.tools[h.Key]
		if !ok {
			continue // removed since
		}
		out.Tools = append(out.Tools, foundTool{Name: t.Name, Title: titleOf(t.Tool), Description: search.Summary(t.Tool.Description)})
	}
	ts.mu.RUnlock()
	return jsonResult(out)
}

// titleOf returns a tool's title, or its annotations' title.
func titleOf(t *sdk.Tool) string {
	if t.Title != "" {
		return t.Title
	}
	if t.Annotations != nil {
		return t.Annotations.Title
	}
	return ""
}

func (s *Server) describeTools(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var in struct {
		Names []string `json:"names"`
	}
	want := fmt.Sprintf(`{"names": ["tool_name", ...]} with 1 to %d names`, MaxDescribeTools)
	if err := json.Unmarshal(argumentsOf(req), &in); err != nil {
		return badArguments(DescribeToolsName, err, want), nil
	}
	if len(in.Names) == 0 || len(in.Names) > MaxDescribeTools {
		return badArguments(DescribeToolsName, fmt.Errorf("%d names", len(in.Names)), want), nil
	}
	out := struct {
		Tools   []*sdk.Tool `json:"tools"`
		Unknown []string    `json:"unknown,omitempty"`
	}{Tools: []*sdk.Tool{}}
	principal := principalOf(req.Extra)
	pctx := toolkit.WithPrincipal(ctx, principal)
	seen := map[string]bool{}
	for _, n := range in.Names {
		if seen[n] {
			continue
		}
		seen[n] = true
		if t, ok := s.searchable(pctx, principal, n, true); ok {
			out.Tools = append(out.Tools, t.Tool)
		} else {
			out.Unknown = append(out.Unknown, n)
		}
	}
	return jsonResult(out)
}

// callThrough runs call_tool: the named tool's call, answered as a
// tools/call of that tool would be, errors included.
func (s *Server) callThrough(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var in struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	const want = `{"name": "tool_name", "arguments": {...}}`
	if err := json.Unmarshal(argumentsOf(req), &in); err != nil {
		return badArguments(CallToolName, err, want), nil
	}
	if in.Name == "" {
		return badArguments(CallToolName, fmt.Errorf("no name"), want), nil
	}
	t, ok := s.searchable(ctx, principalOf(req.Extra), in.Name, false)
	if !ok {
		// What a tools/call of a tool that does not exist gets.
		err := invalidParams("unknown tool %q", in.Name)
		inner := &sdk.CallToolRequest{Session: req.Session, Params: &sdk.CallToolParamsRaw{Name: in.Name, Arguments: in.Arguments}, Extra: req.Extra}
		s.auditRefused(ctx, inner, "", in.Name, fmt.Errorf("%w: %w", toolkit.ErrNotFound, err))
		return nil, err
	}
	params := *req.Params
	params.Name, params.Arguments = in.Name, in.Arguments
	inner := &sdk.CallToolRequest{Session: req.Session, Params: &params, Extra: req.Extra}
	return s.callTool(ctx, t.Key, t.Tool.OutputSchema != nil, inner)
}

// argumentsOf returns a call's arguments, {} for none.
func argumentsOf(req *sdk.CallToolRequest) json.RawMessage {
	if req.Params == nil || len(req.Params.Arguments) == 0 || string(req.Params.Arguments) == "null" {
		return json.RawMessage("{}")
	}
	return req.Params.Arguments
}

package mcpserver

import (
	"context"
	"fmt"
	"path"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/search"
)

// Names of the tool search meta-tools (see WithToolSearch).
const (
	SearchToolsName   = "search_tools"
	DescribeToolsName = "describe_tools"
	CallToolName      = "call_tool"
)

// Bounds of the tool search.
const (
	// DefaultSearchLimit is how many tools search_tools returns when the
	// client gives no limit (ToolSearch.Limit changes it).
	DefaultSearchLimit = 10
	// MaxSearchLimit bounds the tools one search_tools call returns.
	MaxSearchLimit = 50
	// MaxDescribeTools bounds the names of one describe_tools call.
	MaxDescribeTools = 50
)

// ToolSearch configures the tool search of a server: see WithToolSearch.
type ToolSearch struct {
	// Always lists glob patterns (path.Match: "*", "?", "[a-z]") of tools
	// served as themselves in tools/list, beside the meta-tools. A
	// pattern matches a tool's exposed name ("get_time", "github_get_issue")
	// or, when it holds a '.', its toolkit key ("github.get_*").
	Always []string
	// Limit is how many tools search_tools returns when the client gives
	// no limit (default DefaultSearchLimit; at most MaxSearchLimit).
	Limit int
	// Filter, when set, decides which tools the client of a request may
	// find (search_tools), describe (describe_tools) and call (call_tool):
	// a tool it refuses is, to that client, a tool that does not exist.
	// It comes on top of the toolkit's policy, which needs no filter (see
	// WithToolSearch). It does not apply to the Always tools, which every
	// client sees in tools/list.
	Filter ToolFilter
	// Embedder, when set, makes the search hybrid: keywords and the
	// embedder's vectors together (see search.Embedder).
	Embedder search.Embedder
}

// ToolFilter decides whether the client of a request may see and call a
// tool through the tool search meta-tools. principal is the authenticated
// user of the request (the token's UserID, see WithBearerAuth), "" when
// the request carries no token. It runs for every candidate of a search:
// keep it fast, and never block.
type ToolFilter func(ctx context.Context, principal string, tool *SearchableTool) bool

// SearchableTool is a tool as the tool search knows it.
type SearchableTool struct {
	// Name is the tool's exposed name, the one clients use.
	Name string
	// Key is its toolkit key, "namespace.name".
	Key string
	// Namespace is the source the tool comes from.
	Namespace string
	// Tool is its definition as served (annotations included). It is
	// shared: do not modify it.
	Tool *sdk.Tool
}

// WithToolSearch serves the toolkit's tools through search rather than as
// one list (progressive disclosure): tools/list holds three meta-tools,
// and the tools that ts.Always matches, served as themselves.
//
//   - search_tools takes a query (what the client wants to do, in words)
//     and an optional limit, and answers with the names, titles and
//     one-line descriptions of the best matching tools, best first.
//   - describe_tools takes names and answers with the tools' full
//     definitions, input and output schemas included, as tools/list would
//     give them.
//   - call_tool takes a name and the tool's arguments and answers with the
//     tool's own result, unchanged: its content, structured content and
//     isError, or the protocol error a direct call would get.
//
// A client's model so reads three short definitions instead of every
// tool's, and the definitions of the few tools it needs when it needs
// them. Names in the answers are the exposed names (the naming rules of
// the guide docs/serving.md apply, WithQualifiedNames included). The index follows
// the toolkit's changes one source at a time, as the registrations do;
// a change of the searchable tools sends no list_changed (the tools/list
// of the meta-tools did not change), a change of an Always tool does.
// The toolkit's policy (toolkit.WithPolicy) holds through the meta-tools
// as through tools/list and tools/call: search_tools and describe_tools
// leave out the tools it denies to the request's principal (deny rules,
// quarantined definitions), as tools/list does, and call_tool goes
// through the toolkit's Call, so that a denied tool is refused naming the
// rule, an ask rule asks the client's user, and rate limits count.
// A toolkit tool whose exposed name is a meta-tool's is reachable through
// call_tool only. A malformed pattern or an out-of-range limit makes New
// fail.
func WithToolSearch(ts ToolSearch) Option {
	return func(c *config) error {
		for _, p := range ts.Always {
			if _, err := path.Match(p, ""); err != nil {
				return errs.Option("WithToolSearch", fmt.Sprintf("Always %q", p), err.Error())
			}
		}
		if ts.Limit < 0 || ts.Limit > MaxSearchLimit {
			return errs.Option("WithToolSearch", fmt.Sprintf("Limit %d", ts.Limit), fmt.Sprintf("want 0 (the default) to %d", MaxSearchLimit))
		}
		if ts.Limit == 0 {
			ts.Limit = DefaultSearchLimit
		}
		ts.Always = slices.Clone(ts.Always)
		c.search = &ts
		return nil
	}
}

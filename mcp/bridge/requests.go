package bridge

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerRequestHandler is implemented by toolkit sessions that can answer
// the requests an MCP server sends while one of its tools runs on behalf of
// the session's caller: sampling/createMessage and elicitation/create. The
// sessions an [github.com/llmkit/toolkit/mcp/mcpserver.Server] gives its clients' calls implement it by
// passing the request on to the client. An application may implement it on
// its own session ([github.com/llmkit/toolkit.ContextWithSession]) to answer with its own model or
// user interface for that caller; an application that answers the same way
// for every caller gives its connectors
// [github.com/llmkit/toolkit/mcp.ServerRequests.Sampling] and
// [github.com/llmkit/toolkit/mcp.ServerRequests.Elicitation] instead. A session
// that cannot answer a request returns an error wrapping
// [github.com/llmkit/toolkit.ErrNotImplemented], and the connector's own
// handler answers. See [github.com/llmkit/toolkit/mcp.ServerRequests.Forward].
type ServerRequestHandler interface {
	CreateMessage(ctx context.Context, params *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error)
	Elicit(ctx context.Context, params *sdk.ElicitParams) (*sdk.ElicitResult, error)
}

// RootsLister is implemented by toolkit sessions that can answer the
// roots/list request an MCP server sends while one of its tools runs on
// behalf of the session's caller: the roots (directories, files) the
// caller's side offers the server. The sessions of a
// [github.com/llmkit/toolkit/mcp/mcpserver.Server] implement it by asking
// their MCP client, when that client offers roots; otherwise, or when it
// returns an error wrapping [github.com/llmkit/toolkit.ErrNotImplemented],
// the connector's own roots answer ([github.com/llmkit/toolkit/mcp.OptRoots]).
type RootsLister interface {
	ListRoots(ctx context.Context, params *sdk.ListRootsParams) (*sdk.ListRootsResult, error)
}

package bridge

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Client is the session of one client of an MCP server face, as a
// connector sees it: it outlives each of the client's calls, so a
// connector can keep an upstream session of the client's own beside it
// (see [github.com/llmkit/toolkit/mcp.OptPerClient]). Its requests go to
// the client outside any of its calls: sampling, elicitation (an error
// wrapping [github.com/llmkit/toolkit.ErrNotImplemented] when the client
// does not offer them) and its roots. A Client is comparable: the same
// client session is always the same value.
//
// The sessions of an [github.com/llmkit/toolkit/mcp/mcpserver.Server]
// made with [github.com/llmkit/toolkit/mcp/mcpserver.WithClientSessions]
// are Clients.
type Client interface {
	ServerRequestHandler
	RootsLister
	// Capabilities returns what the client offered when its session
	// started (nil when unknown).
	Capabilities() *sdk.ClientCapabilities
	// Done is closed when the client's session has ended.
	Done() <-chan struct{}
	// OnRootsChanged calls f, in a goroutine of its own, each time the
	// client says its roots changed (notifications/roots/list_changed),
	// until the returned function is called. Notifications that come
	// while f runs may make it run once for all of them.
	OnRootsChanged(f func()) (stop func())
}

// ClientCarrier is implemented by the toolkit sessions of calls made for a
// [Client]: Client returns it, or nil when the call's client has no session
// that outlives the call (a stateless HTTP request, say).
type ClientCarrier interface {
	Client() Client
}

// ClientObserver learns of each client session of an MCP server face as
// it starts (the client has sent notifications/initialized: its
// capabilities are known and it may be asked for its roots). A
// [github.com/llmkit/toolkit/mcp.Delegate] is one: its per-client
// connectors open the client's upstream sessions at once. ClientStarted
// must not block: slow work goes on in its own goroutines.
type ClientObserver interface {
	ClientStarted(ctx context.Context, c Client)
}

// ClientPrincipal is implemented by the [Client]s whose session belongs to
// an authenticated principal: Principal returns it (the UserID of the
// token the client's session was opened with; the principal of its calls,
// toolkit.PrincipalFromContext), or "" for an anonymous client. A
// connector that acts upstream with each user's own credentials
// ([github.com/llmkit/toolkit/mcp.OptOAuthPerUser]) keeps them by it, and
// refuses the calls of a Client that is not one or has none.
type ClientPrincipal interface {
	Principal() string
}

// ElicitationCompleter is implemented by the [Client]s that can tell their
// client that a URL-mode elicitation (MCP 2025-11-25) has completed, with
// notifications/elicitation/complete, so that it may retry what waited
// for it. It fails with an error wrapping
// [github.com/llmkit/toolkit.ErrNotImplemented] when the client does not
// offer URL elicitation.
type ElicitationCompleter interface {
	ElicitationComplete(ctx context.Context, elicitationID string) error
}

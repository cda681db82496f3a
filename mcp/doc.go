// Package mcp connects a toolkit to remote Model Context Protocol servers:
// each [Connector] is a [toolkit.Connector] for one server, whose tools,
// prompts, resources and resource templates it keeps in memory and serves
// to the toolkit. Serving a toolkit to MCP clients is the other face,
// package [github.com/llmkit/toolkit/mcp/mcpserver]; the contracts the two
// share (content carriers, server requests, subscriptions, trace context)
// are in package [github.com/llmkit/toolkit/mcp/bridge].
//
// An application gives the toolkit a [Delegate], which makes a connector,
// with the delegate's options, for each server added:
//
//	delegate, err := mcp.NewDelegate("app", "1.0", mcp.OptTimeouts(mcp.Timeouts{Call: time.Minute}))
//	...
//	tk, err := toolkit.New(toolkit.WithDelegate(delegate))
//	...
//	go tk.Run(ctx)
//	err = tk.AddConnectorNS("files", "stdio:files-server?arg=--root&arg=/srv")
//	...
//	_, err = tk.WaitConnectors(ctx, "files")
//	out, err := tk.Call(ctx, "files.read", toolkit.Input(args))
//
// # URLs
//
// The URL given to [New] (or to the toolkit's AddConnector) selects the
// transport: http:// and https:// speak streamable HTTP, falling back to
// the legacy HTTP+SSE transport when the first POST is answered 400, 404
// or 405; a last path segment "sse" speaks HTTP+SSE directly;
// stdio:NAME?arg=A&env=K%3DV&dir=/work and stdio:///abs/path?arg=A start
// a child process speaking JSON-RPC on its stdin and stdout ([StdioCommand]
// parses and formats this form). Any other scheme is refused. [OptDialer]
// replaces the transport (an in-memory one, say).
//
// # Supervision
//
// [Connector.Run] connects, lists every item, reports each state change
// (connecting, ready, reconnecting, failed, stopped, needs_authorization)
// and reconnects with backoff when the session is lost ([OptReconnect]).
// Lists are refreshed on list_changed, and callbacks fire only when an
// item really changed. A call made while the connector is not ready waits
// up to Reconnect.Wait. A request
// whose connection broke is sent again only when that cannot do harm: a
// tool that may have run is never run twice behind the caller's back.
//
// # Remote items
//
// Remote tools implement tool.Tool, prompts prompt.Prompt and
// prompt.Renderer, resources resource.Resource and [bridge.Subscriber],
// templates resource.Template; prompts and templates also implement
// [bridge.Completer]. Results and rendered prompts implement
// [bridge.ContentCarrier] and [bridge.StructuredCarrier], and items and
// answers toolkit.MetaCarrier, so a gateway hands on the server's content
// and `_meta` unchanged. A server is untrusted: odd names, duplicates,
// schema bombs, deep nesting and oversized listings skip the item alone,
// with a warning (Limits.MaxListItems, Limits.MaxListBytes,
// Limits.MaxMessageBytes, Limits.MaxResultBytes, Limits.MaxConcurrency bound the
// rest). Tools the server says must run as tasks fail at once
// ([TaskSupporter], [ErrTaskRequired]).
//
// # Requests from the server
//
// A server's sampling, elicitation and roots requests during a call are
// answered by the caller's session when it can (ServerRequests.Forward:
// a gateway's downstream client answers for its own calls), else by
// ServerRequests.Sampling, ServerRequests.Elicitation and the roots of [OptRoots]
// or a shared [RootSet]. With [OptPerClient] each client of a server face
// gets an upstream session of its own ([ClientSessionLimits]).
//
// # OAuth
//
// An HTTP connector given [OptOAuth] authorizes itself as the MCP
// authorization spec says, with the mechanisms of package
// [github.com/llmkit/toolkit/mcp/oauth]. While the user is asked, its
// state is needs_authorization and calls fail at once with
// [ErrAuthorizationPending]; a server that asks for OAuth of a connector
// without it is reported so too ([ErrOAuthNotConfigured]).
// [OptOAuth], [OptOAuth] and
// [OptOAuth] are the other grants, [OptOAuth] takes any
// SDK handler, and [OptOAuthAllow] opens destinations the flow's requests
// may not otherwise reach; [OptOAuthPerUser] and
// [UserTokenExchange] act upstream with each user's own
// credentials. Tokens never appear in logs, errors or the state.
//
// # Protocol versions
//
// The connector asks for [DefaultProtocolVersion] (2026-07-28,
// server/discover) and falls back to the initialize handshake
// ([StatefulProtocolVersion]) for a server that refuses it;
// [toolkit.ConnectorState].ProtocolVersion says which was spoken
// ([OptProtocolVersion]).
//
// # Logs and errors
//
// Every log record of a connector carries a "connector" attribute, and its
// errors name it (by [OptNamespace], else the namespace the toolkit runs it
// under, else its URL without secrets). Errors wrap the toolkit's
// sentinels: toolkit.ErrUnavailable, toolkit.ErrToolFailed,
// toolkit.ErrClosed.
//
// The guide docs/connectors.md tells the long story: what a connector does
// when things go wrong, how results are mapped, child processes, server
// requests, per-client sessions and each moment of an OAuth authorization.
package mcp

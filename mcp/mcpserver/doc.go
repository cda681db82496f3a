// Package mcpserver serves a toolkit over the Model Context Protocol: any
// [toolkit.Toolkit] becomes an MCP server, over stdio, streamable HTTP
// (stateful or stateless) or, for old clients, the HTTP+SSE transport of
// protocol version 2024-11-05. A toolkit whose items come from remote MCP
// servers (package [github.com/llmkit/toolkit/mcp]) served this way is an
// MCP gateway.
//
// [New] builds a [Server] that registers the toolkit's tools, prompts,
// resources and resource templates with a go-sdk server ([Server.SDK]):
//
//	srv, err := mcpserver.New(tk, &sdk.Implementation{Name: "calculator", Version: "1.0.0"})
//	...
//	defer srv.Close()
//	go srv.Run(ctx, serverTransport) // any go-sdk transport: one client
//	err = srv.ServeStdio(ctx)        // one client on stdin/stdout
//	h, err := srv.Handler()          // streamable HTTP, to mount at /mcp
//	err = mcpserver.Serve(ctx, tk, "127.0.0.1:8080") // all of it in one call
//
// # Serving
//
// [Server.Handler] returns the streamable HTTP handler (stateless with
// [WithStateless]); one endpoint serves clients of both protocol
// generations. [Server.ServeListener], [Serve] and [ServeHTTP] serve it
// with a graceful shutdown that also ends MCP's long-lived event streams.
// [Server.SSEHandler] (or [WithSSEPath]) serves legacy HTTP+SSE clients.
// The server follows the toolkit's change feed until [Server.Close]:
// clients get list_changed when a list changes, and resource updates for
// what they subscribed to; [Server.Sync] re-reads everything.
//
// # Names
//
// Clients see one flat list per kind. The first source in the toolkit's
// order (builtins, connectors in registration order, user) keeps an
// item's bare name; the others get a qualified one ("namespace_name",
// [WithNameSeparator]), or every item does with [WithQualifiedNames]. Every
// exposed name maps back to exactly one item; [Server.ExposedName] tells
// it.
//
// # Calls and results
//
// A tools/call answers with a JSON-RPC error only for protocol problems
// (an unknown tool, arguments that are not an object) or with the coded
// error of an upstream server; every other failure is a result with
// isError set, for the model to read. Results keep the content blocks,
// structured content and `_meta` a gateway's upstream sent
// ([bridge.ContentCarrier]). A tool's [toolkit.Session] is the client's:
// its logger and Progress reach the client, and its trace context joins
// the caller's. A session runs at most [DefaultMaxSessionCalls] calls at
// once ([WithMaxSessionCalls], [CodeTooManyCalls]).
//
// # Requests to the client
//
// A tool may ask its client to sample a model, to elicit input or for its
// roots: the session implements [bridge.ServerRequestHandler] and
// [bridge.RootsLister], so a gateway passes an upstream server's requests
// down to the client whose call it serves. A client of 2026-07-28 is asked
// in rounds instead, with input-required results and a sealed requestState
// ([WithInputStateKeys], [InputWait], [MaxInputWaits]). [WithClientSessions]
// keeps a [bridge.Client] per client session for connectors that open an
// upstream session per client (mcp.OptPerClient). [SamplingDelegate] runs
// the toolkit's prompts on the client's model.
//
// # Policy, search and cold start
//
// The principal of each request is the UserID of the token [WithBearerAuth]
// verified: a toolkit's policy (toolkit.WithPolicy) filters each client's
// tools/list and decides its calls, a rate-limited call is answered with
// [CodeRateLimited], and every tools/call, refused ones included, is
// audited once. [WithToolSearch] serves many tools through three
// meta-tools (progressive disclosure). [WithStartupWait] holds the first
// requests until the toolkit's connectors are ready, for a bounded time.
// [WithMeterProvider] records sessions, prompt gets and resource reads.
//
// # HTTP security and ceilings
//
// Options of type [HTTPOption] configure the HTTP face: DNS-rebinding
// protection (on by default), bearer-token authentication
// ([WithBearerAuth], with an [oauth.JWTVerifier] and
// [WithProtectedResource] for an OAuth 2.1 resource server), the body
// limit and the ceilings that keep any client from holding connections or
// memory without bound: [ReadHeaderTimeout], [WithIdleTimeout],
// [WithReadTimeout], [WithMaxBodyBytes], [WithMaxSessions],
// [WithMaxSessionsPerPrincipal], [WithSessionTimeout]. Give them to
// [Server.Handler], [Server.SSEHandler], [Server.ServeListener], or to
// [New] and [Serve] through [WithHTTP]. An invalid option makes the
// function it is given to return an error naming it: never a handler that
// fails at request time, never an option silently ignored.
//
// The toolkit's skills are served by the MCP skills extension (SEP-2640),
// declared while a client may see a skill: skills/list, skills/get,
// resources/read of skill://<namespace>/<path>/<file> and
// resources/directory/read, each read through the policy and the audit
// (docs/skills.md).
//
// The guide docs/serving.md tells the long story: the naming rules in
// full, both protocol generations, input rounds, completion, policy and
// audit, metrics and the ceilings with their defaults.
package mcpserver

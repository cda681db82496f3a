// Package mcpserver serves a toolkit over the Model Context Protocol: any
// [toolkit.Toolkit] becomes an MCP server, over stdio or streamable HTTP
// (stateful or stateless), and for old clients the HTTP+SSE transport of
// protocol version 2024-11-05. A toolkit whose items come from remote MCP
// servers (package [github.com/llmkit/toolkit/mcp]) served this way is an
// MCP gateway.
//
// # Serving
//
// [New] builds a [Server] for a toolkit and registers the toolkit's tools,
// prompts, resources and resource templates with the underlying go-sdk
// server ([Server.SDK]):
//
//	srv, err := mcpserver.New(tk, &sdk.Implementation{Name: "app", Version: "1.0"})
//	...
//	err = srv.ServeStdio(ctx)                        // one client on stdin/stdout
//	h, err := srv.Handler()                          // streamable HTTP, stateful
//	http.Handle("/mcp", h)
//	err = mcpserver.Serve(ctx, tk, "127.0.0.1:8080") // or all of it in one call
//
// [Server.Run] serves one client over any go-sdk transport; [Server.Handler]
// returns the streamable HTTP handler (stateless with [WithStateless]);
// [Server.ServeListener] and [Serve] serve it with a graceful shutdown
// ([ServeHTTP]) that also ends the long-lived event streams of MCP.
// [Server.SSEHandler] serves clients that speak only the legacy HTTP+SSE
// transport; mount it at a path of its own, or give [WithSSEPath] to
// ServeListener and Serve.
//
// # Sessions and calls
//
// What a client may hold is bounded. A stateful HTTP session that gets no
// request for [DefaultSessionTimeout] (30 minutes; [WithSessionTimeout])
// is closed, so clients that vanish without ending their session do not
// accumulate. A session may have [DefaultMaxSessionCalls] calls
// (tools/call, prompts/get, resources/read, completion/complete) in flight
// at once ([WithMaxSessionCalls]), on every transport; a call beyond that
// is refused at once with a JSON-RPC error of code [CodeTooManyCalls] (not
// queued: a JSON-RPC batch of thousands of calls gets thousands of quick
// refusals, not thousands of running calls). A session may follow
// (resources/subscribe) only resources the server can read, a resource's
// URI or one a template matches (else the answer is the error -32002,
// resource not found), and 1,024 of them at most.
//
// A call's context ends when the client cancels it (notifications/cancelled),
// when the client ends its session (HTTP DELETE, which returns without
// waiting for the calls), when the client hangs up the HTTP request that
// carried the call (unless [WithEventStore] lets it resume the stream), and
// when the server closes ([Server.Close], or the end of [ServeHTTP]).
//
// The server serves tools/list and tools/call, prompts/list and prompts/get,
// resources/list, resources/read, resources/templates/list, resource
// subscriptions, completion/complete, logging and progress. A tool's
// [toolkit.Session] is the client's: its Logger sends notifications/message
// and its Progress sends notifications/progress on the request's own stream.
// W3C trace context in a request's _meta joins the caller's trace
// ([bridge.ExtractTraceMeta]); a client's cancellation cancels the call.
// The session also implements [bridge.LogForwarder]: an upstream server's
// log notification reaches a gateway's client as it came (its level, all
// eight MCP levels, its logger and its data).
//
// completion/complete asks the [WithCompletion] hook first. When it has no
// answer and the reference names an exposed prompt ("ref/prompt", by its
// exposed name) or an exposed resource template ("ref/resource", by its
// exposed URI template) whose toolkit item implements [bridge.Completer],
// the server answers with what the item's Complete returns for the
// argument, the typed value and the client's context arguments: a
// gateway's upstream prompts and templates complete as their own server
// completes them, and an upstream error answer reaches the client with its
// code. Otherwise a prompt argument completes to the enum values of its
// schema that start with the typed value; a prompt the server does not
// expose is an invalid parameter (-32602, as prompts/get answers), and
// anything else completes to nothing.
// At most 100 values go to the client (the protocol's limit), with hasMore
// set when more were cut.
//
// # Following the toolkit
//
// The server registers what the toolkit holds when it is made, then
// follows the toolkit's own change feed ([toolkit.Toolkit.Subscribe]) until
// [Server.Close]: when a list of one kind changes, it registers the new
// state of that kind, adding and removing only what changed, and clients
// get one list_changed notification; a resource update reaches the clients
// subscribed to that resource. Nothing needs wiring: serving a toolkit is
// one call, whatever its delegate. [Server.Sync] re-reads everything, for
// items that change in place without telling the toolkit.
//
// A change costs in proportion to the source that made it, not to the
// whole toolkit: an item is described for MCP again only when its value
// changed (a different pointer; the connectors keep the same value for an
// unchanged remote item), and only the items of the source that changed
// are looked at, with those of other sources whose bare name it takes or
// gives back. Every item of a kind is named again only when qualified
// names collide (a suffix is needed somewhere), for resource templates,
// and on Sync.
//
// # Tool search
//
// A gateway in front of many servers offers hundreds of tools, and every
// client puts every definition in its model's context. [WithToolSearch]
// serves them through search instead (progressive disclosure): tools/list
// holds three meta-tools, search_tools (a query and a limit: the names,
// titles and one-line descriptions of the best matching tools),
// describe_tools (names: full definitions with schemas) and call_tool (a
// name and arguments: the tool's own result, unchanged, errors included),
// plus the tools the Always patterns match, served as themselves. Names
// are the exposed names of the rules below. The search index follows the
// toolkit's changes one source at a time; such a change sends no
// list_changed, since the list a client holds did not change, while a
// change of an Always tool does. The toolkit's policy holds through the
// meta-tools by itself (see Policy below); a [ToolFilter] decides, on top
// of it, per request and from the authenticated principal, which tools a
// client may find, describe and call.
//
// # Cold start
//
// A server made at the same time as its toolkit's connectors would answer
// its first clients before the upstreams are ready: an empty tools/list,
// "unknown tool" for a call. Clients that follow list_changed catch up;
// one-shot clients (a stdio client that lists once and calls) never see
// the tools. [WithStartupWait] holds the item requests that arrive in the
// first moments after [New] until the connectors are ready or have failed
// ([toolkit.Toolkit.WaitConnectors]), for a bounded time; upstreams slower
// than that arrive with list_changed.
//
// # Names exposed to clients
//
// A toolkit gathers items from several sources (builtins, connectors, the
// user namespace); an MCP client sees one flat list per kind. The server
// gives every tool, prompt, resource and resource template an exposed name
// (a URI for resources, a URI template for templates) according to these
// rules, applied separately to each kind, to the items in the toolkit's
// source order (the order of [toolkit.Toolkit.List]: builtins, connectors
// in registration order, user):
//
//  1. The first item in source order with a given bare name (its URI for a
//     resource) keeps that name, when it is a valid MCP name
//     ([A-Za-z0-9_.-], 1 to 128 bytes). It is the item
//     [toolkit.Toolkit.LookupType] finds for the bare name, so the two
//     faces of the toolkit agree.
//  2. Every other item gets a qualified name: namespace, separator ("_" by
//     default, see WithNameSeparator), name. A qualified name that would hold
//     bytes MCP does not allow, or be longer than 128 bytes, is sanitized
//     and cut, and ends with "_" and 8 hex digits of a hash of the item's key
//     so that it stays unique. A resource's qualified URI is its URI followed
//     by "#" and the namespace, the toolkit's own key syntax; a template's
//     qualified URI template likewise ends with the literal "#namespace",
//     so the URIs it matches are the toolkit's "uri#namespace" keys.
//  3. If a qualified name is the bare name of an item of rule 1, or an
//     earlier qualified name, "_2", "_3", ... ("-2", ... for URIs) is
//     appended until it is free.
//  4. Names are a function of the toolkit's items and their source order,
//     and of nothing else: not of the order in which connectors became
//     ready, nor of the names handed out before. The same sources
//     registered in the same order give the same names after a restart,
//     and on every replica of a server behind a load balancer (a source
//     registered again, say after a change of configuration, comes after
//     the sources registered before it). The price is that a name
//     can move: when an earlier source gains an item with the bare name of
//     a later source's item (typically, an upstream registered first
//     becomes ready after one registered second), the earlier one takes
//     the bare name and the later one is qualified; when the earlier item
//     goes away, the later one gets the bare name back. Clients are told
//     by a list_changed notification. A name handed out for an item keeps
//     mapping to it for as long as the items and their order stay the
//     same; clients that must never see a name move use
//     WithQualifiedNames.
//  5. WithQualifiedNames makes rule 2 apply to every item: a qualified
//     name depends on the item alone (and on collisions between qualified
//     names, which sanitizing makes possible), so it never moves.
//
// Every exposed name maps back to exactly one item (the toolkit key
// "namespace.name", "uri#namespace" for resources, "uriTemplate#namespace"
// for templates), and the server never parses an exposed name: it looks it
// up in the table these rules build. A resources/read of a URI that an
// exposed template matches is resolved by the server itself, which knows
// the suffix it gave each template: a URI ending with a template's
// "#namespace" is read in that namespace (suffix stripped), any other in
// the namespace of the first matching template in toolkit order, through
// [toolkit.Toolkit.LookupType], so the read takes the same path as Lookup.
//
// [Server.ExposedName] tells the exposed name of a toolkit item.
//
// # Errors and results of tools/call
//
// A tools/call answers with a protocol (JSON-RPC) error only for protocol
// problems: an unknown tool (the item went away) or arguments that are not
// a JSON object (-32602, invalid params). Everything that happens once the
// toolkit runs the call is a tool result with isError set and the error's
// text as content, so that the model can read it and correct itself: a
// tool's own failure (toolkit.ErrToolFailed or any error from Run), input
// that does not satisfy the tool's schema (toolkit.ErrSchema,
// toolkit.ErrBadParameter), an unreachable upstream, a call too deep.
// A call cancelled by the client returns the context's error, which the SDK
// does not send.
//
// An error that carries a *jsonrpc.Error with a code — the answer of an
// upstream MCP server to a gateway, or one an item fails with on purpose —
// is answered with that error as it is (code, message and data), for
// tools/call, prompts/get and resources/read alike: a client of a gateway
// sees the upstream's -32602 as -32602. (An upstream tool's plain failure,
// which the go-sdk sends without a code, stays a tool result with isError.)
// A resource-not-found answer names the URI the client asked for.
//
// A result keeps the content blocks of a resource that carries them
// ([bridge.ContentCarrier], [bridge.StructuredCarrier]): a gateway passes
// an upstream result on unchanged. Otherwise a tool's output becomes one
// block chosen by its MIME type (text, image, audio, or an embedded
// resource), and its JSON, when the tool has an output schema, the
// structuredContent.
//
// Every definition the server lists (tools, prompts, resources,
// templates) carries the `_meta` of its toolkit item
// (resource.MetaCarrier), a call result the `_meta` of the tool's output,
// a prompts/get result the rendering's (prompt.Rendered.Meta), and a
// resources/read the contents' ([bridge.TypedReader], or the resource's
// own for a resource that is not one): a gateway passes an upstream's
// `_meta` on. An item whose `_meta` does not marshal to JSON is not
// listed.
//
// An MCP App's tool names its view in `_meta.ui.resourceUri`, a resource
// of its own server. When the server exposes that resource under another
// URI (with WithQualifiedNames, or when two sources list the same URI),
// each tools/list answer names the URI it serves for the resource of the
// tool's own namespace, so every tool opens its own server's view.
// Tools an app reserves for its view (`_meta.ui.visibility` without
// "model") are listed and callable here, as MCP Apps hosts expect;
// package model keeps them from models.
//
// # Extensions
//
// Each initialize and server/discover answer advertises, in
// capabilities.extensions (SEP-1724), the extensions the server's sources
// provide: those of [WithExtensions], then those each connector's server
// declares (toolkit.ConnectorState.Extensions), the first settings of an
// id winning. A client's own extensions reach the upstream sessions
// opened for it (mcp.OptPerClient); a shared upstream session does not
// speak for its clients (see package mcp).
//
// # Requests to the client
//
// A tool that runs for a client may ask that client to sample its model,
// to elicit input from its user or for its roots: the session implements
// [bridge.ServerRequestHandler] and [bridge.RootsLister], which is how a
// gateway passes an upstream server's sampling, elicitation and roots/list
// requests down to the client whose call the upstream serves (see the
// connector's mcp.OptForwardServerRequests). A client of 2026-07-28, which
// forbids server requests during a request, is asked in rounds instead: a
// tools/call whose tool asks is answered with an input-required result
// carrying the question and a requestState, and the client's retry with
// the answer resumes the same run of the tool, which goes on where it
// asked (a Go tool, or a connector whose upstream sent a server request).
// A connector's tool whose upstream answers with an input-required result
// of its own has it passed on instead ([bridge.InputRelay]): the
// client gets the upstream's input requests as they are, and a
// requestState of this server's that carries the upstream's sealed
// inside, bound as below and to the toolkit tool, so that the retry runs
// the same upstream tool again with the client's answers and the
// upstream's state; nothing waits here, so any server sharing the keys
// takes that retry (each refuses a state answered on it already: replay
// protection is per server, and across replicas bounded by the expiry).
// A run that asks in rounds waits
// for the retry at most [InputWait], [MaxInputWaits] runs at a time
// ([MaxInputWaitsPerPrincipal] of one principal, and the last quarter
// only for principals with fewer than two waiting; beyond, the tool's
// question fails). A requestState is sealed with AES-GCM
// ([WithInputStateKeys]; a random key per Server without it): it names
// the waiting run (128 random bits) and the round, and binds them to the
// principal, the tool, its arguments (a hash) and an expiry, so it is good
// for one retry of the same request by the same principal within
// [InputWait]; a forged, altered, expired, replayed, another principal's
// or another request's requestState is refused with -32602. The run waits
// in the process that started it: servers sharing a key open each other's
// requestStates but resume only their own runs, so behind a load balancer
// the rounds of one call need the same replica (sticky sessions); the
// answered requestStates a server remembers against replay are its own.
// A prompts/get or resources/read is served in rounds the same way: its
// questions (an upstream's server requests, a prompt run on the client's
// model) are asked in rounds, and an upstream's input-required result is
// relayed; its requestStates are bound to the prompt's name and
// arguments, or the URI, and to the method and item, so none serves
// another method or item. A client
// that does not offer the capability makes these methods fail with an
// error wrapping toolkit.ErrNotImplemented; the connector then answers
// with its own handlers (mcp.OptSamplingHandler, mcp.OptElicitationHandler,
// mcp.OptRoots) when it has them. Without WithClientSessions a client's
// notifications/roots/list_changed is not passed upstream: an upstream
// server that asks for roots during a call gets those of that call's
// client as they are then. [RunPromptWithSampling] and [SamplingDelegate]
// run the toolkit's prompts on the client's model.
//
// With [WithClientSessions] the server also keeps a [bridge.Client] for
// each client session that starts (stdio, stateful HTTP, legacy SSE; once
// the client sent notifications/initialized, so a client speaking
// 2026-07-28 has none, nor has a stateless HTTP request): its calls'
// sessions carry it ([bridge.ClientCarrier]), it asks the client for
// sampling, elicitation and roots outside any call, passes on the
// client's notifications/roots/list_changed, and says when the session
// ends. Its observers (an mcp.Delegate) hear of each session as it
// starts: a connector made with mcp.OptPerClient opens that client's
// upstream session there and then, so the upstream's initialize already
// sees the client's roots. Each kept session costs one goroutine.
//
// # Policy
//
// A toolkit with a policy (toolkit.WithPolicy, package policy) decides
// every call the same way whoever makes it; the server gives it the
// caller: the principal of each request is the UserID of the token
// WithBearerAuth verified ("" without auth), put in the call's context
// with toolkit.WithPrincipal. The server registers every tool and filters
// each tools/list answer for the principal asking ([toolkit.Toolkit.Visible]):
// a tool the policy denies to them, or whose definition is quarantined, is
// left out of their list, and its calls are refused with a tool result
// naming the rule. A rate-limited call is answered with the JSON-RPC error
// [CodeRateLimited], whose data says after how many seconds to retry.
// When the policy asks (effect ask), the session asks the client's user
// with a form elicitation (accept runs the call; decline or cancel refuses
// it; a client of 2026-07-28 is asked in rounds, see "Requests to the
// client"); a client without elicitation cannot be asked and the call is
// refused unless the toolkit has an approver of its own. When
// the policy changes what principals see (rules replaced, a definition
// approved), every client gets tools/list_changed. With tool search,
// search_tools and describe_tools leave out what the policy denies to the
// principal, and call_tool is decided as tools/call is. search_tools and
// describe_tools are themselves governed like any tool: each call goes
// through the toolkit's Call as a tool of no namespace under its own name,
// so a rule names them (tools: [search_tools]; a denied one also leaves
// that principal's tools/list), rate limits count them, and the audit
// records them.
//
// With an audit (toolkit.WithAudit), every tools/call is recorded once:
// those that reach the toolkit's Call by it, and those the server refuses
// itself — a name it does not serve, arguments that are not an object,
// too many calls in flight, an unknown name through call_tool, a retry of
// an input round whose requestState is refused (forged, altered,
// expired, another principal's or call's, answered already; the record's
// reason says which) — with [toolkit.Toolkit.AuditRefused].
//
// # Metrics
//
// [WithMeterProvider] records the number of open client sessions as an
// OpenTelemetry gauge (MetricSessions), and the requests that reach a
// prompt (prompts/get) or a resource (resources/read, directly or through
// a template): a counter (MetricRequests) by [AttrKind] ("prompt" or
// "resource"), namespace, [AttrItem] (the prompt's name, the resource's
// URI or the template's URI template) and outcome (toolkit.AttrOutcome:
// ok, bad_input for invalid arguments, not_found, unavailable for a
// session at its call limit or an unreachable upstream, canceled,
// timeout, error), and a duration histogram (MetricRequestDuration) by
// kind, namespace and item. One pair of instruments with a kind attribute
// serves both, so a dashboard sums or splits them at will. A name or URI
// that reaches no item is not recorded, so clients cannot add series.
// Tool calls are the toolkit's to record (toolkit.tool.calls and its
// duration, by namespace, tool and the same outcomes), as are connector
// states: give toolkit.WithMeterProvider the same provider.
//
// # HTTP security
//
// Options of type [HTTPOption] configure the HTTP face: DNS-rebinding
// protection (Host and Origin checks, on by default), bearer-token
// authentication ([WithBearerAuth]), a body limit, stateless mode, session
// idle timeout, event-store resumption, the legacy SSE path and the
// ceilings below. The checks apply to [Server.SSEHandler] as to
// [Server.Handler]. Give them to [Server.Handler], [Server.SSEHandler] or
// [Server.ServeListener], or to [New] and [Serve] through [WithHTTP]. An
// invalid option makes the function it is given to return an error naming
// it: never a handler that fails at request time, never an option silently
// ignored.
//
// # Ceilings of the HTTP face
//
// No client, authenticated or not, can hold the server's connections or
// memory without bound. Each ceiling has a default and an option; a value
// out of range is an error naming the option, from New (through
// [WithHTTP]), [Server.ServeListener], [Serve] and [ServeHTTP]:
//
//	ceiling                         default  option                           beyond it
//	headers of a request            10s      ReadHeaderTimeout (constant)     connection closed
//	keep-alive connection, idle     2 min    WithIdleTimeout (1ms–24h)        connection closed
//	request body arriving           30s      WithReadTimeout (1ms–24h)        400, connection closed
//	request body size               4 MiB    WithMaxBodyBytes                 413
//	sessions of a handler           1,000    WithMaxSessions (1–1,048,576)    503, Retry-After: 10
//	sessions of one principal       100      WithMaxSessionsPerPrincipal      503, Retry-After: 10
//	idle stateful session           30 min   WithSessionTimeout               session closed
//	calls in flight of a session    64       WithMaxSessionCalls              JSON-RPC error -32029
//	resources a session follows     1,024    (constant)                       JSON-RPC error
//
// The idle timeout is the http.Server's, so it applies where this package
// runs the server ([ServeHTTP] and what is built on it); an application
// that runs its own http.Server sets its IdleTimeout there. The read
// timeout bounds only the arrival of a request's body (through the
// request's read deadline, cleared once the body is in): the responses,
// event streams of POSTs and of the standalone GET, last as long as they
// need. A request that would open a session (a stateful POST without
// Mcp-Session-Id, a legacy SSE GET; a stateless handler keeps none) is
// refused with 503 Service
// Unavailable and a Retry-After header when the handler has
// [WithMaxSessions] sessions, or its principal (the UserID of the
// verified token's auth.TokenInfo) has [WithMaxSessionsPerPrincipal];
// requests of open sessions are never refused for it. A DELETE frees its
// session's slot before it is answered; sessions that expire or are
// closed otherwise free theirs when the ceiling is next reached. Each
// refusal is logged (at most 10 lines at once, then one a second, the
// next line saying how many were dropped) and counted in
// [MetricSessionsRefused]. An idle session costs the server about 5 KB
// of heap and one goroutine (about 2 KB of stack), as a session of a
// plain go-sdk server does.
//
// To be an OAuth 2.1 resource server, check JWT access tokens against the
// authorization server's key set with an [oauth.JWTVerifier] given to
// [WithBearerAuth] (required scopes in its options: 403
// insufficient_scope), and describe the server with
// [WithProtectedResource]: its metadata (RFC 9728) is served at the
// well-known paths and named in the WWW-Authenticate challenge of every
// 401, so that clients find where to get a token.
package mcpserver

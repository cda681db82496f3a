// Package mcp connects a toolkit to remote Model Context Protocol servers:
// each [Connector] is a [toolkit.Connector] for one server. Serving a
// toolkit to MCP clients is the other face, package
// [github.com/llmkit/toolkit/mcp/mcpserver]; the contracts the two share
// (content carriers, server requests, subscriptions, trace context) are in
// package [github.com/llmkit/toolkit/mcp/bridge].
//
// # Connectors
//
// New returns a *Connector (or an error for a URL it cannot use or an
// invalid option): a toolkit.Connector that keeps a session with one
// remote MCP server, caches its tools, prompts and resources, and serves
// them to the toolkit from memory. Run supervises the session: it connects,
// lists every item (following pagination), reports each state change
// (connecting, ready, reconnecting, failed, stopped, and needs_authorization
// with OAuth, or when a server answers 401 with a Bearer challenge to a
// connector without it: see [ErrOAuthNotConfigured]) and reconnects when the
// session is lost. The state is connecting during the first attempt only:
// an attempt that fails (a server that is down, a stdio program that exits
// before the handshake) or a session that is lost makes it reconnecting,
// with the reason in LastError, until it is ready again, and attempts go on
// for as long as Run lasts; a stdio program that is not found or not
// executable, or OptMaxAttempts failures in a row, make it failed and Run
// returns. The first attempt after a lost session is made at once
// (at most one loss a second is retried so); further failures back off
// exponentially with jitter, and the backoff starts over once a connection
// stayed up for OptStableAfter. Lists are
// refreshed when the server sends a list_changed notification; callbacks
// fire only when an item really changed (name, title, description, schemas
// or annotations).
//
// NewDelegate returns a ready toolkit.ToolkitDelegate that creates such
// connectors for the toolkit, with the options it was given (checked by
// NewDelegate, so a bad one is reported there):
//
//	delegate, err := mcp.NewDelegate("app", "1.0", mcp.OptCallTimeout(time.Minute))
//	...
//	tk, err := toolkit.New(toolkit.WithDelegate(delegate))
//	...
//	err = tk.AddConnectorNS("files", "stdio:///usr/local/bin/files-server?arg=--root&arg=/srv")
//
// # URL forms
//
// The URL given to New selects the transport:
//
//	http://host/path, https://host/path
//	    Streamable HTTP. When the server answers the first POST with
//	    400 Bad Request, 404 Not Found or 405 Method Not Allowed, the
//	    connector falls back to the legacy HTTP+SSE transport (GET on the
//	    same URL). Other failures (401, 403, 5xx, network errors) do not
//	    cause a fallback. Once a transport has worked, reconnections try it
//	    first.
//	http://host/.../sse
//	    A URL whose last path segment is exactly "sse" speaks the legacy
//	    HTTP+SSE transport directly, with no streamable attempt.
//	stdio:NAME?arg=A&arg=B&env=K%3DV&dir=/work
//	stdio:///absolute/path?arg=A
//	    A server started as a child process speaking newline-delimited
//	    JSON-RPC on its stdin and stdout. NAME is a bare command name looked
//	    up in PATH (it may not contain '/'); the second form names the
//	    program by absolute, clean path. The query may hold only these
//	    keys, each percent-encoded: arg (repeated, in order: the
//	    arguments), env (repeated, "KEY=VALUE", added to the connector's
//	    own environment) and dir (at most once, absolute: the working
//	    directory). A host ("stdio://name"), user information, a fragment,
//	    relative paths, unknown keys and NUL bytes are errors. StdioCommand
//	    parses and formats this form.
//
// Any other scheme is refused. OptDialer replaces the transport for any
// URL (for example with an in-memory transport).
//
// # Child processes
//
// A stdio server runs in its own process group. When its session ends the
// connector closes its stdin, waits (OptTerminateTimeout), sends SIGTERM to
// the group, waits again and sends SIGKILL, then reaps the process; any
// process left in the group is killed. Lines the server writes to stderr
// are logged at info level, at most 100 at once and 20 a second, each cut
// to 4 KiB; the next record, or a last one when stderr ends, says how many
// were dropped. Lines on stdout that are not JSON (a stray console.log) are
// skipped with a warning under the same limit instead of ending the
// session. A child that exits ends the session and the connector
// reconnects (starting a new child) with backoff.
//
// On Linux each server process gets the environment variable
// TOOLKIT_MCP_STDIO_SERVER with a random value; when the server is closed,
// the connector also kills (SIGKILL) what it started outside its process
// group (a new session made with setsid, or orphans of a server that
// died): its descendants at that moment and every process whose
// environment carries that value. A process that leaves the group and also
// clears its environment is found only while its parent chain is alive.
// Elsewhere only the process group is killed. The connector does not make
// itself a child subreaper: reaping orphans would steal the exit statuses
// of the application's own child processes.
//
// # Remote items
//
// Remote tools implement tool.Tool. Their names are kept as the server gives
// them (letters, digits, '_', '-', '.', up to 128 bytes); items with other
// names, and later items that repeat a name (or a resource URI), are
// skipped with one log line per page naming up to five of them. At most
// 100,000 items of one kind, and 64 MiB of their definitions (as JSON), are
// kept: the connector stops paging once the server has sent that many;
// OptMaxListItems and OptMaxListBytes lower these caps. A tool's schemas
// are kept as the compact JSON the server sent, shared by every tool with
// the same schema, and decoded when asked for: a listing holds about 2 to
// 5 times the bytes of the answers that brought it, 10 at most whatever
// their shape (schemas of thousands of empty subschemas, the smallest
// tools a server can list). The connector decodes tools/list pages
// itself, one tool at a time, and the go-sdk sees each answer without its
// tools: while a page is listed the heap peaks under 10 times its bytes
// (it was over 27 times while the SDK decoded the page whole). A tool that
// does not decode (a name that is a number, say), or whose JSON is over
// 3 MiB, is skipped, named by its place in the page's warning, and the
// server's other tools are kept. This holds over stdio, legacy SSE, an
// OptDialer's *mcp.IOTransport and streamable HTTP (a JSON answer or an
// event stream); with OptDialer and a streamable HTTP transport the SDK
// decodes the page.
// Schemas are untrusted input: a tool whose input schema is not a valid
// JSON Schema describing an object, or one that could hurt whoever walks
// it (a $ref cycle, subschemas nested more than 64 levels deep, more than
// 10,000 of them, 1 MiB of JSON, a huge enum or fan-out, definitions
// that multiply: the toolkit package documents the limits), is skipped
// like an invalid name, with its reason in the page's warning; the
// server's other tools are kept. An unusable output schema is dropped with
// a log line. A value nested more than 512 levels deep (which the go-sdk
// refuses to decode: the message is lost, and the session with it) is
// replaced with a string before the SDK decodes it, so such a tool is
// refused alone too: in every message of stdio, legacy SSE and an
// OptDialer's *mcp.IOTransport, and over streamable HTTP in a tools/list
// answer and the server's own event stream. Over streamable HTTP the
// answer to a call, read or prompt nested that deep fails that request
// alone, with an error wrapping toolkit.ErrToolFailed that says so; the
// session and the other requests in flight are kept. Over the other
// transports a call whose structured content was clamped fails the same
// way.
//
// Run maps the tools/call result to one resource:
//
//   - isError: an error wrapping toolkit.ErrToolFailed with the server's text;
//   - structuredContent: its JSON (application/json);
//   - one content: text as text/plain; image and audio as their bytes with
//     the server's MIME type; an embedded resource with its own URI, MIME
//     type and text or bytes; a resource link as a resource with the link's
//     URI whose Read fetches it from the server;
//   - several text contents: one text/plain resource, the texts joined by
//     newlines;
//   - several contents of mixed kinds: the MCP content array as JSON
//     (application/json), binary data base64-encoded as on the wire;
//   - no content: no output.
//
// Results without a URI of their own are named mcp://SERVER/tool/NAME.
// Every result (and every message of a rendered remote prompt) also
// implements [bridge.ContentCarrier] and [bridge.StructuredCarrier] with the
// blocks and structured content it was mapped from, so a toolkit served
// with package mcpserver hands them on unchanged: a gateway is transparent
// to content.
//
// Remote prompts implement prompt.Prompt and prompt.Renderer: their
// arguments become an object schema of string properties, and Render calls
// prompts/get (non-string argument values are passed as their JSON text).
// Remote resources implement resource.Resource; Read calls resources/read
// and returns the text or bytes of the content whose URI matches (else the
// first content). Remote resource templates (resources/templates/list,
// refreshed with the resources) implement resource.Template and make the
// connector a toolkit.TemplateLister: Open gives a remote resource for any
// URI the template matches. Templates that do not parse as absolute RFC
// 6570 templates are skipped with a log line.
//
// # _meta
//
// The `_meta` a server gives its tools, prompts, resources and templates,
// and the `_meta` of its call results, prompts/get results and resource
// contents, is data the connector keeps: items implement
// toolkit.MetaCarrier (resource.MetaCarrier) with their definition's,
// every tool output implements it with the result's (a result with no
// content but a `_meta` is an empty text/plain resource, so that the
// `_meta` is not lost), prompt.Rendered.Meta holds a rendering's, and
// [bridge.TypedReader] returns the contents' with the data. Content blocks
// keep their own inside the blocks. The keys the protocol defines for one
// hop are taken out (progressToken, the 2026-07-28 per-request keys such
// as io.modelcontextprotocol/serverInfo, related-task, traceparent and
// tracestate): a server face adds its own. A `_meta` is bounded like the
// rest of a definition: one that nests objects and arrays more than 32
// levels deep, or whose keys and values add up to more than 64 KiB, skips
// its item alone (named in the page's warning) or fails its answer with an
// error wrapping toolkit.ErrToolFailed that says so.
//
// # Extensions
//
// OptExtensions declares extensions (SEP-1724 capabilities.extensions) to
// the server; the server's own declaration is in the connector's state
// (toolkit.ConnectorState.Extensions), bounded like a `_meta`. An upstream
// session opened for one client (OptPerClient) declares that client's
// extensions too, so a server that offers an extension's items only to
// clients that can use them (an MCP Apps server's UI tools) sees the
// client behind the gateway. The shared session never declares a
// client's extensions on its behalf: it serves every client, and one
// client's declaration says nothing of the others'. Give OptExtensions to
// a shared connector only when every client of the gateway can use what
// the extension brings.
//
// Remote prompts and remote resource templates also implement
// [bridge.Completer]: Complete asks their server for values of an argument
// (a template's variable) with completion/complete, naming the prompt or
// the URI template as the server gave it, the typed value and the other
// arguments already chosen, and returns the server's values, total and
// hasMore as they came. The request is safe to repeat, like prompts/get.
// A server that does not declare the completions capability has nothing
// to suggest: Complete returns an empty result without a request. A
// server's error answer fails with toolkit.ErrToolFailed and keeps its
// *jsonrpc.Error in the chain.
//
// # Calls
//
// A request whose connection breaks is sent again on the next connection
// only when that cannot do harm: when the failure proves that the server
// never processed it, or when it is safe to repeat (resources/read,
// prompts/get, completion/complete, and tools annotated read-only or
// idempotent). Any other tool call that may have run fails with
// toolkit.ErrUnavailable. A request the transport took without an error
// (a stdio or OptDialer connection's write, an HTTP POST under way) may
// have run, whatever error follows.
//
// A call made while the connector is not ready waits up to
// OptReconnectWait for it, then fails with an error wrapping
// toolkit.ErrUnavailable naming the server; when the connector stops
// meanwhile, it fails at once with toolkit.ErrClosed. While a call waits,
// reconnection attempts are made at least once a second (each backoff is
// cut to one second after a failed attempt), so a server back after a long
// outage is reached soon after it returns.
//
// OptMaxConcurrency bounds the requests in flight on a connector (further
// callers wait for a slot, bounded by their context, and send nothing if
// they give up); OptMaxResultBytes refuses a tool result, rendered prompt
// or resource read larger than a limit (its texts and bytes, plus a tool's
// structured content as JSON) with an error wrapping toolkit.ErrToolFailed.
//
// Stopping a connector, or losing its session, cancels the requests in
// flight; over HTTP the connector waits up to half a second for their
// notifications/cancelled to be posted before it deletes the session, so
// the server stops their handlers and keeps no session. A tool's Run does
// not validate its input again (Toolkit.Call did); input that is not valid
// JSON fails with an error wrapping toolkit.ErrBadParameter and is not
// sent.
//
// Progress notifications reach the caller's
// toolkit.SessionFromContext(ctx).Progress while its call is in flight
// (only values that increase, as the protocol requires, and at most 100 at
// once then 10 a second a call, so a server cannot flood the caller), and
// log messages of the server (rate-limited and cut like stderr lines)
// reach that session's logger: over streamable
// HTTP those that come on the call's own response stream, otherwise while
// exactly one call is in flight on the connector (the connector's logger
// gets the rest). No progress is asked for when the caller's session has
// neither an ID nor a client (the toolkit's no-op session, which would only
// log it). On the transports the connector makes itself (stdio, streamable
// HTTP, SSE), it reads notifications from the stream as they arrive, so a
// notification the server sends before its result reaches the caller
// before the call returns; with OptDialer the SDK delivers them, and one
// sent right before the result may arrive too late. Cancelling the call's
// context cancels the remote request (the server receives
// notifications/cancelled). A stateless server (go-sdk's stateless
// streamable HTTP, for one) may not act on the cancellation.
//
// # Subscriptions
//
// Remote resources implement [bridge.Subscriber]: Subscribe asks the server
// for updates of the resource (counted, and renewed after every
// reconnection), which arrive through OptOnResourceUpdated. An MCP server
// made with package mcpserver passes its clients' subscriptions to the
// resources that implement it, so a gateway follows upstream exactly what
// its clients follow. OptSubscribeResources
// subscribes to every resource instead.
//
// # Requests from the server
//
// While one of its tools runs, a server may ask its client to sample a
// model (sampling/createMessage), to ask the user (elicitation/create) or
// for the client's roots (roots/list: the directories and files it may
// work in). The connector answers on behalf of the caller whose call the
// request belongs to:
//
//   - the caller's toolkit.Session answers first when it implements
//     [bridge.ServerRequestHandler] (sampling, elicitation) or
//     [bridge.RootsLister] (roots). The sessions package mcpserver gives
//     its clients' calls do, by asking their own MCP client, so a gateway
//     passes each downstream client's sampling, elicitation and roots to
//     the upstream calls made for that client, and the answers back up;
//   - otherwise, or when the caller cannot (its error wraps
//     toolkit.ErrNotImplemented, as for a downstream client without that
//     capability), the connector's own handler answers:
//     OptSamplingHandler (the application's model), OptElicitationHandler
//     (its user interface), the roots of OptRoots or OptRootSet;
//   - a request nothing answers is refused with a JSON-RPC error: method
//     not found (-32601) when nothing here answers that kind of request,
//     internal error (-32603) when it cannot be told whose it is; when the
//     caller could not answer and the connector has no handler, the server
//     gets the caller's error, which says why. The application's log gets
//     an info line saying how to enable it (at most one a minute per
//     kind).
//
// A handler's answer goes to the server as it is, as the go-sdk client
// sends it: an error with a JSON-RPC code keeps it (a downstream client's
// refusal reaches the upstream server unchanged), a plain error goes
// without one.
//
// The connector advertises sampling and elicitation when it has a handler
// of its own or OptForwardServerRequests is given, and roots when it has
// roots or forwards; a server that asks for something not advertised is
// refused. [Connector.SetRoots] (or [RootSet.Set] for a set shared by
// many connectors, given to each through [Delegate] options) replaces the
// roots at run time, and the server is told with
// notifications/roots/list_changed.
//
// Which call a request belongs to: with the stateless protocol the SDK
// hands it over in the call's own context. Over streamable HTTP a server
// sends the requests of a call on that call's response stream (the event
// stream answering its POST); the connector reads each such stream and
// marks the sampling, elicitation and roots requests in it with the call
// they came for (a key of its own in their _meta, taken out before anyone
// sees the request), so concurrent calls each get their own. Only those
// requests are decoded and encoded again; the rest of a stream passes
// unchanged, held back at most 512 bytes per event. A request that comes
// on no call's stream (stdio and the legacy SSE transport have one stream
// for everything), or whose marked event is larger than
// OptMaxMessageBytes, belongs to the only call in flight on the
// connection; when several calls are in flight it is not guessed. A
// downstream client speaking 2026-07-28 cannot receive server requests
// during a request: a gateway's server face turns them into input-required
// results for it (package mcpserver).
//
// # Per-client upstream sessions
//
// A connector shares one upstream session among all its callers. With
// OptPerClient each client of a server face (a [bridge.Client]: a
// gateway's downstream session, kept by mcpserver.WithClientSessions)
// gets an upstream session of its own (for a stdio server, its own
// process), opened when the client's session starts ([Delegate] and
// [Connector] are [bridge.ClientObserver]s) or at its first call, and
// closed when the client's session ends, when it has made no call for
// the idle time (OptClientSessionLimits), or when the connector stops;
// what the server asks of the client then ends with it, and a stdio
// server is ended whatever a handler waits for. There
// the connector advertises what the client offers, answers roots/list
// with that client's roots, passes its notifications/roots/list_changed
// on, and sends the server's sampling and elicitation requests to it. At
// most OptPerClient's maximum are open at once, and at most a share of
// them for the clients of one principal (OptClientSessionLimits); at a
// limit an idle session makes room, else a client's calls fail with
// [ErrTooManyClientSessions] naming the limit. The calls of a principal
// without a client session (protocol 2026-07-28, stateless HTTP) share
// an upstream session of that principal's; anonymous ones are refused
// ([ErrNoClientSession]). The listing, subscriptions and in-process calls
// stay on the connector's own session; [Connector.ClientSessions] counts
// the others.
//
// # Tasks
//
// A server may declare that a tool may or must run as a task
// (task-augmented execution, "execution": {"taskSupport": ...} in
// tools/list). The connector reads the declaration from the raw tools/list
// answers (the go-sdk drops it) and reports it through [TaskSupporter].
// It does not support tasks: a tool whose support is "optional" is called
// normally, and one whose support is "required" stays listed, with a note
// in its description, but calls to it fail at once with [ErrTaskRequired]
// without reaching the server. With OptDialer and a streamable HTTP
// transport the declaration cannot be read, and such a tool's calls reach
// the server, which refuses them.
//
// # OAuth
//
// An HTTP connector authorizes itself with OAuth when given
// OptOAuth: on a 401 (or a 403 with insufficient_scope) it discovers the
// server's protected resource metadata and its authorization server,
// identifies itself by client ID metadata document, pre-registration or
// dynamic registration, and runs the authorization code flow with PKCE and
// the resource indicator, all through the go-sdk's
// auth.AuthorizationCodeHandler. The mechanisms live in package
// mcp/oauth; the connector only wires them in. The application supplies
// how the user authorizes (oauth.Config.Authorize);
// oauth.LoopbackAuthorizer is one for command-line programs. Tokens are
// refreshed shortly before they expire and, with oauth.Config.Store
// (oauth.NewFileTokenStore), survive restarts, stored by the authorization
// server's issuer and the resource (see oauth.TokenStore), beside the
// client's dynamic registration, made once per authorization server. When
// an authorization is needed (no token, a token that expired without a
// refresh token, a refresh refused, a token revoked) while the user is
// asked, and after a failed authorization until the next attempt (which
// backs off, honouring the authorization server's Retry-After), the
// connector's state is toolkit.StatusNeedsAuthorization, its LastError
// says why, and calls fail at once with ErrAuthorizationPending; once
// authorized it goes on by itself (see the package oauth documentation
// for each case). OptOAuthClientCredentials uses the client
// credentials grant instead (OptOAuthClientCredentialsJWT with a private
// key), OptOAuthEnterprise enterprise-managed authorization,
// OptOAuthTokenExchange token exchange of the user's own token, and
// OptOAuthHandler takes any SDK handler. Tokens never appear in logs,
// errors or the state. Connectors on the legacy SSE transport authorize
// the same way. The flow's requests go only to public https destinations
// or to the server's own origin, whatever the server's metadata names;
// OptOAuthAllow allows others (an authorization server on a private
// network).
//
// A connector that serves many users (a gateway's) can act upstream with
// each one's own credentials: OptOAuthPerUser gives each principal of the
// server face's clients an OAuth handler and tokens of its own, kept by
// principal, issuer and resource, and asks a user without a token on
// their own session through URL-mode elicitation (or fails the call with
// an AuthorizationRequiredError, JSON-RPC -32042, for a client that
// cannot be asked); the redirect reaches an oauth.Callback the program
// serves. Anonymous calls fail with ErrNoUser. OptOAuthPerUserTokenExchange
// asks nobody: each user's calls go with a token exchanged for the access
// token of their latest call, which the server face verified
// (bridge.CallCredentials, User.SubjectToken). OptOAuthPerUserFlow takes
// any per-user flow.
//
// # Names in logs and errors
//
// Every log record of a connector (its own, the SDK client's, a stdio
// server's stderr lines) carries a "connector" attribute, and its errors
// name it: by the namespace given with OptNamespace, else by the one the
// toolkit runs it under (toolkit.ConnectorNamespace), else, until it has
// one, by its URL without query or user information. Errors that quote a
// request URL (net/http's do) lose its secrets (toolkit.RedactError).
//
// # Protocol version
//
// The connector asks for DefaultProtocolVersion, the newest
// (StatelessProtocolVersion, 2026-07-28), and speaks the newest version
// the server does: it sends server/discover first and falls back to the
// initialize handshake (StatefulProtocolVersion, 2025-11-25, or older)
// when the server refuses it, as the go-sdk's client does. A server that
// never answers server/discover costs one connection attempt: the next
// asks for StatefulProtocolVersion directly (and the one after a failure
// so, for the newest again). A stateful streamable HTTP server of the
// go-sdk, a legacy SSE server and every server of an older SDK are spoken
// to in 2025-11-25 or older; a stdio, in-memory or stateless HTTP go-sdk
// server in 2026-07-28. [toolkit.ConnectorState].ProtocolVersion says
// which, and a reconnection negotiates again.
//
// A connector that authorizes with OAuth (OptOAuth and its kin) asks for
// StatefulProtocolVersion unless OptProtocolVersion says otherwise: the
// go-sdk's client falls back to initialize on any failure of
// server/discover, an authorization waiting for the user included, and
// that initialize then races the user's answer (whether the attempt waits
// for the user, and is reported so, or goes on in the older protocol
// would depend on who is faster). Give such a connector
// OptProtocolVersion(StatelessProtocolVersion) for a server that speaks
// only 2026-07-28.
//
// What changes with 2026-07-28:
//   - There is no session: a lost connection is noticed only when a
//     request fails, after which the connector checks the server with a
//     ping and reconnects (a session of the initialize handshake is still
//     watched, and its loss noticed at once). The guarantee against
//     running a tool twice is the same for both.
//   - The log level of OptLogLevel goes in every request's _meta instead
//     of logging/setLevel.
//   - List changes and resource updates come on subscriptions/listen
//     streams, which the go-sdk's client opens (one for list changes,
//     one per subscribed resource) but does not open again when the
//     server ends one; the connector then connects again (at once for a
//     stream ended cleanly, after checking the server for one that broke;
//     with backoff when it keeps happening), lists every item anew and
//     renews the subscriptions, so no change is missed for good.
//   - A server needing sampling or elicitation during a call answers with
//     an input-required result; the connector runs the rounds itself (at
//     most 10, as the go-sdk's client, whose own it turns off), answered
//     by the same handlers as server requests: the caller's session
//     (OptForwardServerRequests), else OptSamplingHandler and
//     OptElicitationHandler. Roots asked that way are the connector's own
//     (OptRoots, OptRootSet), never a caller's. A caller that relays
//     such rounds to its own client (bridge.InputRelay: an mcpserver
//     serving a client of 2026-07-28) gets a tools/call's input-required
//     result instead, as a *bridge.InputRequired error, and sends the
//     client's answers and the server's requestState back with its
//     retry. The sessions of OptPerClient keep the go-sdk's rounds.
//   - A server whose tools still send server requests (the go-sdk's
//     ServerSession.CreateMessage, Elicit or ListRoots) but that accepts
//     2026-07-28 has those requests refused by its own SDK; give its
//     connector OptProtocolVersion(StatefulProtocolVersion), or make the
//     server speak only the initialize handshake's versions.
package mcp

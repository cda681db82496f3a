// Package toolkit gathers tools, prompts and resources from everywhere an
// agent needs them — Go code in the same process, remote MCP servers, and
// the application's own persistent store — behind one small surface:
// List, Lookup and Call.
//
// A Go function becomes a tool, and Call runs it with Go values as its
// input ([Input]):
//
//	type addIn struct {
//		A int `json:"a"`
//		B int `json:"b"`
//	}
//
//	add := func(_ context.Context, in addIn) (int, error) { return in.A + in.B, nil }
//	tk, err := toolkit.New(toolkit.WithTool(tool.Must("add", "Adds two integers.", add)))
//	...
//	out, err := tk.Call(ctx, "add", toolkit.Input(addIn{A: 2, B: 3}))
//	data, err := out.Read(ctx) // 5
//
// Remote MCP servers join through a delegate that makes their connectors
// (mcp.NewDelegate, in package mcp), each under a namespace; Run keeps
// them connected, and their tools are called like the builtins:
//
//	delegate, err := mcp.NewDelegate("my-app", "1.0.0")
//	tk, err := toolkit.New(toolkit.WithDelegate(delegate))
//	err = tk.AddConnectorNS("everything", "stdio:npx?arg=-y&arg=@modelcontextprotocol/server-everything")
//	go tk.Run(ctx)
//	_, err = tk.WaitConnectors(ctx, "everything") // bound ctx: a server may never come
//	out, err := tk.Call(ctx, "everything.echo", toolkit.Input(map[string]any{"message": "hi"}))
//
// A Toolkit holds builtins (registered with AddTool, AddPrompt,
// AddResource and AddResourceTemplate, served under the namespace
// "builtin") and connectors (added
// with AddConnector or AddConnectorNS, each under a namespace of its own,
// and the delegate's "user" namespace). Run keeps the connectors alive;
// they can be added and removed while it runs.
//
// Reads never wait: List and Lookup read an immutable snapshot that every
// change replaces atomically, so a slow or dead server never blocks them.
// Lookup accepts "namespace.name", "uri#namespace", a bare name or a bare
// URI. A bare key is settled by source first — builtins, then connectors in
// registration order, then "user" — and only then by kind (tools before
// prompts before resources), so a remote item never shadows a builtin. A
// URI that no resource has is matched against the resource templates
// (ResourceTemplate), which List shows with ListTypeTemplates.
//
// The toolkit publishes its own changes. Subscribe registers a function
// that receives, in order and outside any toolkit lock, an event for every
// list that changed (ConnectorEventToolListChanged and its siblings, with
// the namespace, "builtin" for builtins), every resource update and every
// connector state change (ConnectorEventStateChange, with the state's URL
// and namespace). Each subscriber has a queue of its own, so a slow one
// delays nobody else; an undelivered event absorbs later ones about the
// same thing (a list of one namespace and kind, a resource, a connector's
// state), and past 4096 waiting events the oldest are dropped with a
// warning. The items an event announces are in List and Lookup before it
// is delivered; a connector is announced ready only once its items are.
// The delegate's OnEvent is one such subscriber, which does not receive
// state changes. WaitConnectors blocks until connectors are ready (or have
// failed), so a program can use a server's tools right after adding it.
//
// Call runs every tool through one pipeline: resolve, then, inside a span
// when a tracer is set, check the call depth, validate the input against
// the tool's input schema (resolved once and cached), put the session and
// the call's resources in the context, run with panic recovery, wrap the
// output into a Resource and validate it against the output schema. A
// failure at any step marks the span as an error. Prompts are run by the
// delegate, in a span of their own.
//
// A tool's schemas are untrusted input, checked once, when they are
// resolved: subschemas nested at most 64 levels deep, at most 10,000 of
// them and 1 MiB, at most 1,000 members in a keyword (properties, allOf
// branches, required names, ...) and 10,000 enum values; no $ref cycle
// that checks a value against itself ({"$ref":"#"}, definitions that refer
// to each other through allOf); no subschema whose check of one value
// costs more than 50,000 (subschemas, counted once for every path of
// $refs and combinators that reaches them, weighed with their enum,
// properties and required lists). AddTool refuses a tool whose schema
// breaks one, and a call of such a tool held by value fails with an error
// wrapping ErrSchema and ErrBadParameter. Recursion that goes into the
// input (a tree whose children are trees) is accepted: each input is then
// checked first to nest at most 256 levels deep and to cost at most 50,000
// for each of its parts, or the call fails with ErrBadParameter. Other
// schemas cost nothing more per call.
//
// With WithMeterProvider the toolkit records OpenTelemetry metrics: tool
// calls by namespace, tool and outcome (Outcome), their latency, the calls
// in flight, each connector's status and its lost connections. Without it
// a call pays one nil check.
//
// With WithPolicy a Policy decides every tool call (package policy is a
// rule engine): allow, deny — the tool is also left out of the
// principal's lists (Visible) — or ask an Approver (ContextWithApprover,
// the session's, WithApprover) for a person's yes. The principal is what
// WithPrincipal put in the context; the MCP server face sets the
// authenticated client's. A refusal is a *PolicyError wrapping ErrDenied
// (ErrRateLimited for a rate limit). WithAudit writes one slog record per
// call, run or refused, with the SHA-256 of its arguments rather than the
// arguments. Without a policy or an audit a call pays one nil check.
//
// Errors wrap the sentinels of this package (ErrNotFound, ErrBadParameter,
// ErrConflict, ...) and name the item they are about; test them with
// errors.Is.
//
// The subpackages hold the contracts and helpers: tool (Tool, typed tools
// from Go functions, the structured-output tool), prompt (markdown prompts
// with YAML front matter), resource (Resource and its constructors), store
// (a directory-backed "user" namespace), mcp (a connector for remote MCP
// servers), mcp/mcpserver (a server that exposes any Toolkit over MCP) and
// model (names, tool definitions and dispatch for model providers).
package toolkit

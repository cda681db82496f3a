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
// # Sources
//
// A [Toolkit] holds builtins (registered with [Toolkit.AddTool],
// [Toolkit.AddPrompt], [Toolkit.AddResource] and
// [Toolkit.AddResourceTemplate], served under the namespace "builtin") and
// connectors (added with [Toolkit.AddConnector] or
// [Toolkit.AddConnectorNS], each under a namespace of its own, and the
// delegate's "user" namespace). [Toolkit.Run] keeps the connectors alive;
// they can be added and removed while it runs, and
// [Toolkit.WaitConnectors] blocks until they are ready (or have failed).
// Skills ([Skill], package skill) are the fourth kind, from builtins
// ([WithSkill]), the store and connectors that serve them ([SkillLister]):
// [Toolkit.ListSkills], [Toolkit.LookupSkill], and [Toolkit.ReadSkill],
// which the policy and the audit see (docs/skills.md).
//
// # Reads
//
// [Toolkit.List] and [Toolkit.Lookup] never wait: they read an immutable
// snapshot that every change replaces atomically, so a slow or dead server
// never blocks them. Lookup accepts "namespace.name", "uri#namespace", a
// bare name or a bare URI; a bare key is settled by source first
// (builtins, connectors in registration order, "user"), so a remote item
// never shadows a builtin. A URI that no resource has is matched against
// the resource templates ([ResourceTemplate]).
//
// [Toolkit.Subscribe] publishes the toolkit's own changes: every list that
// changed, every resource update and every connector state change, in
// order, each subscriber on a queue of its own. The items an event
// announces are in List and Lookup before it is delivered.
//
// # Calls
//
// [Toolkit.Call] runs every tool through one pipeline: resolve, check the
// call depth ([WithMaxCallDepth]), validate the input against the tool's
// input schema, run with panic recovery inside a span ([WithTracer]), wrap
// the output into a Resource and validate it against the output schema.
// A tool's schemas are untrusted input, checked once when resolved:
// [Toolkit.AddTool] refuses one that could hurt whoever walks it, and a
// call of such a tool fails with [ErrSchema]. Inside a tool,
// [SessionFromContext] is the caller's session.
//
// [WithMeterProvider] records OpenTelemetry metrics of calls and
// connectors. With [WithPolicy] a [Policy] decides every tool call (package
// policy is a rule engine): allow, deny — the tool also leaves the
// principal's lists ([Toolkit.Visible]) — or ask an [Approver]; the
// principal is what [WithPrincipal] put in the context. [WithAudit] writes
// one slog record per call, run or refused. Without them a call pays one
// nil check each.
//
// # Errors
//
// Errors wrap the sentinels of this package ([ErrNotFound],
// [ErrBadParameter], [ErrConflict], [ErrToolFailed], ...) and name the item
// they are about; test them with errors.Is.
//
// # Subpackages and guides
//
// The subpackages hold the contracts and helpers: tool (Tool, typed tools
// from Go functions, the structured-output tool), prompt (markdown prompts
// with YAML front matter), resource (Resource and its constructors), store
// (a directory-backed "user" namespace), mcp (a connector for remote MCP
// servers), mcp/mcpserver (a server that exposes any Toolkit over MCP),
// policy (rules, rate limits, pins) and model (names, tool definitions and
// dispatch for model providers).
//
// The guide docs/toolkit.md tells the long story of names, lookup, lists,
// calls, schema limits and metrics; docs/policy.md that of policies and
// audit.
package toolkit

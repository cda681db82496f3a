package toolkit

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

// Tool is a callable function with JSON input; see package tool.
type Tool = tool.Tool

// ToolMeta holds advisory hints about a tool's behaviour.
type ToolMeta = tool.Meta

// Prompt is a reusable prompt template ("agent"); see package prompt.
type Prompt = prompt.Prompt

// Resource is an addressable blob of data; see package resource.
type Resource = resource.Resource

// ResourceTemplate is a family of resources named by an RFC 6570 URI
// template (MCP's resource templates); see package resource. Lookup of a
// URI that no resource has returns the resource a matching template gives.
type ResourceTemplate = resource.Template

// MetaCarrier is implemented by items (tools, prompts, resources,
// templates) and call outputs that carry MCP `_meta`; see package
// resource.
type MetaCarrier = resource.MetaCarrier

// Reserved namespaces and the URI of the user connector.
const (
	// BuiltinNamespace is the namespace of the items added to the toolkit
	// itself (AddTool, WithTool, ...).
	BuiltinNamespace = "builtin"
	// UserNamespace is the namespace the delegate's user connector serves.
	UserNamespace = "user"
	// UserConnectorURI is the URL the toolkit gives the delegate's
	// CreateConnector for the user connector.
	UserConnectorURI = "connector:user"
)

// ReservedNames are item names no ordinary builtin may take (the
// structured-output tool made by tool.NewOutputTool, named
// tool.OutputToolName, may).
var ReservedNames = []string{"submit_output"}

// ReservedNamespaces are namespaces no connector may take.
var ReservedNamespaces = []string{BuiltinNamespace, UserNamespace}

// DefaultMaxCallDepth is the default limit on nested Calls (a tool or
// prompt calling back into the toolkit).
const DefaultMaxCallDepth = 8

// ToolkitDelegate connects a toolkit to the application: it runs prompts,
// creates connectors and receives events.
type ToolkitDelegate interface {
	// OnEvent receives list-change and resource-update events, in order and
	// outside any toolkit lock, so it may call back into the toolkit. The
	// delegate is one subscriber like those of Toolkit.Subscribe (same
	// ordering, coalescing and bounds) except that state-change events are
	// not forwarded to it.
	OnEvent(ConnectorEvent)

	// Call runs a prompt (usually with a model). The first resource holds
	// the input; the others are attachments.
	Call(ctx context.Context, p Prompt, resources ...Resource) (Resource, error)

	// CreateConnector creates the connector for url. The connector reports
	// its lifecycle and list changes through onEvent. It is called with
	// UserConnectorURI for the "user" namespace; return ErrNotImplemented
	// (or a nil connector) when there is none: the toolkit then has no user
	// namespace and Connectors does not list one. Any other error also
	// leaves the toolkit without a user namespace, but New logs it and
	// Connectors lists the user connector as StatusFailed with the error
	// as LastError.
	CreateConnector(url string, onEvent func(ConnectorEvent)) (Connector, error)
}

// Option configures a Toolkit in New.
type Option func(*Toolkit) error

// WithTool registers builtin tools.
func WithTool(items ...Tool) Option {
	return func(tk *Toolkit) error { return tk.AddTool(items...) }
}

// WithPrompt registers builtin prompts.
func WithPrompt(items ...Prompt) Option {
	return func(tk *Toolkit) error { return tk.AddPrompt(items...) }
}

// WithResource registers builtin resources.
func WithResource(items ...Resource) Option {
	return func(tk *Toolkit) error { return tk.AddResource(items...) }
}

// WithResourceTemplate registers builtin resource templates.
func WithResourceTemplate(items ...ResourceTemplate) Option {
	return func(tk *Toolkit) error { return tk.AddResourceTemplate(items...) }
}

// WithDelegate sets the delegate that runs prompts, creates connectors,
// serves the "user" namespace and receives events.
func WithDelegate(d ToolkitDelegate) Option {
	return func(tk *Toolkit) error { tk.delegate = d; return nil }
}

// WithTracer sets an OpenTelemetry tracer: every call of a tool or prompt
// runs in a span named after it, with the item's namespace and name as
// attributes. The span covers the whole call pipeline, so a call refused
// for its depth, schema or input is traced like one that fails in Run: the
// error is recorded and the span's status is Error.
func WithTracer(t trace.Tracer) Option {
	return func(tk *Toolkit) error { tk.tracer = t; return nil }
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(tk *Toolkit) error { tk.logger = l; return nil }
}

// WithMaxCallDepth sets the limit on nested calls (default
// DefaultMaxCallDepth).
func WithMaxCallDepth(n int) Option {
	return func(tk *Toolkit) error { tk.maxDepth = n; return nil }
}

// Toolkit aggregates tools, prompts, resources and resource templates from
// builtins, connectors (remote MCP servers) and the delegate's "user"
// namespace, and presents them through List, Lookup and Call. It is safe
// for concurrent use.
//
// Reads (List, Lookup, Call's resolution) use an immutable snapshot that
// every change replaces atomically: they never take a lock and never wait
// for a connector.
type Toolkit struct {
	delegate ToolkitDelegate
	tracer   trace.Tracer
	metrics  *metrics // WithMeterProvider; nil without
	guardCfg guardConfig
	guard    *guard // policy, approvals and audit (guard.go); nil without
	logger   *slog.Logger
	maxDepth int
	noop     localSession
	calls    atomic.Uint64 // the ids of calls (frame.id)

	snap  atomic.Pointer[snapshot]
	adhoc adhocCache // schemas of tools called by value that it does not hold
	feed  feed
	// drainTimeout bounds Run's wait for pending events (eventDrainTimeout).
	drainTimeout time.Duration

	skills skillSet // builtin skills (skills.go)

	mu       sync.Mutex // guards everything below and snapshot publication
	builtin  [NumKinds]map[string]*entry
	builtinS *source
	conns    []*conn // registration order
	user     *conn
	building bool // New is applying options: no events yet
	run      *runState
	closed   bool
	// changed is closed and replaced whenever a connector's state changes,
	// a connector is removed or the toolkit stops (see WaitConnectors).
	changed chan struct{}
}

// New creates a toolkit. Options are applied in order; an option that fails
// fails New. With a delegate, New asks it for the "user" connector
// (CreateConnector with UserConnectorURI); an error there leaves the
// toolkit without a user namespace but does not fail New (see
// ToolkitDelegate.CreateConnector).
func New(opts ...Option) (*Toolkit, error) {
	tk := &Toolkit{maxDepth: DefaultMaxCallDepth, building: true, drainTimeout: eventDrainTimeout, changed: make(chan struct{})}
	for k := range NumKinds {
		tk.builtin[k] = map[string]*entry{}
	}
	tk.builtinS = newSource(BuiltinNamespace, [NumKinds][]*entry{})
	tk.snap.Store(buildSnapshot([]*source{tk.builtinS}))
	// Options that set fields come first so that builtins added by other
	// options see the logger; apply all in order.
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(tk); err != nil {
			return nil, err
		}
	}
	// Every log line of the toolkit goes through RedactHandler.
	tk.logger = RedactLogger(tk.logger)
	if tk.maxDepth < 1 {
		tk.maxDepth = DefaultMaxCallDepth
	}
	tk.noop.logger = tk.logger
	tk.guard = newGuard(tk, tk.guardCfg)
	tk.feed.logger = tk.logger
	if tk.delegate != nil {
		tk.feed.add("delegate", tk.deliverToDelegate, false)
		tk.openUser()
	}
	tk.mu.Lock()
	tk.building = false
	tk.mu.Unlock()
	return tk, nil
}

// Logger returns the toolkit's logger.
func (tk *Toolkit) Logger() *slog.Logger { return tk.logger }

// publish rebuilds and publishes the snapshot. tk.mu must be held.
func (tk *Toolkit) publish() {
	sources := make([]*source, 0, len(tk.conns)+2)
	sources = append(sources, tk.builtinS)
	for _, c := range tk.conns {
		if c.src != nil {
			sources = append(sources, c.src)
		}
	}
	if tk.user != nil && tk.user.src != nil {
		sources = append(sources, tk.user.src)
	}
	next := buildSnapshot(sources)
	next.gen = tk.snap.Load().gen + 1
	tk.snap.Store(next)
}

// signal wakes the waiters of WaitConnectors. tk.mu must be held.
func (tk *Toolkit) signal() {
	close(tk.changed)
	tk.changed = make(chan struct{})
}

// generation returns the number of snapshots published so far; tests use
// it to tell whether a change was published.
func (tk *Toolkit) generation() uint64 { return tk.snap.Load().gen }

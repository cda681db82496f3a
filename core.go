package toolkit

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"
)

// Toolkit aggregates tools, prompts and resources from builtins, connectors
// (remote MCP servers) and the delegate's "user" namespace, and presents
// them through List, Lookup and Call. It is safe for concurrent use.
//
// Reads (List, Lookup, Call's resolution) use an immutable snapshot that
// every change replaces atomically: they never take a lock and never wait
// for a connector.
type Toolkit struct {
	delegate ToolkitDelegate
	tracer   trace.Tracer
	logger   *slog.Logger
	maxDepth int
	noop     localSession

	snap   atomic.Pointer[snapshot]
	adhoc  sync.Map // Tool -> *toolSchemas for unregistered tools
	events dispatcher

	mu       sync.Mutex // guards everything below and snapshot publication
	builtin  [numKinds]map[string]*entry
	builtinS *source
	conns    []*conn // registration order
	user     *conn
	building bool // New is applying options: no events yet
	run      *runState
	closed   bool
}

// New creates a toolkit. Options are applied in order; an option that fails
// fails New. With a delegate, New asks it for the "user" connector
// (CreateConnector with UserConnectorURI).
func New(opts ...Option) (*Toolkit, error) {
	tk := &Toolkit{maxDepth: DefaultMaxCallDepth, building: true}
	for k := range numKinds {
		tk.builtin[k] = map[string]*entry{}
	}
	tk.builtinS = newSource(BuiltinNamespace, [numKinds][]*entry{})
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
	if tk.logger == nil {
		tk.logger = slog.Default()
	}
	if tk.maxDepth < 1 {
		tk.maxDepth = DefaultMaxCallDepth
	}
	tk.noop.logger = tk.logger
	tk.events.deliver = tk.deliver
	if tk.delegate != nil {
		if err := tk.openUser(); err != nil {
			return nil, err
		}
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
	tk.snap.Store(buildSnapshot(sources))
}

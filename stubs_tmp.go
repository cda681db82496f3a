package toolkit

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// Toolkit aggregates tools, prompts and resources.
type Toolkit struct {
	delegate ToolkitDelegate
	tracer   trace.Tracer
	logger   *slog.Logger
	maxDepth int
	noop     localSession
}

type frame struct{ tk *Toolkit }

func frameFrom(ctx context.Context) *frame { return nil }

// New creates a toolkit.
func New(opts ...Option) (*Toolkit, error) { return &Toolkit{}, nil }

// AddTool registers builtin tools.
func (tk *Toolkit) AddTool(items ...Tool) error { return ErrNotImplemented }

// AddPrompt registers builtin prompts.
func (tk *Toolkit) AddPrompt(items ...Prompt) error { return ErrNotImplemented }

// AddResource registers builtin resources.
func (tk *Toolkit) AddResource(items ...Resource) error { return ErrNotImplemented }

// RemoveBuiltin removes a builtin.
func (tk *Toolkit) RemoveBuiltin(name string) error { return ErrNotImplemented }

// AddConnector adds a connector.
func (tk *Toolkit) AddConnector(url string) error { return ErrNotImplemented }

// AddConnectorNS adds a connector.
func (tk *Toolkit) AddConnectorNS(ns, url string) error { return ErrNotImplemented }

// RemoveConnector removes a connector.
func (tk *Toolkit) RemoveConnector(url string) error { return ErrNotImplemented }

// Connectors reports connector states.
func (tk *Toolkit) Connectors() []ConnectorState { return nil }

// Run runs.
func (tk *Toolkit) Run(ctx context.Context) error { return ErrNotImplemented }

// Lookup looks up.
func (tk *Toolkit) Lookup(ctx context.Context, key string) (any, error) { return nil, ErrNotImplemented }

// LookupItem looks up.
func (tk *Toolkit) LookupItem(ctx context.Context, key string) (Item, error) {
	return Item{}, ErrNotImplemented
}

// List lists.
func (tk *Toolkit) List(ctx context.Context, req ListRequest) (*ListResponse, error) {
	return nil, ErrNotImplemented
}

// Call calls.
func (tk *Toolkit) Call(ctx context.Context, item any, resources ...Resource) (Resource, error) {
	return nil, ErrNotImplemented
}

// ResourcesFromContext returns the resources passed to the current Call.
func ResourcesFromContext(ctx context.Context) []Resource { return nil }

// CallDepth returns the nesting depth of the current call (0 outside any call).
func CallDepth(ctx context.Context) int { return 0 }

package tool

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
)

// Tool is a callable function with JSON input.
type Tool interface {
	// Name returns the unique identifier of the tool.
	Name() string
	// Description returns a human-readable description of what the tool does.
	Description() string
	// InputSchema returns the JSON Schema of the input; it must describe an
	// object. A nil schema means the input is not validated.
	InputSchema() (*jsonschema.Schema, error)
	// OutputSchema returns the JSON Schema of the output, or nil.
	OutputSchema() (*jsonschema.Schema, error)
	// Meta returns optional hints about the tool's behaviour.
	Meta() Meta
	// Run executes the tool. It returns nil for no output, or a string,
	// []byte, json.RawMessage, resource.Resource, or any other value, which
	// is marshalled as JSON.
	Run(ctx context.Context, input json.RawMessage) (any, error)
}

// Meta holds advisory hints about a tool's behaviour.
type Meta struct {
	// Title is a human-readable display name.
	Title string
	// ReadOnlyHint reports that the tool does not modify its environment.
	ReadOnlyHint bool
	// DestructiveHint, when non-nil and true, reports that the tool may
	// perform destructive updates. Meaningful only when ReadOnlyHint is false.
	DestructiveHint *bool
	// IdempotentHint reports that repeated identical calls have no further
	// effect. Meaningful only when ReadOnlyHint is false.
	IdempotentHint bool
	// OpenWorldHint, when non-nil and true, reports that the tool may reach
	// entities outside a closed domain.
	OpenWorldHint *bool
}

// Base gives a tool no-op OutputSchema and Meta methods. Embed it.
type Base struct{}

// OutputSchema returns nil: no output schema.
func (Base) OutputSchema() (*jsonschema.Schema, error) { return nil, nil }

// Meta returns the zero Meta.
func (Base) Meta() Meta { return Meta{} }

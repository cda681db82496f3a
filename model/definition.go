package model

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/internal/schemaguard"
)

// Definition is a provider-neutral function-tool definition: what a model
// needs to know to call one toolkit item.
type Definition struct {
	// Name is the model-safe name (see Namer).
	Name string `json:"name"`
	// Description tells the model what the tool does.
	Description string `json:"description,omitempty"`
	// Parameters is the input schema: a JSON Schema object with
	// "type":"object". It is never empty.
	Parameters json.RawMessage `json:"parameters"`
	// Strict asks providers that support it (OpenAI) to hold the model to
	// the schema exactly. It is only set for schemas that qualify (see
	// IsStrictSchema).
	Strict bool `json:"strict,omitempty"`
	// Deferred asks a provider that loads tool definitions on demand to
	// load this one only when its own tool search finds it: the Anthropic
	// format writes "defer_loading": true (Anthropic's tool search tool
	// must then be in the request, see Disclosure.Split); the other
	// formats leave it out.
	Deferred bool `json:"deferred,omitempty"`
	// Item is the toolkit item the definition stands for.
	Item toolkit.Item `json:"-"`
}

// NewDefinition builds the definition of a tool or prompt under the given
// model name. A prompt becomes a callable tool whose arguments are its
// input; its description falls back to its title. A missing input schema
// becomes an empty object schema; a schema that does not describe an
// object, or that the toolkit's schema checks refuse (a $ref cycle,
// nesting or size past the limits of the guide docs/toolkit.md), is an error wrapping
// ErrSchema that names the item.
func NewDefinition(name string, it toolkit.Item) (Definition, error) {
	d := Definition{Name: name, Item: it}
	var schema *jsonschema.Schema
	var err error
	switch v := it.Value.(type) {
	case toolkit.Tool:
		d.Description = v.Description()
		if d.Description == "" && v.Meta().Title != "" {
			d.Description = v.Meta().Title
		}
		schema, err = v.InputSchema()
	case toolkit.Prompt:
		d.Description = v.Description()
		if d.Description == "" {
			d.Description = v.Title()
		}
		schema, err = v.InputSchema()
	default:
		return Definition{}, fmt.Errorf("%w: %s %q: not a tool or prompt (%T)", errs.ErrBadParameter, it.Type, it.Key(), it.Value)
	}
	if err != nil {
		return Definition{}, fmt.Errorf("%w: %s %q: input schema: %v", errs.ErrSchema, it.Type, it.Key(), err)
	}
	var raw json.RawMessage
	if schema != nil {
		// The schema is untrusted (a remote tool's, say): checked before it
		// is encoded and walked (schemaguard).
		if _, err := schemaguard.Check(schema); err != nil {
			return Definition{}, fmt.Errorf("%w: %s %q: input schema: %w", errs.ErrSchema, it.Type, it.Key(), err)
		}
		if raw, err = json.Marshal(schema); err != nil {
			return Definition{}, fmt.Errorf("%w: %s %q: input schema: %v", errs.ErrSchema, it.Type, it.Key(), err)
		}
	}
	if d.Parameters, err = normalizeParameters(raw); err != nil {
		return Definition{}, fmt.Errorf("%s %q: %w", it.Type, it.Key(), err)
	}
	return d, nil
}

package model

import (
	"encoding/json"
	"fmt"
	"slices"

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
	// Item is the toolkit item the definition stands for.
	Item toolkit.Item `json:"-"`
}

// NewDefinition builds the definition of a tool or prompt under the given
// model name. A prompt becomes a callable tool whose arguments are its
// input; its description falls back to its title. A missing input schema
// becomes an empty object schema; a schema that does not describe an
// object, or that the toolkit's schema checks refuse (a $ref cycle,
// nesting or size past the limits the toolkit package documents), is an error wrapping
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

// IsStrictSchema reports whether an object schema qualifies for OpenAI's
// strict mode as it stands: every object in it forbids additional
// properties and requires all of its properties, and it uses no
// combinator but anyOf.
func IsStrictSchema(params json.RawMessage) bool {
	v, err := decodeSchema(params)
	if err != nil {
		return false
	}
	return strictNode(v, 0)
}

func strictNode(v any, depth int) bool {
	if depth > 64 {
		return false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, kw := range []string{"allOf", "oneOf", "not", "if", "then", "else", "patternProperties"} {
		if _, ok := m[kw]; ok {
			return false
		}
	}
	if props, ok := m["properties"].(map[string]any); ok || m["type"] == "object" {
		if m["additionalProperties"] != false {
			return false
		}
		req := stringList(m["required"])
		for name, p := range props {
			if !slices.Contains(req, name) || !strictNode(p, depth+1) {
				return false
			}
		}
	}
	if it, ok := m["items"]; ok && !strictNode(it, depth+1) {
		return false
	}
	for _, kw := range []string{"anyOf"} {
		if l, ok := m[kw].([]any); ok {
			for _, b := range l {
				if !strictNode(b, depth+1) {
					return false
				}
			}
		}
	}
	for _, kw := range []string{"$defs", "definitions"} {
		if d, ok := m[kw].(map[string]any); ok {
			for _, s := range d {
				if !strictNode(s, depth+1) {
					return false
				}
			}
		}
	}
	return true
}

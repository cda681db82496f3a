package toolkit

import (
	"math"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// flatSchema is an input schema of the shape most tools have: an object
// whose properties are each a string, a number, an integer or a boolean,
// some of them required, with or without "additionalProperties": false,
// and nothing else that validation looks at. It accepts a decoded input
// exactly when the full validator accepts it, without the full
// validator's work; an input it refuses is validated again by the full
// validator, whose error is the one returned.
type flatSchema struct {
	props    map[string]string // property name -> its JSON type
	required []string
	closed   bool // additionalProperties: false
}

// newFlatSchema returns s's flatSchema, or nil when s has another shape.
func newFlatSchema(s *jsonschema.Schema) *flatSchema {
	if s == nil || !isObjectSchema(s) || !onlyAnnotations(*s, func(c *jsonschema.Schema) {
		c.Type, c.Types, c.Properties, c.Required, c.AdditionalProperties = "", nil, nil, nil, nil
	}) {
		return nil
	}
	f := &flatSchema{props: make(map[string]string, len(s.Properties)), required: s.Required}
	for name, p := range s.Properties {
		if p == nil || !flatTypes[p.Type] || !onlyAnnotations(*p, func(c *jsonschema.Schema) { c.Type = "" }) {
			return nil
		}
		f.props[name] = p.Type
	}
	if a := s.AdditionalProperties; a != nil {
		// false, as jsonschema decodes it: {"not": {}}.
		if a.Not == nil || !reflect.ValueOf(*a.Not).IsZero() || !onlyAnnotations(*a, func(c *jsonschema.Schema) { c.Not = nil }) {
			return nil
		}
		f.closed = true
	}
	return f
}

// flatTypes are the property types a flatSchema checks.
var flatTypes = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true}

// onlyAnnotations reports whether s, once clear has removed the keywords
// the caller handles and the annotations (which validation does not look
// at) are removed too, has no keyword left. "$schema" is not among them:
// the validator refuses some values of it.
func onlyAnnotations(s jsonschema.Schema, clear func(*jsonschema.Schema)) bool {
	clear(&s)
	s.Comment, s.Title, s.Description, s.Default, s.Examples = "", "", "", nil, nil
	s.Deprecated, s.ReadOnly, s.WriteOnly, s.PropertyOrder = false, false, false, nil
	return reflect.ValueOf(s).IsZero()
}

// valid reports whether v, as encoding/json decodes an input into an any,
// satisfies the schema.
func (f *flatSchema) valid(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, name := range f.required {
		if _, ok := m[name]; !ok {
			return false
		}
	}
	for name, val := range m {
		typ, ok := f.props[name]
		if !ok {
			if f.closed {
				return false
			}
			continue
		}
		if !hasJSONType(val, typ) {
			return false
		}
	}
	return true
}

// hasJSONType reports whether a decoded value is of the JSON Schema type
// typ, as jsonschema's validator decides it: a number with no fraction is
// an integer, and every number is a number.
func hasJSONType(v any, typ string) bool {
	switch v := v.(type) {
	case string:
		return typ == "string"
	case bool:
		return typ == "boolean"
	case float64:
		if typ == "number" {
			return true
		}
		_, frac := math.Modf(v)
		return typ == "integer" && frac == 0
	}
	return false
}

package schemaguard

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
)

// Check checks the schema s (see the package documentation). It returns
// the Plan that bounds the validation of each value when that depends on
// the value, or nil when every value is bounded by the schema alone. A nil
// s is an empty schema: nothing to check. The error is an *Error.
//
// Check only reads s; it does not resolve it (jsonschema-go's Resolve is
// safe on a schema Check accepted).
func Check(s *jsonschema.Schema) (*Plan, error) {
	if s == nil {
		return nil, nil
	}
	g, err := build(s)
	if err != nil {
		return nil, err
	}
	if err := g.link(); err != nil {
		return nil, err
	}
	a := &analysis{g: g}
	a.reach()
	if err := a.inPlace(); err != nil {
		return nil, err
	}
	if a.bounded() {
		return nil, nil
	}
	return newPlan(a)
}

// CheckJSON checks a schema given as JSON: first its length and nesting,
// on the bytes (jsonschema-go's decoding costs the length times the
// nesting), then, once decoded, what Check checks. It returns the
// decoded schema and its Plan. JSON that is not a schema (an array, a
// number) is an error.
func CheckJSON(data []byte) (*jsonschema.Schema, *Plan, error) {
	if err := CheckShape(data); err != nil {
		return nil, nil, err
	}
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(data, s); err != nil {
		return nil, nil, errorf("not a JSON Schema: %v", err)
	}
	p, err := Check(s)
	if err != nil {
		return nil, nil, err
	}
	return s, p, nil
}

// CheckShape checks what CheckJSON checks of a schema's JSON before
// decoding it: its length, at most MaxBytes, and its nesting (about twice
// MaxDepth, and the values a schema holds). It reads the bytes once and
// decodes nothing, so that a walker of decoded JSON can use it on every
// schema it is given.
func CheckShape(data []byte) error {
	if len(data) > MaxBytes {
		return errorf("the schema is larger than %d bytes", MaxBytes)
	}
	switch depth, weight := jsonShape(data, maxJSONDepth, maxNestedBytes); {
	case depth > maxJSONDepth:
		return errorf("the schema's JSON nests more than %d levels deep", maxJSONDepth)
	case weight > maxNestedBytes:
		return errorf("the schema's JSON is too large for how deeply it nests (%d bytes)", len(data))
	}
	return nil
}

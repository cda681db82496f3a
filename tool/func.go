package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/internal/names"
)

// Func is a Tool made from a typed Go function by New.
//
// Its input schema is inferred from In with jsonschema.For and must describe
// an object: In is a struct, a pointer to a struct, or a map with string
// keys. Its output schema is inferred from Out when Out is a struct, a
// pointer to a struct or a map with string keys (the only outputs an MCP
// client accepts as structured content); for any other Out (a string, a
// slice, a number, an interface) the tool has no output schema.
type Func[In, Out any] struct {
	name, description string
	fn                func(context.Context, In) (Out, error)
	meta              Meta
	in, out           *jsonschema.Schema
	// strict makes Run refuse object keys that In does not declare; it is
	// set when the inferred schema forbids additional properties, as it
	// does for structs.
	strict bool
}

var _ Tool = (*Func[struct{}, string])(nil)

// New makes a Tool named name from fn. The schemas are inferred and
// resolved once, here: New fails when In does not map to an object schema,
// when a schema cannot be inferred or resolved, or when name is not a valid
// identifier.
//
// Run decodes its input into In (an empty or null input counts as {}),
// calls fn and returns its result as is; the toolkit turns it into a
// resource. Schema validation of the input is the caller's job: the toolkit
// validates against InputSchema before it calls Run.
func New[In, Out any](name, description string, fn func(context.Context, In) (Out, error), opts ...Option) (*Func[In, Out], error) {
	if err := names.CheckIdent("tool", name); err != nil {
		return nil, err
	}
	if names.IsReservedName(name) {
		return nil, fmt.Errorf("%w: tool name %q is reserved", errs.ErrBadParameter, name)
	}
	if fn == nil {
		return nil, fmt.Errorf("%w: tool %q: nil function", errs.ErrBadParameter, name)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	in, err := jsonschema.For[In](nil)
	if err != nil {
		return nil, fmt.Errorf("%w: tool %q: input schema: %v", errs.ErrBadParameter, name, err)
	}
	if !objectOrNullable(in) {
		return nil, fmt.Errorf("%w: tool %q: input type %s does not map to a JSON object", errs.ErrBadParameter, name, reflect.TypeFor[In]())
	}
	in.Types, in.Type = nil, "object" // a nil or empty input decodes as {}
	if _, err := in.Resolve(nil); err != nil {
		return nil, fmt.Errorf("%w: tool %q: input schema: %v", errs.ErrBadParameter, name, err)
	}
	var out *jsonschema.Schema
	if structured(reflect.TypeFor[Out]()) {
		if out, err = jsonschema.For[Out](nil); err != nil {
			return nil, fmt.Errorf("%w: tool %q: output schema: %v", errs.ErrBadParameter, name, err)
		}
		out.Types, out.Type = nil, "object"
		if _, err := out.Resolve(nil); err != nil {
			return nil, fmt.Errorf("%w: tool %q: output schema: %v", errs.ErrBadParameter, name, err)
		}
	}
	return &Func[In, Out]{
		name:        name,
		description: description,
		fn:          fn,
		meta:        o.meta,
		in:          in,
		out:         out,
		strict:      isFalse(in.AdditionalProperties),
	}, nil
}

// Must is like New but panics on error. It suits package-level variables
// and tests.
func Must[In, Out any](name, description string, fn func(context.Context, In) (Out, error), opts ...Option) *Func[In, Out] {
	t, err := New(name, description, fn, opts...)
	if err != nil {
		panic(err)
	}
	return t
}

// Name returns the tool's name.
func (f *Func[In, Out]) Name() string { return f.name }

// Description returns the tool's description.
func (f *Func[In, Out]) Description() string { return f.description }

// InputSchema returns the schema inferred from In. It is shared: do not
// modify it.
func (f *Func[In, Out]) InputSchema() (*jsonschema.Schema, error) { return f.in, nil }

// OutputSchema returns the schema inferred from Out, or nil when Out is not
// a struct or map type. It is shared: do not modify it.
func (f *Func[In, Out]) OutputSchema() (*jsonschema.Schema, error) { return f.out, nil }

// Meta returns the hints set by the options.
func (f *Func[In, Out]) Meta() Meta { return f.meta }

// Run decodes input into In and calls the function. Unknown object keys are
// refused when the input schema forbids them (structs); an empty or null
// input counts as {}. A nil pointer result is returned as nil (no output).
func (f *Func[In, Out]) Run(ctx context.Context, input json.RawMessage) (any, error) {
	var in In
	if err := f.decode(input, &in); err != nil {
		return nil, fmt.Errorf("%w: tool %q: input: %v", errs.ErrBadParameter, f.name, err)
	}
	out, err := f.fn(ctx, in)
	if err != nil {
		return nil, err
	}
	if v := reflect.ValueOf(out); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, nil
	}
	return out, nil
}

func (f *Func[In, Out]) decode(input json.RawMessage, in *In) error {
	input = bytes.TrimSpace(input)
	if len(input) == 0 || string(input) == "null" {
		input = json.RawMessage("{}")
	}
	if !f.strict {
		return json.Unmarshal(input, in)
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// objectOrNullable reports whether s describes an object, possibly nullable
// (the schema jsonschema.For infers for a pointer to a struct).
func objectOrNullable(s *jsonschema.Schema) bool {
	switch {
	case s.Type == "object":
		return true
	case len(s.Types) == 1:
		return s.Types[0] == "object"
	case len(s.Types) == 2:
		return s.Types[0] == "null" && s.Types[1] == "object" || s.Types[0] == "object" && s.Types[1] == "null"
	}
	return false
}

// structured reports whether values of t are JSON objects with a known
// shape: structs, pointers to structs and maps with string keys.
func structured(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		return true
	case reflect.Map:
		return t.Key().Kind() == reflect.String
	}
	return false
}

// isFalse reports whether s is the schema that matches nothing, which
// jsonschema.For uses for "additionalProperties": false.
func isFalse(s *jsonschema.Schema) bool {
	if s == nil {
		return false
	}
	b, err := json.Marshal(s)
	return err == nil && string(b) == "false"
}

package toolkit

import (
	"context"
	"encoding/json"

	"github.com/llmkit/toolkit/resource"
)

// Input returns the resource that hands Go values to [Toolkit.Call] as the
// input of a tool (or the variables of a prompt): its content is the JSON
// of v, so
//
//	tk.Call(ctx, "add", toolkit.Input(map[string]any{"a": 2, "b": 3}))
//
// calls the tool "add" with {"a":2,"b":3}. v may be any value that
// encoding/json marshals: a map, a struct with json tags, a slice. A
// [json.RawMessage] or []byte is taken as JSON text as it is (it must be
// valid JSON); any other value, a string included, is marshalled; nil
// means no input, {}.
//
// Input never fails and never panics: a value that does not marshal (a
// channel, a function, a NaN) gives a resource whose Read returns the
// marshalling error, so the Call it is given to fails, before anything
// runs, with an error that wraps [ErrBadParameter] and names the tool.
//
// The name says what the resource is for: Call takes its first resource
// as the tool's input, the value its InputSchema describes (MCP sends it
// as the call's "arguments"). The resource is named "input" and has the
// type application/json ([resource.TypeJSON]).
func Input(v any) Resource {
	if v == nil {
		v = json.RawMessage("{}")
	}
	r, err := resource.JSON(inputName, v)
	if err != nil {
		return badInput{Resource: resource.Must(inputName, json.RawMessage("{}")), err: err}
	}
	return r
}

// inputName is the name of the resources Input makes.
const inputName = "input"

// badInput is the resource Input returns for a value that does not
// marshal: its Read reports why.
type badInput struct {
	Resource // URI, name and type
	err      error
}

// Read returns the marshalling error.
func (r badInput) Read(context.Context) ([]byte, error) { return nil, r.err }

package toolkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

// rawTool is a tool "echo" without an input schema: it sees its input as
// Call passes it.
type rawTool struct {
	tool.Base
	run func(json.RawMessage)
}

func (*rawTool) Name() string                             { return "echo" }
func (*rawTool) Description() string                      { return "Returns its input." }
func (*rawTool) InputSchema() (*jsonschema.Schema, error) { return nil, nil }
func (t *rawTool) Run(_ context.Context, in json.RawMessage) (any, error) {
	t.run(in)
	return in, nil
}

// Input hands Go values to a tool as its JSON input, whatever their Go
// type.
func TestInputGivesTheValuesJSON(t *testing.T) {
	var got []string
	tk, err := toolkit.New(toolkit.WithTool(&rawTool{run: func(in json.RawMessage) { got = append(got, string(in)) }}))
	if err != nil {
		t.Fatal(err)
	}
	type point struct {
		X int    `json:"x"`
		Y int    `json:"y,omitempty"`
		L string `json:"label"`
	}
	for _, tc := range []struct {
		in   any
		want string
	}{
		{map[string]any{"b": 3, "a": 2}, `{"a":2,"b":3}`},
		{point{X: 1, L: "<here>"}, `{"x":1,"label":"<here>"}`}, // no HTML escaping
		{&point{X: 2}, `{"x":2,"label":""}`},
		{nil, `{}`},
		{json.RawMessage(`{"raw": true}`), `{"raw": true}`},
		{[]byte(`{"bytes":1}`), `{"bytes":1}`},
	} {
		in := toolkit.Input(tc.in)
		if in.Name() != "input" || in.Type() != resource.TypeJSON || resource.CheckURI(in.URI()) != nil {
			t.Errorf("Input(%#v): name %q, type %q, URI %q", tc.in, in.Name(), in.Type(), in.URI())
		}
		got = got[:0]
		if _, err := tk.Call(t.Context(), "echo", in); err != nil {
			t.Errorf("Input(%#v): %v", tc.in, err)
			continue
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("Input(%#v): the tool got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A value that does not marshal is reported by the Call it is given to,
// naming the tool, and the tool does not run.
func TestInputThatDoesNotMarshalFailsTheCall(t *testing.T) {
	ran := false
	tk, err := toolkit.New(toolkit.WithTool(&rawTool{run: func(json.RawMessage) { ran = true }}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   any
		want string
	}{
		{map[string]any{"c": make(chan int)}, "unsupported type: chan int"},
		{func() {}, "unsupported type: func()"},
		{math.Inf(1), "unsupported value: +Inf"},
		{json.RawMessage(`{"a":`), "invalid JSON"},
	} {
		in := toolkit.Input(tc.in)
		if resource.CheckURI(in.URI()) != nil || in.Name() != "input" {
			t.Errorf("Input(%T) is not a well-formed resource: %q %q", tc.in, in.URI(), in.Name())
		}
		_, err := tk.Call(t.Context(), "echo", in)
		if !errors.Is(err, toolkit.ErrBadParameter) || errors.Is(err, toolkit.ErrToolFailed) ||
			!strings.Contains(err.Error(), `tool "echo"`) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Input(%T): %v, want ErrBadParameter naming the tool and %q", tc.in, err, tc.want)
		}
	}
	if ran {
		t.Error("the tool ran on an input that does not marshal")
	}
}

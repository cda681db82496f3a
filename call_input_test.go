package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// inputResource holds a tool's input and counts its reads.
type inputResource struct {
	testResource
	data  []byte
	reads atomic.Int32
}

func (r *inputResource) Type() string { return "application/json" }
func (r *inputResource) Read(context.Context) ([]byte, error) {
	r.reads.Add(1)
	return r.data, nil
}

// TestCallInputOnePass checks that Call reads a tool's input once, checks
// it (syntax, and the schema when there is one) and hands the very bytes it
// read to Run.
func TestCallInputOnePass(t *testing.T) {
	var got []byte
	run := func(_ context.Context, in json.RawMessage) (any, error) { got = in; return nil, nil }
	withSchema := &testTool{name: "with_schema", run: run, in: objSchema(map[string]*jsonschema.Schema{"n": {Type: "integer"}}, "n")}
	noSchema := &testTool{name: "no_schema", run: run}
	badSchema := &testTool{name: "bad_schema", run: run, in: &jsonschema.Schema{Type: "object", Ref: "#/$defs/missing"}}
	tk := mustNew(t, WithTool(withSchema, noSchema))
	tests := []struct {
		tool  Tool
		input string
		want  error // nil: Run gets the input
	}{
		{withSchema, ` { "n" : 1, "extra": "é\u00e9" } `, nil},
		{withSchema, `{"n": 1.5}`, ErrSchema},
		{withSchema, `{}`, ErrSchema},
		{withSchema, ``, ErrSchema}, // no input is {}
		{withSchema, `{"n": 1} trailing`, ErrBadParameter},
		{withSchema, `{"n": 1`, ErrBadParameter},
		{noSchema, `[1, 2]`, nil},
		{noSchema, `{"a":`, ErrBadParameter},
		// A tool whose schema does not resolve, called by value: its input
		// is checked for syntax first, as before.
		{badSchema, `{"n":`, ErrBadParameter},
		{badSchema, `{}`, ErrSchema},
	}
	for _, tt := range tests {
		got = nil
		in := &inputResource{testResource: testResource{uri: "mem://input", name: "input"}, data: []byte(tt.input)}
		_, err := tk.Call(t.Context(), tt.tool, in)
		name := tt.tool.Name()
		if tt.want == nil {
			if err != nil {
				t.Errorf("%s %q: %v", name, tt.input, err)
				continue
			}
			if &got[0] != &in.data[0] {
				t.Errorf("%s %q: Run got %q, not the bytes read", name, tt.input, got)
			}
		} else {
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), `"`+name+`"`) {
				t.Errorf("%s %q: err = %v, want %v naming the tool", name, tt.input, err, tt.want)
			}
			if tt.want == ErrBadParameter && errors.Is(err, ErrSchema) {
				t.Errorf("%s %q: invalid JSON reported as a schema error: %v", name, tt.input, err)
			}
			if got != nil {
				t.Errorf("%s %q: Run ran on a refused input", name, tt.input)
			}
		}
		if n := in.reads.Load(); n != 1 {
			t.Errorf("%s %q: input read %d times", name, tt.input, n)
		}
	}
}

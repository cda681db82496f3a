package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/internal/names"
	"github.com/llmkit/toolkit/tool"
)

func answerSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	s, err := jsonschema.For[struct {
		Summary string   `json:"summary"`
		Points  []string `json:"points,omitempty"`
	}](nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewOutputTool(t *testing.T) {
	s := answerSchema(t)
	ot, err := tool.NewOutputTool(s)
	if err != nil {
		t.Fatal(err)
	}
	if ot.Name() != tool.OutputToolName || ot.Name() != "submit_output" {
		t.Errorf("name = %q", ot.Name())
	}
	in, _ := ot.InputSchema()
	out, _ := ot.OutputSchema()
	if in.Properties["summary"] == nil || out != in {
		t.Errorf("schemas: in %v out %v", in, out)
	}
	// The tool keeps its own copy.
	s.Properties["summary"].Type = "integer"
	if in.Properties["summary"].Type != "string" {
		t.Error("changing the caller's schema changed the tool's")
	}
	if !ot.Meta().ReadOnlyHint || ot.Description() == "" {
		t.Errorf("meta %+v description %q", ot.Meta(), ot.Description())
	}
	if !strings.Contains(tool.OutputToolInstruction, tool.OutputToolName) {
		t.Error("instruction does not name the tool")
	}
}

func TestNewOutputToolErrors(t *testing.T) {
	tests := []struct {
		name string
		s    *jsonschema.Schema
	}{
		{"nil", nil},
		{"string", &jsonschema.Schema{Type: "string"}},
		{"untyped", &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{"a": {}}}},
		{"nullable", &jsonschema.Schema{Types: []string{"null", "object"}}},
		{"unresolvable", &jsonschema.Schema{Type: "object", Ref: "https://example.com/remote.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tool.NewOutputTool(tt.s)
			if !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), "submit_output") {
				t.Errorf("err = %v, want ErrBadParameter naming the tool", err)
			}
		})
	}
}

func TestOutputToolRun(t *testing.T) {
	ot, err := tool.NewOutputTool(answerSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		input string
		want  string
		err   error
	}{
		{`{ "summary": "ok",  "points": ["a"] }`, `{"summary":"ok","points":["a"]}`, nil},
		{`{"summary":"ok"}`, `{"summary":"ok"}`, nil},
		{`{}`, "", errs.ErrSchema},                         // summary is required
		{``, "", errs.ErrSchema},                           // empty counts as {}
		{`{"summary":"ok","extra":1}`, "", errs.ErrSchema}, // no additional properties
		{`{"summary":1}`, "", errs.ErrSchema},              // wrong type
		{`{"summary":"ok"`, "", errs.ErrBadParameter},      // broken JSON
		{`{"summary":"ok"} {}`, "", errs.ErrBadParameter},  // trailing data
	}
	for _, tt := range tests {
		got, err := ot.Run(context.Background(), json.RawMessage(tt.input))
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("Run(%s): err = %v, want %v", tt.input, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Run(%s): %v", tt.input, err)
			continue
		}
		raw, ok := got.(json.RawMessage)
		if !ok || string(raw) != tt.want {
			t.Errorf("Run(%s) = %#v, want json.RawMessage %s", tt.input, got, tt.want)
		}
	}
}

func TestOutputToolRunCopiesInput(t *testing.T) {
	ot, _ := tool.NewOutputTool(answerSchema(t))
	in := json.RawMessage(`{"summary":"ok"}`)
	got, err := ot.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	in[13] = 'X'
	if string(got.(json.RawMessage)) != `{"summary":"ok"}` {
		t.Errorf("result shares memory with the input: %s", got)
	}
}

// OutputToolName is declared with its value, so that go doc shows it; it
// must stay the name the rules reserve.
func TestOutputToolNameIsTheReservedName(t *testing.T) {
	if tool.OutputToolName != names.OutputToolName {
		t.Errorf("OutputToolName = %q, the rules reserve %q", tool.OutputToolName, names.OutputToolName)
	}
}

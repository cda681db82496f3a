package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaOf decodes a hand-made schema.
func schemaOf(t *testing.T, raw string) *jsonschema.Schema {
	t.Helper()
	s := new(jsonschema.Schema)
	if err := json.Unmarshal([]byte(raw), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// jsonInput is a tool input.
func jsonInput(s string) Resource {
	return &inputResource{testResource: testResource{uri: "mem://input", name: "input"}, data: []byte(s)}
}

// hostileSchemas are input schemas whose validation never ended: the
// first call overflowed the stack and killed the process.
func hostileSchemas(t *testing.T) map[string]*jsonschema.Schema {
	deep := &jsonschema.Schema{}
	for range 5000 {
		deep = &jsonschema.Schema{Not: deep}
	}
	return map[string]*jsonschema.Schema{
		"self_ref":   schemaOf(t, `{"type":"object","$ref":"#"}`),
		"mutual_ref": schemaOf(t, `{"type":"object","$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}}}`),
		"not_self":   schemaOf(t, `{"type":"object","properties":{"x":{"$ref":"#/$defs/n"}},"$defs":{"n":{"not":{"$ref":"#/$defs/n"}}}}`),
		"deep":       {Type: "object", Properties: map[string]*jsonschema.Schema{"a": deep}},
	}
}

// A builtin tool with a hostile schema is refused by AddTool; called by
// value, the call fails with an error naming the tool and its schema's
// fault, without running it; the process survives.
func TestHostileToolSchema(t *testing.T) {
	for name, schema := range hostileSchemas(t) {
		t.Run(name, func(t *testing.T) {
			ran := false
			tl := &testTool{name: name, in: schema, run: func(context.Context, json.RawMessage) (any, error) { ran = true; return nil, nil }}
			tk := mustNew(t)
			if err := tk.AddTool(tl); !errors.Is(err, ErrBadParameter) || !strings.Contains(err.Error(), name) {
				t.Errorf("AddTool: %v", err)
			}
			_, err := tk.Call(t.Context(), tl, jsonInput(`{"x":1}`))
			if !errors.Is(err, ErrSchema) || !errors.Is(err, ErrBadParameter) || !strings.Contains(err.Error(), name) {
				t.Errorf("Call: %v", err)
			}
			if ran {
				t.Error("the tool ran")
			}
		})
	}
	out := &testTool{name: "bad_output", out: schemaOf(t, `{"$ref":"#"}`)}
	if err := mustNew(t).AddTool(out); !errors.Is(err, ErrBadParameter) || !strings.Contains(err.Error(), "output schema") {
		t.Errorf("AddTool with a cyclic output schema: %v", err)
	}
}

// A recursive schema whose recursion goes into the input (a tree) is
// legitimate: the tool is added and called. The input's depth is bounded,
// and so is the work of a schema that checks each level twice.
func TestRecursiveToolSchema(t *testing.T) {
	runs := 0
	run := func(context.Context, json.RawMessage) (any, error) { runs++; return nil, nil }
	tree := &testTool{name: "tree", run: run, in: schemaOf(t, `{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}}}`)}
	twice := &testTool{name: "twice", run: run, in: schemaOf(t, `{"type":"object","allOf":[{"properties":{"a":{"$ref":"#"}}},{"properties":{"a":{"$ref":"#"}}}]}`)}
	tk := mustNew(t, WithTool(tree, twice))
	ctx := context.Background()
	deepTree := func(n int) string {
		return strings.Repeat(`{"children":[`, n) + `{}` + strings.Repeat(`]}`, n)
	}
	if _, err := tk.Call(ctx, "tree", jsonInput(`{"name":"root","children":[{"name":"leaf"}]}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Call(ctx, "tree", jsonInput(`{"name":5}`)); !errors.Is(err, ErrSchema) {
		t.Errorf("bad tree: %v", err)
	}
	if _, err := tk.Call(ctx, "tree", jsonInput(deepTree(100))); err != nil {
		t.Errorf("tree 100 deep: %v", err)
	}
	_, err := tk.Call(ctx, "tree", jsonInput(deepTree(3000)))
	if !errors.Is(err, ErrBadParameter) || !strings.Contains(err.Error(), "nests more than") || !strings.Contains(err.Error(), `"tree"`) {
		t.Errorf("tree 3000 deep: %v", err)
	}
	if _, err := tk.Call(ctx, "twice", jsonInput(`{"a":{"a":{}}}`)); err != nil {
		t.Errorf("twice, shallow: %v", err)
	}
	// 2^40 checks without the bound.
	deep := strings.Repeat(`{"a":`, 40) + `{}` + strings.Repeat(`}`, 40)
	if _, err := tk.Call(ctx, "twice", jsonInput(deep)); !errors.Is(err, ErrBadParameter) || !strings.Contains(err.Error(), "costs more than") {
		t.Errorf("twice, deep: %v", err)
	}
	if runs != 3 {
		t.Errorf("the tools ran %d times, want 3 (the accepted inputs only)", runs)
	}
}

// The output of a tool is bounded the same way against a recursive output
// schema.
func TestRecursiveOutputSchema(t *testing.T) {
	out := strings.Repeat(`{"next":`, 1000) + `{}` + strings.Repeat(`}`, 1000)
	tl := &testTool{
		name: "deep_output",
		out:  schemaOf(t, `{"type":"object","properties":{"next":{"$ref":"#"}}}`),
		run:  func(context.Context, json.RawMessage) (any, error) { return json.RawMessage(out), nil },
	}
	tk := mustNew(t, WithTool(tl))
	if _, err := tk.Call(context.Background(), "deep_output"); !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "nests more than") {
		t.Errorf("Call: %v", err)
	}
}

// A builtin prompt whose input schema has a $ref cycle is refused.
func TestHostilePromptSchema(t *testing.T) {
	p := &schemaPrompt{testPrompt: testPrompt{name: "cyclic"}, in: schemaOf(t, `{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"not":{"$ref":"#/$defs/a"}}}}`)}
	if err := mustNew(t).AddPrompt(p); !errors.Is(err, ErrBadParameter) || !strings.Contains(err.Error(), "$ref cycle") || !strings.Contains(err.Error(), `"cyclic"`) {
		t.Errorf("AddPrompt: %v", err)
	}
}

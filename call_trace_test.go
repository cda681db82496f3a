package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"go.opentelemetry.io/otel/codes"

	"github.com/llmkit/toolkit/internal/testing/oteltest"
	"github.com/llmkit/toolkit/resource"
)

// TestCallTracingCoversFailures checks that every call that reaches the
// pipeline gets a span, and that a failure at any step, before or after
// Run, gives the span an error status and a recorded error.
func TestCallTracingCoversFailures(t *testing.T) {
	errPrompt := errors.New("model unavailable")
	needsX := &testTool{name: "needs_x", in: objSchema(map[string]*jsonschema.Schema{"x": {Type: "string"}}, "x")}
	badSchema := &testTool{name: "bad_schema", inErr: errors.New("cannot build schema")}
	notObject := &testTool{name: "not_object", in: &jsonschema.Schema{Type: "string"}}
	fails := &testTool{name: "fails", run: func(context.Context, json.RawMessage) (any, error) { return nil, errToolOwn }}
	nilRes := returning("nil_res", (*testResource)(nil))
	badOut := returning("bad_out", "not json")
	badOut.out = &jsonschema.Schema{Type: "object"}
	leaf := newTool("leaf")
	var tk *Toolkit
	nested := &testTool{name: "nested", run: func(ctx context.Context, _ json.RawMessage) (any, error) {
		return tk.Call(ctx, "leaf")
	}}
	d := newDelegate()
	d.call = func(context.Context, Prompt, ...Resource) (Resource, error) { return nil, errPrompt }

	rec := oteltest.NewTracerProvider()
	tk = mustNew(t, WithTracer(rec.Tracer("test")), WithMaxCallDepth(1), WithDelegate(d),
		WithTool(needsX, fails, nilRes, badOut, leaf, nested),
		WithPrompt(&testPrompt{name: "ask"}))
	// A toolkit without a delegate, for the prompt it cannot run.
	rec2 := oteltest.NewTracerProvider()
	noDelegate := mustNew(t, WithTracer(rec2.Tracer("test")), WithPrompt(&testPrompt{name: "orphan"}))

	tests := []struct {
		name string
		tk   *Toolkit
		rec  *oteltest.TracerProvider
		item any // a key, or a tool the toolkit does not hold
		in   []Resource
		span string // the span that must fail ("" for the item's name)
		want error
	}{
		{name: "bad input", item: "needs_x", in: []Resource{resource.Must("in", json.RawMessage(`{}`))}, want: ErrSchema},
		{name: "input not JSON", item: "needs_x", in: []Resource{resource.Must("in", "not json")}, want: ErrBadParameter},
		{name: "schema does not resolve", item: badSchema, span: "bad_schema", want: ErrSchema},
		{name: "schema not an object", item: notObject, span: "not_object", want: ErrSchema},
		{name: "depth exceeded", item: "nested", span: "leaf", want: ErrDepthExceeded},
		{name: "run fails", item: "fails", want: ErrToolFailed},
		{name: "nil resource output", item: "nil_res", want: ErrToolFailed},
		{name: "bad output", item: "bad_out", want: ErrSchema},
		{name: "prompt fails", item: "ask", want: errPrompt},
		{name: "prompt without delegate", tk: noDelegate, rec: rec2, item: "orphan", want: ErrBadParameter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk, rec := tk, rec
			if tt.tk != nil {
				tk, rec = tt.tk, tt.rec
			}
			before := len(rec.Spans())
			_, err := tk.Call(t.Context(), tt.item, tt.in...)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Call(%v) = %v, want %v", tt.item, err, tt.want)
			}
			name := tt.span
			if name == "" {
				name = tt.item.(string)
			}
			var found bool
			for _, s := range rec.Spans()[before:] {
				if s.Name != name || !s.Ended {
					continue
				}
				found = true
				if s.Status.Code != codes.Error || !strings.Contains(s.Status.Description, name) {
					t.Errorf("span %q status = %v %q, want an error naming it", name, s.Status.Code, s.Status.Description)
				}
				if len(s.Events) == 0 || s.Events[0].Name != "exception" {
					t.Errorf("span %q recorded no error", name)
				}
			}
			if !found {
				t.Fatalf("no ended span %q among %d spans", name, len(rec.Spans())-before)
			}
		})
	}
}

// TestCallTracingPromptSuccess checks that a prompt call that succeeds has
// a span without an error status, with the prompt's namespace.
func TestCallTracingPromptSuccess(t *testing.T) {
	d := newDelegate()
	d.call = func(context.Context, Prompt, ...Resource) (Resource, error) { return resource.Must("out", "done"), nil }
	rec := oteltest.NewTracerProvider()
	tk := mustNew(t, WithTracer(rec.Tracer("test")), WithDelegate(d), WithPrompt(&testPrompt{name: "ask"}))
	if _, err := tk.Call(t.Context(), "ask"); err != nil {
		t.Fatal(err)
	}
	spans := rec.Spans()
	if len(spans) != 1 || !spans[0].Ended || spans[0].Name != "ask" || spans[0].Status.Code == codes.Error {
		t.Fatalf("spans = %+v", spans)
	}
	attrs := map[string]string{}
	for _, a := range spans[0].Attributes {
		attrs[string(a.Key)] = a.Value.AsString()
	}
	if attrs["toolkit.namespace"] != "builtin" || attrs["toolkit.prompt"] != "ask" {
		t.Fatalf("attributes %v", attrs)
	}
}

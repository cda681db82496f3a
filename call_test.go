package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmkit/toolkit/internal/testing/oteltest"
	"github.com/llmkit/toolkit/resource"
)

func returning(name string, v any) *testTool {
	return &testTool{name: name, run: func(context.Context, json.RawMessage) (any, error) { return v, nil }}
}

func TestCallWrapsOutput(t *testing.T) {
	custom := &testResource{uri: "file:///custom", name: "custom", data: "as is"}
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	tests := []struct {
		name     string
		out      any
		nilRes   bool
		wantType string
		wantData string
		same     Resource
	}{
		{name: "nil", out: nil, nilRes: true},
		{name: "string", out: "hello", wantType: "text/plain", wantData: "hello"},
		{name: "raw", out: json.RawMessage(`{"a":1}`), wantType: "application/json", wantData: `{"a":1}`},
		{name: "value", out: map[string]int{"b": 2}, wantType: "application/json", wantData: `{"b":2}`},
		{name: "bytes", out: png, wantData: string(png)},
		{name: "resource", out: custom, same: custom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk := mustNew(t, WithTool(returning("t", tt.out)))
			res, err := tk.Call(t.Context(), "t")
			if err != nil {
				t.Fatal(err)
			}
			if tt.nilRes {
				if res != nil {
					t.Fatalf("got %v, want no output", res)
				}
				return
			}
			if tt.same != nil && res != tt.same {
				t.Fatal("a returned Resource was not passed through")
			}
			if tt.wantType != "" && !strings.HasPrefix(res.Type(), tt.wantType) {
				t.Fatalf("type = %q, want %q", res.Type(), tt.wantType)
			}
			if b, _ := res.Read(t.Context()); tt.wantData != "" && string(b) != tt.wantData {
				t.Fatalf("data = %q, want %q", b, tt.wantData)
			}
		})
	}
}

func TestCallOutputOfUnmarshallableValue(t *testing.T) {
	tk := mustNew(t, WithTool(returning("t", make(chan int))))
	if _, err := tk.Call(t.Context(), "t"); !errors.Is(err, ErrToolFailed) {
		t.Fatalf("err = %v, want ErrToolFailed", err)
	}
}

func TestCallValidatesInput(t *testing.T) {
	tl := &testTool{name: "t", in: objSchema(map[string]*jsonschema.Schema{"n": {Type: "integer"}}, "n")}
	tk := mustNew(t, WithTool(tl))
	ctx := t.Context()
	tests := []struct {
		input string
		want  error
	}{
		{`{"n": 1}`, nil},
		{`{"n": "x"}`, ErrSchema},
		{`{}`, ErrSchema},
		{`[1]`, ErrSchema},
		{`{"n": 1`, ErrBadParameter},
		{`not json`, ErrBadParameter},
	}
	for _, tt := range tests {
		_, err := tk.Call(ctx, "t", resource.Must("input", tt.input))
		if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("input %s: err = %v, want %v", tt.input, err, tt.want)
		}
	}
	if tl.called != 0 {
		t.Fatal("counter misuse")
	}
}

func TestCallValidatesOutput(t *testing.T) {
	out := objSchema(map[string]*jsonschema.Schema{"ok": {Type: "boolean"}}, "ok")
	tests := []struct {
		name string
		v    any
		want error
	}{
		{"valid", map[string]bool{"ok": true}, nil},
		{"invalid", map[string]string{"ok": "yes"}, ErrSchema},
		{"text", "ok", ErrSchema},
		{"none", nil, ErrSchema},
	}
	for _, tt := range tests {
		tl := returning("t", tt.v)
		tl.out = out
		tk := mustNew(t, WithTool(tl))
		if _, err := tk.Call(t.Context(), "t"); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
}

var errToolOwn = errors.New("disk full")

func TestCallToolFailures(t *testing.T) {
	failing := &testTool{name: "fail", run: func(context.Context, json.RawMessage) (any, error) { return nil, errToolOwn }}
	panicking := &testTool{name: "boom", run: func(context.Context, json.RawMessage) (any, error) { panic("kaboom") }}
	tk := mustNew(t, WithTool(failing, panicking))
	_, err := tk.Call(t.Context(), "fail")
	if !errors.Is(err, ErrToolFailed) || !errors.Is(err, errToolOwn) || !strings.Contains(err.Error(), `"fail"`) {
		t.Fatalf("failing tool: %v", err)
	}
	_, err = tk.Call(t.Context(), "boom")
	if !errors.Is(err, ErrToolFailed) || !strings.Contains(err.Error(), "kaboom") {
		t.Fatalf("panicking tool: %v", err)
	}
}

func TestCallResolvesItems(t *testing.T) {
	tk, _ := fixture(t)
	ctx := t.Context()
	if _, err := tk.Call(ctx, "nothing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing key: %v", err)
	}
	if _, err := tk.Call(ctx, nil); !errors.Is(err, ErrBadParameter) {
		t.Errorf("nil: %v", err)
	}
	if _, err := tk.Call(ctx, 42); !errors.Is(err, ErrBadParameter) {
		t.Errorf("int: %v", err)
	}
	if _, err := tk.Call(ctx, "file:///builtin"); !errors.Is(err, ErrBadParameter) {
		t.Errorf("resource: %v", err)
	}
	it, _ := tk.LookupItem(ctx, "two.shared")
	for _, item := range []any{it, it.Value, "two.shared"} {
		res, err := tk.Call(ctx, item, resource.Must("in", json.RawMessage(`{"x":1}`)))
		if err != nil {
			t.Fatalf("Call(%T): %v", item, err)
		}
		if b, _ := res.Read(ctx); string(b) != `{"x":1}` {
			t.Fatalf("Call(%T) = %s", item, b)
		}
	}
	// An unregistered tool can be called too.
	if _, err := tk.Call(ctx, newTool("loose")); err != nil {
		t.Fatal(err)
	}
}

func TestCallPassesResourcesInContext(t *testing.T) {
	var seen []Resource
	tl := &testTool{name: "t", run: func(ctx context.Context, in json.RawMessage) (any, error) {
		seen = ResourcesFromContext(ctx)
		if CallDepth(ctx) != 1 {
			t.Errorf("depth = %d", CallDepth(ctx))
		}
		return nil, nil
	}}
	tk := mustNew(t, WithTool(tl))
	in := resource.Must("in", json.RawMessage(`{}`))
	extra := resource.Must("extra", "attachment")
	if _, err := tk.Call(t.Context(), "t", in, extra); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0] != in || seen[1] != extra {
		t.Fatalf("tool saw resources %v", seen)
	}
	if ResourcesFromContext(t.Context()) != nil || CallDepth(t.Context()) != 0 {
		t.Fatal("resources or depth outside a call")
	}
}

func TestCallDepthLimit(t *testing.T) {
	var tk *Toolkit
	calls := 0
	rec := &testTool{name: "rec", run: func(ctx context.Context, in json.RawMessage) (any, error) {
		calls++
		return tk.Call(ctx, "rec")
	}}
	tk = mustNew(t, WithTool(rec), WithMaxCallDepth(5))
	_, err := tk.Call(t.Context(), "rec")
	if !errors.Is(err, ErrDepthExceeded) {
		t.Fatalf("err = %v, want ErrDepthExceeded", err)
	}
	if calls != 5 {
		t.Fatalf("the tool ran %d times, want 5", calls)
	}
}

func TestCallPromptCycleIsStopped(t *testing.T) {
	d := newDelegate()
	var tk *Toolkit
	d.call = func(ctx context.Context, p Prompt, res ...Resource) (Resource, error) {
		return tk.Call(ctx, "ask") // the prompt runs a tool...
	}
	ask := &testTool{name: "ask", run: func(ctx context.Context, in json.RawMessage) (any, error) {
		return tk.Call(ctx, "plan") // ...which runs the prompt again
	}}
	tk = mustNew(t, WithDelegate(d), WithTool(ask), WithPrompt(&testPrompt{name: "plan"}))
	if _, err := tk.Call(t.Context(), "plan"); !errors.Is(err, ErrDepthExceeded) {
		t.Fatalf("err = %v, want ErrDepthExceeded", err)
	}
}

func TestCallPrompt(t *testing.T) {
	tk := mustNew(t, WithPrompt(&testPrompt{name: "summarize"}))
	if _, err := tk.Call(t.Context(), "summarize"); !errors.Is(err, ErrBadParameter) {
		t.Fatalf("no delegate: %v", err)
	}
	d := newDelegate()
	var got []Resource
	var gotName string
	d.call = func(ctx context.Context, p Prompt, res ...Resource) (Resource, error) {
		gotName, got = p.Name(), res
		return resource.Text("answer", "short")
	}
	tk = mustNew(t, WithDelegate(d), WithPrompt(&testPrompt{name: "summarize"}))
	in := resource.Must("input", "The quick brown fox")
	res, err := tk.Call(t.Context(), "summarize", in)
	if err != nil {
		t.Fatal(err)
	}
	if gotName != "summarize" || len(got) != 1 || got[0] != in {
		t.Fatalf("delegate got %q %v", gotName, got)
	}
	if b, _ := res.Read(t.Context()); string(b) != "short" {
		t.Fatalf("result %q", b)
	}
}

func TestCallTracing(t *testing.T) {
	rec := oteltest.NewTracerProvider()
	var inner trace.SpanContext
	ok := &testTool{name: "ok", run: func(ctx context.Context, _ json.RawMessage) (any, error) {
		inner = trace.SpanFromContext(ctx).SpanContext()
		return "fine", nil
	}}
	bad := &testTool{name: "bad", run: func(context.Context, json.RawMessage) (any, error) { return nil, errToolOwn }}
	tk := mustNew(t, WithTracer(rec.Tracer("test")), WithTool(ok, bad))
	if _, err := tk.Call(t.Context(), "ok"); err != nil {
		t.Fatal(err)
	}
	_, _ = tk.Call(t.Context(), "bad")
	spans := rec.Spans()
	if len(spans) != 2 || !spans[0].Ended || !spans[1].Ended {
		t.Fatalf("%d spans, want 2 ended: %+v", len(spans), spans)
	}
	if spans[0].Name != "ok" || spans[0].SpanContext.SpanID() != inner.SpanID() {
		t.Fatal("the tool did not run in its span")
	}
	attrs := map[string]string{}
	for _, a := range spans[0].Attributes {
		attrs[string(a.Key)] = a.Value.AsString()
	}
	if attrs["toolkit.namespace"] != "builtin" || attrs["toolkit.tool"] != "ok" {
		t.Fatalf("attributes %v", attrs)
	}
	if spans[1].Status.Code != codes.Error {
		t.Fatal("a failing tool's span is not marked as an error")
	}
}

// panicResource is a Resource whose methods panic.
type panicResource struct{ testResource }

func (*panicResource) Type() string { panic("Type exploded") }

// panicMarshaler panics when marshalled as JSON.
type panicMarshaler struct{}

func (panicMarshaler) MarshalJSON() ([]byte, error) { panic("MarshalJSON exploded") }

// TestCallBadOutputValues checks that output a tool cannot hand over (a
// nil pointer posing as a Resource, a Resource or value whose methods
// panic) is an error wrapping ErrToolFailed that names the tool, never a
// panic out of Call.
func TestCallBadOutputValues(t *testing.T) {
	objOut := &jsonschema.Schema{Type: "object"}
	tests := []struct {
		name   string
		out    any
		schema *jsonschema.Schema
		want   string
	}{
		{name: "nil resource", out: (*testResource)(nil), want: "nil *toolkit.testResource"},
		{name: "nil resource with output schema", out: (*testResource)(nil), schema: objOut, want: "nil *toolkit.testResource"},
		{name: "panicking resource with output schema", out: &panicResource{}, schema: objOut, want: "Type exploded"},
		{name: "panicking MarshalJSON", out: panicMarshaler{}, want: "MarshalJSON exploded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := returning("out_tool", tt.out)
			tl.out = tt.schema
			tk := mustNew(t, WithTool(tl))
			res, err := tk.Call(t.Context(), "out_tool")
			if !errors.Is(err, ErrToolFailed) || !strings.Contains(err.Error(), `"out_tool"`) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, %v; want an ErrToolFailed naming the tool and %q", res, err, tt.want)
			}
			if res != nil {
				t.Fatalf("got output %v with the error", res)
			}
		})
	}
}

package oteltest

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	_ trace.TracerProvider = (*TracerProvider)(nil)
	_ trace.Span           = (*span)(nil)
)

func TestSpansRecorded(t *testing.T) {
	tp := NewTracerProvider()
	tr := tp.Tracer("lib")
	ctx, root := tr.Start(context.Background(), "root", trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("a", "1"), attribute.String("b", "2")))
	if trace.SpanFromContext(ctx) != root || root.TracerProvider() != tp || !root.IsRecording() {
		t.Fatal("the span is not in the context, or does not say its provider, or is not recording")
	}
	root.SetAttributes(attribute.String("a", "one"), attribute.Int("c", 3), attribute.KeyValue{})
	root.AddEvent("hello", trace.WithAttributes(attribute.Bool("x", true)))
	root.RecordError(nil)
	root.RecordError(errors.New("broken"))
	root.SetStatus(codes.Error, "it broke")
	root.SetName("renamed")
	_, child := tr.Start(ctx, "child")
	_, orphan := tr.Start(ctx, "orphan", trace.WithNewRoot())
	child.End()
	root.End()
	root.SetAttributes(attribute.String("late", "x")) // after End: ignored
	root.SetStatus(codes.Ok, "")
	if root.IsRecording() || !orphan.IsRecording() {
		t.Error("an ended span is still recording, or one not ended is not")
	}

	spans := tp.Spans()
	if len(spans) != 3 || spans[0].Name != "renamed" || spans[1].Name != "child" || spans[2].Name != "orphan" {
		t.Fatalf("spans %+v, want renamed, child and orphan in the order they started", spans)
	}
	r, c, o := spans[0], spans[1], spans[2]
	if r.Tracer != "lib" || r.Kind != trace.SpanKindServer || !r.Ended || o.Ended {
		t.Errorf("root %+v, orphan ended %v", r, o.Ended)
	}
	want := []attribute.KeyValue{attribute.String("a", "one"), attribute.String("b", "2"), attribute.Int("c", 3)}
	if !equalAttrs(r.Attributes, want) {
		t.Errorf("attributes %v, want %v", r.Attributes, want)
	}
	if v, ok := r.Attribute("c"); !ok || v.AsInt64() != 3 {
		t.Errorf("Attribute(c) = %v, %v", v, ok)
	}
	if _, ok := r.Attribute("late"); ok {
		t.Error("an attribute set after End was recorded")
	}
	if len(r.Events) != 2 || r.Events[0].Name != "hello" || r.Events[1].Name != "exception" ||
		!equalAttrs(r.Events[1].Attributes, []attribute.KeyValue{
			attribute.String("exception.type", "*errors.errorString"), attribute.String("exception.message", "broken")}) {
		t.Errorf("events %+v", r.Events)
	}
	if r.Status != (Status{Code: codes.Error, Description: "it broke"}) {
		t.Errorf("status %+v, want the error it had when it ended", r.Status)
	}
	if !r.SpanContext.IsValid() || r.Parent.IsValid() {
		t.Errorf("root %v with parent %v", r.SpanContext, r.Parent)
	}
	if !c.Parent.Equal(r.SpanContext) || c.SpanContext.TraceID() != r.SpanContext.TraceID() || c.SpanContext.SpanID() == r.SpanContext.SpanID() {
		t.Errorf("child %v with parent %v, want a new span in %v", c.SpanContext, c.Parent, r.SpanContext)
	}
	if o.Parent.IsValid() || o.SpanContext.TraceID() == r.SpanContext.TraceID() {
		t.Errorf("a new root %v has parent %v", o.SpanContext, o.Parent)
	}

	// A copy is a copy.
	spans[0].Attributes[0] = attribute.String("a", "changed")
	spans[0].Events[1].Attributes[0] = attribute.String("exception.type", "changed")
	if again := tp.Spans()[0]; again.Attributes[0].Value.AsString() != "one" || again.Events[1].Attributes[0].Value.AsString() != "*errors.errorString" {
		t.Error("changing what Spans returned changed the record")
	}
}

func TestSpanRemoteParent(t *testing.T) {
	tp := NewTracerProvider()
	remote := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)
	_, s := tp.Tracer("t").Start(ctx, "served")
	s.End()
	got := tp.Spans()[0]
	if !got.Parent.Equal(remote) || got.SpanContext.TraceID() != remote.TraceID() || got.SpanContext.IsRemote() || !got.SpanContext.IsSampled() {
		t.Fatalf("span %v with parent %v, want a sampled local child of %v", got.SpanContext, got.Parent, remote)
	}
}

func TestSpanStatusRules(t *testing.T) {
	tp := NewTracerProvider()
	tr := tp.Tracer("t")
	for _, c := range []struct {
		name  string
		set   []Status
		final Status
	}{
		{"unset changes nothing", []Status{{codes.Error, "e"}, {codes.Unset, "u"}}, Status{codes.Error, "e"}},
		{"ok is final", []Status{{codes.Ok, "ignored"}, {codes.Error, "e"}}, Status{codes.Ok, ""}},
		{"error after error", []Status{{codes.Error, "first"}, {codes.Error, "second"}}, Status{codes.Error, "second"}},
		{"ok after error", []Status{{codes.Error, "e"}, {codes.Ok, ""}}, Status{codes.Ok, ""}},
	} {
		_, s := tr.Start(context.Background(), c.name)
		for _, st := range c.set {
			s.SetStatus(st.Code, st.Description)
		}
		s.End()
		spans := tp.Spans()
		if got := spans[len(spans)-1].Status; got != c.final {
			t.Errorf("%s: status %+v, want %+v", c.name, got, c.final)
		}
	}
}

// equalAttrs reports whether a and b hold the same attributes in the same
// order.
func equalAttrs(a, b []attribute.KeyValue) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

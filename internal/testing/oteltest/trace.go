package oteltest

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// TracerProvider is a [trace.TracerProvider] that records every span of
// its tracers in memory. Every span is recording and sampled. The zero
// value is not usable: make one with [NewTracerProvider].
type TracerProvider struct {
	// The no-op provider answers methods added to the interface later.
	noop.TracerProvider

	mu    sync.Mutex
	spans []*span // in the order they started
}

// NewTracerProvider returns a provider that has recorded nothing yet.
func NewTracerProvider() *TracerProvider { return &TracerProvider{} }

// Tracer returns a tracer whose spans p records. Its name is kept as each
// span's Tracer.
func (p *TracerProvider) Tracer(name string, _ ...trace.TracerOption) trace.Tracer {
	return &tracer{provider: p, name: name}
}

// Spans returns a copy of every span started so far, ended or not, in the
// order they started.
func (p *TracerProvider) Spans() []Span {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Span, len(p.spans))
	for i, s := range p.spans {
		out[i] = s.data.clone()
	}
	return out
}

// Span is what a [TracerProvider] recorded of one span.
type Span struct {
	Name        string
	Tracer      string // the name given to TracerProvider.Tracer
	Kind        trace.SpanKind
	SpanContext trace.SpanContext
	// Parent is the span context the span was started in (from the
	// context given to Start, local or remote), the zero value for a root.
	Parent     trace.SpanContext
	Attributes []attribute.KeyValue // in the order first set; a key set again keeps its last value
	Events     []Event
	Links      []trace.Link
	Status     Status
	Ended      bool
}

// Attribute returns the value of the span's attribute key, and whether it
// has one.
func (s Span) Attribute(key attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func (s Span) clone() Span {
	s.Attributes = slices.Clone(s.Attributes)
	s.Events = slices.Clone(s.Events)
	for i := range s.Events {
		s.Events[i].Attributes = slices.Clone(s.Events[i].Attributes)
	}
	s.Links = slices.Clone(s.Links)
	return s
}

// Event is an event of a span. RecordError records an event named
// "exception" with the attributes "exception.type" and
// "exception.message", as the OpenTelemetry SDK does.
type Event struct {
	Name       string
	Attributes []attribute.KeyValue
}

// Status is the status of a span. As in the OpenTelemetry SDK, an Ok
// status is final, an Unset one changes nothing, and only an Error status
// keeps its description.
type Status struct {
	Code        codes.Code
	Description string
}

// tracer starts the spans of one named tracer of a TracerProvider.
type tracer struct {
	noop.Tracer
	provider *TracerProvider
	name     string
}

// Start starts a span named name, a child of the span context in ctx
// unless the options ask for a new root, and returns ctx with it.
func (t *tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	cfg := trace.NewSpanStartConfig(opts...)
	var parent trace.SpanContext
	if !cfg.NewRoot() {
		parent = trace.SpanContextFromContext(ctx)
	}
	sc := trace.SpanContextConfig{SpanID: newSpanID(), TraceFlags: trace.FlagsSampled}
	if parent.IsValid() {
		sc.TraceID, sc.TraceState = parent.TraceID(), parent.TraceState()
	} else {
		parent = trace.SpanContext{}
		sc.TraceID = newTraceID()
	}
	s := &span{provider: t.provider, data: Span{
		Name:        name,
		Tracer:      t.name,
		Kind:        cfg.SpanKind(),
		SpanContext: trace.NewSpanContext(sc),
		Parent:      parent,
		Links:       slices.Clone(cfg.Links()),
	}}
	s.data.Attributes = setAttributes(nil, cfg.Attributes())
	t.provider.mu.Lock()
	t.provider.spans = append(t.provider.spans, s)
	t.provider.mu.Unlock()
	return trace.ContextWithSpan(ctx, s), s
}

// newTraceID returns a random trace ID, never the invalid zero one.
func newTraceID() (id trace.TraceID) {
	for !id.IsValid() {
		binary.BigEndian.PutUint64(id[:8], rand.Uint64())
		binary.BigEndian.PutUint64(id[8:], rand.Uint64())
	}
	return id
}

// newSpanID returns a random span ID, never the invalid zero one.
func newSpanID() (id trace.SpanID) {
	for !id.IsValid() {
		binary.BigEndian.PutUint64(id[:], rand.Uint64())
	}
	return id
}

// setAttributes returns attrs with kvs set: a key already there takes the
// new value in its place, a new key is appended, and an invalid attribute
// (an empty key, a value of no type) is dropped, as the SDK drops it.
func setAttributes(attrs, kvs []attribute.KeyValue) []attribute.KeyValue {
	for _, kv := range kvs {
		if !kv.Valid() {
			continue
		}
		if i := slices.IndexFunc(attrs, func(a attribute.KeyValue) bool { return a.Key == kv.Key }); i >= 0 {
			attrs[i] = kv
			continue
		}
		attrs = append(attrs, kv)
	}
	return attrs
}

// span is a live span. Its data is guarded by its provider's mutex; after
// End it changes no more.
type span struct {
	noop.Span
	provider *TracerProvider
	data     Span
}

// update applies f to the span's data unless the span has ended.
func (s *span) update(f func(*Span)) {
	s.provider.mu.Lock()
	defer s.provider.mu.Unlock()
	if !s.data.Ended {
		f(&s.data)
	}
}

// End marks the span as ended.
func (s *span) End(...trace.SpanEndOption) { s.update(func(d *Span) { d.Ended = true }) }

// AddEvent records an event.
func (s *span) AddEvent(name string, opts ...trace.EventOption) {
	cfg := trace.NewEventConfig(opts...)
	s.update(func(d *Span) {
		d.Events = append(d.Events, Event{Name: name, Attributes: slices.Clone(cfg.Attributes())})
	})
}

// AddLink records a link.
func (s *span) AddLink(l trace.Link) { s.update(func(d *Span) { d.Links = append(d.Links, l) }) }

// IsRecording reports whether the span has not ended.
func (s *span) IsRecording() bool {
	s.provider.mu.Lock()
	defer s.provider.mu.Unlock()
	return !s.data.Ended
}

// RecordError records err, unless nil, as an "exception" event.
func (s *span) RecordError(err error, opts ...trace.EventOption) {
	if err == nil {
		return
	}
	cfg := trace.NewEventConfig(opts...)
	attrs := append([]attribute.KeyValue{
		attribute.String("exception.type", reflect.TypeOf(err).String()),
		attribute.String("exception.message", err.Error()),
	}, cfg.Attributes()...)
	s.update(func(d *Span) { d.Events = append(d.Events, Event{Name: "exception", Attributes: attrs}) })
}

// SpanContext returns the span's identity.
func (s *span) SpanContext() trace.SpanContext { return s.data.SpanContext } // set once, at Start

// SetStatus sets the span's status (see Status).
func (s *span) SetStatus(code codes.Code, description string) {
	s.update(func(d *Span) {
		if code == codes.Unset || d.Status.Code == codes.Ok {
			return
		}
		if code != codes.Error {
			description = ""
		}
		d.Status = Status{Code: code, Description: description}
	})
}

// SetName renames the span.
func (s *span) SetName(name string) { s.update(func(d *Span) { d.Name = name }) }

// SetAttributes sets attributes of the span.
func (s *span) SetAttributes(kvs ...attribute.KeyValue) {
	s.update(func(d *Span) { d.Attributes = setAttributes(d.Attributes, kvs) })
}

// TracerProvider returns the provider that records the span.
func (s *span) TracerProvider() trace.TracerProvider { return s.provider }

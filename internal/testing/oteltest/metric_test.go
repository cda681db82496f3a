package oteltest

import (
	"context"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

var _ metric.MeterProvider = (*MeterProvider)(nil)

func TestMetricAttributeSetIdentity(t *testing.T) {
	mp := NewMeterProvider()
	m := mp.Meter("lib")
	c, err := m.Int64Counter("calls", metric.WithUnit("{call}"), metric.WithDescription("Calls."))
	if err != nil {
		t.Fatal(err)
	}
	a, b := attribute.String("a", "1"), attribute.String("b", "2")
	ctx := context.Background()
	c.Add(ctx, 1, metric.WithAttributes(a, b))
	c.Add(ctx, 2, metric.WithAttributes(b, a))
	c.Add(ctx, 4, metric.WithAttributeSet(attribute.NewSet(a, b)))
	c.Add(ctx, 8, metric.WithAttributes(a))
	if !c.Enabled(ctx) {
		t.Error("the counter says it records nothing")
	}
	if v, ok := mp.Sum("calls", b, a); !ok || v != 7 {
		t.Errorf("Sum(b, a) = %d, %v, want 7 whatever the order the attributes came in", v, ok)
	}
	if v, ok := mp.Sum("calls", a); !ok || v != 8 {
		t.Errorf("Sum(a) = %d, %v, want 8", v, ok)
	}
	if _, ok := mp.Sum("calls"); ok {
		t.Error("Sum without attributes found a point never recorded")
	}
	if _, ok := mp.Sum("calls", a, b, attribute.String("c", "3")); ok {
		t.Error("Sum with an extra attribute found a point")
	}
	pts := mp.Points("calls")
	if len(pts) != 2 || pts[0].Attributes.Len() != 1 || pts[0].Value != 8 || pts[1].Value != 7 {
		t.Errorf("points %+v, want a=1 (8) then a=1,b=2 (7)", pts)
	}
	if in, ok := mp.Instrument("calls"); !ok || in != (Instrument{Meter: "lib", Name: "calls", Kind: Counter, Unit: "{call}", Description: "Calls."}) {
		t.Errorf("Instrument = %+v, %v", in, ok)
	}
	if _, _, ok := mp.Histogram("calls", a, b); ok {
		t.Error("a counter read as a histogram")
	}
	if _, ok := mp.Gauge("calls", a, b); ok {
		t.Error("a counter read as a gauge")
	}
	if pts := mp.Points("nothing"); pts != nil {
		t.Errorf("points of an unknown instrument: %v", pts)
	}
}

func TestMetricUpDownCounterAndHistogram(t *testing.T) {
	mp := NewMeterProvider()
	m := mp.Meter("lib")
	ctx := context.Background()
	u, err := m.Int64UpDownCounter("active")
	if err != nil {
		t.Fatal(err)
	}
	h, err := m.Float64Histogram("duration", metric.WithExplicitBucketBoundaries(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	tool := attribute.String("tool", "x")
	u.Add(ctx, 1, metric.WithAttributes(tool))
	u.Add(ctx, -1, metric.WithAttributes(tool))
	h.Record(ctx, 0.5, metric.WithAttributes(tool))
	h.Record(ctx, 2.25, metric.WithAttributes(tool))
	if v, ok := mp.Sum("active", tool); !ok || v != 0 {
		t.Errorf("active = %d, %v, want a point at 0", v, ok)
	}
	if n, sum, ok := mp.Histogram("duration", tool); !ok || n != 2 || sum != 2.75 {
		t.Errorf("duration = %d values summing to %v (%v), want 2 summing to 2.75", n, sum, ok)
	}
	if _, _, ok := mp.Histogram("duration"); ok {
		t.Error("a histogram point without attributes")
	}
}

func TestMetricGaugeCallbacks(t *testing.T) {
	mp := NewMeterProvider()
	m := mp.Meter("lib")
	var runs int
	_, err := m.Int64ObservableGauge("status", metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
		runs++
		o.Observe(1, metric.WithAttributes(attribute.String("s", "up")))
		o.Observe(0, metric.WithAttributes(attribute.String("s", "down")))
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := m.Int64ObservableGauge("sessions")
	if err != nil {
		t.Fatal(err)
	}
	other, err := m.Int64ObservableGauge("other")
	if err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		n++
		o.ObserveInt64(sessions, n)
		o.ObserveInt64(other, 99) // not registered for it: dropped
		return nil
	}, sessions)
	if err != nil {
		t.Fatal(err)
	}
	if runs != 0 || n != 0 {
		t.Fatal("callbacks ran before any read")
	}
	if v, ok := mp.Gauge("status", attribute.String("s", "up")); !ok || v != 1 {
		t.Errorf("status up = %d, %v", v, ok)
	}
	if v, ok := mp.Gauge("status", attribute.String("s", "down")); !ok || v != 0 || runs != 2 {
		t.Errorf("status down = %d, %v after %d runs, want 0 after a run at each read", v, ok, runs)
	}
	if v, _ := mp.Gauge("sessions"); v != 1 {
		t.Errorf("sessions = %d, want 1", v)
	}
	if v, _ := mp.Gauge("sessions"); v != 2 {
		t.Errorf("sessions = %d, want 2: each read runs the callback", v)
	}
	if pts := mp.Points("other"); len(pts) != 0 {
		t.Errorf("a callback observed a gauge it was not registered for: %v", pts)
	}
	if err := reg.Unregister(); err != nil {
		t.Fatal(err)
	}
	if err := reg.Unregister(); err != nil {
		t.Errorf("unregistering again: %v", err)
	}
	if v, ok := mp.Gauge("sessions"); ok {
		t.Errorf("an unregistered callback still observes %d", v)
	}
	if _, ok := mp.Gauge("status", attribute.String("s", "up")); !ok {
		t.Error("unregistering one callback silenced another")
	}
	if _, err := m.RegisterCallback(nil, sessions); err == nil {
		t.Error("a nil callback was registered")
	}
	foreign, _ := NewMeterProvider().Meter("lib").Int64ObservableGauge("sessions")
	if _, err := m.RegisterCallback(func(context.Context, metric.Observer) error { return nil }, foreign); err == nil {
		t.Error("a callback was registered for another provider's gauge")
	}
}

// TestMetricGaugeCallbackMayRecord checks that a callback runs without the
// provider's lock: it may record with the same provider.
func TestMetricGaugeCallbackMayRecord(t *testing.T) {
	mp := NewMeterProvider()
	m := mp.Meter("lib")
	c, _ := m.Int64Counter("reads")
	if _, err := m.Int64ObservableGauge("g", metric.WithInt64Callback(func(ctx context.Context, o metric.Int64Observer) error {
		c.Add(ctx, 1)
		v, _ := mp.Sum("reads")
		o.Observe(v)
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	if v, ok := mp.Gauge("g"); !ok || v != 1 {
		t.Errorf("g = %d, %v, want 1", v, ok)
	}
}

func TestMetricInstrumentIdentity(t *testing.T) {
	mp := NewMeterProvider()
	lib, other := mp.Meter("lib"), mp.Meter("other")
	ctx := context.Background()
	c1, err1 := lib.Int64Counter("calls")
	c2, err2 := lib.Int64Counter("calls")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	c1.Add(ctx, 1)
	c2.Add(ctx, 2)
	if v, _ := mp.Sum("calls"); v != 3 {
		t.Errorf("calls = %d, want 3: a meter asking again gets the same instrument", v)
	}
	if _, err := lib.Int64UpDownCounter("calls"); err == nil || !strings.Contains(err.Error(), `"calls"`) {
		t.Errorf("the same name for another kind: %v", err)
	}
	if _, err := other.Int64Counter("calls"); err == nil || !strings.Contains(err.Error(), `"lib"`) {
		t.Errorf("the same name in another meter: %v", err)
	}
	for name, create := range map[string]func() error{
		"Int64Histogram":                 func() error { _, err := lib.Int64Histogram("x"); return err },
		"Int64Gauge":                     func() error { _, err := lib.Int64Gauge("x"); return err },
		"Int64ObservableCounter":         func() error { _, err := lib.Int64ObservableCounter("x"); return err },
		"Int64ObservableUpDownCounter":   func() error { _, err := lib.Int64ObservableUpDownCounter("x"); return err },
		"Float64Counter":                 func() error { _, err := lib.Float64Counter("x"); return err },
		"Float64UpDownCounter":           func() error { _, err := lib.Float64UpDownCounter("x"); return err },
		"Float64Gauge":                   func() error { _, err := lib.Float64Gauge("x"); return err },
		"Float64ObservableCounter":       func() error { _, err := lib.Float64ObservableCounter("x"); return err },
		"Float64ObservableUpDownCounter": func() error { _, err := lib.Float64ObservableUpDownCounter("x"); return err },
		"Float64ObservableGauge":         func() error { _, err := lib.Float64ObservableGauge("x"); return err },
	} {
		if err := create(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want an error naming the kind not recorded", name, err)
		}
	}
	if _, ok := mp.Instrument("x"); ok {
		t.Error("a refused instrument was recorded")
	}
}

// TestConcurrentRecording records spans and measurements from many
// goroutines while others read them; run with -race. Nothing is lost.
func TestConcurrentRecording(t *testing.T) {
	mp := NewMeterProvider()
	tp := NewTracerProvider()
	m := mp.Meter("lib")
	c, _ := m.Int64Counter("calls")
	u, _ := m.Int64UpDownCounter("active")
	h, _ := m.Float64Histogram("duration")
	g, _ := m.Int64ObservableGauge("g")
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		v, _ := mp.Sum("calls", attribute.Int("w", 0))
		o.ObserveInt64(g, v)
		return nil
	}, g)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()
	const workers, each = 8, 200
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				mp.Points("calls")
				mp.Gauge("g")
				mp.Histogram("duration", attribute.Int("w", 0))
				tp.Spans()
			}
		})
	}
	for w := range workers {
		wg.Go(func() {
			ctx := context.Background()
			attrs := metric.WithAttributes(attribute.Int("w", w%2))
			tr := tp.Tracer("t")
			for range each {
				ctx, s := tr.Start(ctx, "call")
				u.Add(ctx, 1, attrs)
				c.Add(ctx, 1, attrs)
				h.Record(ctx, 1, attrs)
				u.Add(ctx, -1, attrs)
				s.SetAttributes(attribute.Int("w", w))
				s.End()
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	for _, w := range []int{0, 1} {
		a := attribute.Int("w", w)
		if v, _ := mp.Sum("calls", a); v != workers/2*each {
			t.Errorf("calls w=%d: %d, want %d", w, v, workers/2*each)
		}
		if v, ok := mp.Sum("active", a); !ok || v != 0 {
			t.Errorf("active w=%d: %d (%v), want 0", w, v, ok)
		}
		if n, sum, _ := mp.Histogram("duration", a); n != workers/2*each || sum != workers/2*each {
			t.Errorf("duration w=%d: %d values summing to %v, want %d", w, n, sum, workers/2*each)
		}
	}
	if v, _ := mp.Gauge("g"); v != workers/2*each {
		t.Errorf("gauge %d, want %d", v, workers/2*each)
	}
	spans := tp.Spans()
	ids := map[trace.SpanID]bool{}
	for _, s := range spans {
		if !s.Ended {
			t.Fatalf("span %v not ended", s.SpanContext)
		}
		ids[s.SpanContext.SpanID()] = true
	}
	if len(spans) != workers*each || len(ids) != len(spans) {
		t.Errorf("%d spans with %d distinct IDs, want %d", len(spans), len(ids), workers*each)
	}
}

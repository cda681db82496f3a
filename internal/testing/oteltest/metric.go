package oteltest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// MeterProvider is a [metric.MeterProvider] that records in memory the
// measurements of the instruments of its meters. An instrument is known by
// its name alone: meters asking again for a name get the same instrument,
// and a name already used by another meter or for another kind is refused
// with an error. The zero value is not usable: make one with
// [NewMeterProvider].
type MeterProvider struct {
	// The no-op provider answers methods added to the interface later.
	noop.MeterProvider

	mu          sync.Mutex
	instruments map[string]*instrument
	callbacks   []*callback // in the order they were registered
}

// NewMeterProvider returns a provider that has recorded nothing yet.
func NewMeterProvider() *MeterProvider {
	return &MeterProvider{instruments: map[string]*instrument{}}
}

// Meter returns the meter named name.
func (p *MeterProvider) Meter(name string, _ ...metric.MeterOption) metric.Meter {
	return &meter{provider: p, name: name}
}

// Kind is a kind of instrument a [MeterProvider] records.
type Kind int

// The kinds of instrument a MeterProvider records.
const (
	Counter       Kind = iota + 1 // an int64 counter
	UpDownCounter                 // an int64 up-down counter
	Histogram                     // a float64 histogram
	Gauge                         // an int64 observable gauge
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case Counter:
		return "counter"
	case UpDownCounter:
		return "up-down counter"
	case Histogram:
		return "histogram"
	case Gauge:
		return "gauge"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Instrument describes an instrument made by a meter of a [MeterProvider].
type Instrument struct {
	Meter       string // the name given to MeterProvider.Meter
	Name        string
	Kind        Kind
	Unit        string
	Description string
}

// Point is the value of one series of an instrument, the measurements
// made with one set of attributes.
type Point struct {
	Attributes attribute.Set
	Value      int64   // counters and up-down counters: the sum; gauges: the last observation
	Count      uint64  // histograms: the number of values recorded
	Sum        float64 // histograms: the sum of the values recorded
}

// Instrument returns the description of the instrument named name, and
// whether there is one.
func (p *MeterProvider) Instrument(name string) (Instrument, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if in, ok := p.instruments[name]; ok {
		return in.desc, true
	}
	return Instrument{}, false
}

// Points returns the series of the instrument named name, ordered by their
// attributes' encoding. The series of a counter, up-down counter or
// histogram are every set of attributes it was ever given; those of a
// gauge are what its callbacks observe now, as Points runs the callbacks
// registered for it (their errors are ignored, what they observed is
// kept). An unknown name has none.
func (p *MeterProvider) Points(name string) []Point {
	p.mu.Lock()
	in := p.instruments[name]
	if in == nil {
		p.mu.Unlock()
		return nil
	}
	var pts []Point
	if in.desc.Kind == Gauge {
		cbs := slices.Clone(p.callbacks)
		p.mu.Unlock() // callbacks run unlocked: they may well record
		pts = collect(in, cbs)
	} else {
		for _, pt := range in.points {
			pts = append(pts, *pt)
		}
		p.mu.Unlock()
	}
	slices.SortFunc(pts, func(a, b Point) int {
		return cmp.Compare(a.Attributes.Encoded(attribute.DefaultEncoder()), b.Attributes.Encoded(attribute.DefaultEncoder()))
	})
	return pts
}

// point returns the point of the instrument named name with exactly the
// attributes attrs, in any order, if the instrument is of kind k1 or k2.
func (p *MeterProvider) point(name string, k1, k2 Kind, attrs []attribute.KeyValue) (Point, bool) {
	if in, ok := p.Instrument(name); !ok || (in.Kind != k1 && in.Kind != k2) {
		return Point{}, false
	}
	want := attribute.NewSet(attrs...)
	for _, pt := range p.Points(name) {
		if pt.Attributes.Equals(&want) {
			return pt, true
		}
	}
	return Point{}, false
}

// Sum returns the sum of the counter or up-down counter named name with
// exactly the attributes attrs (in any order), and whether it has one.
func (p *MeterProvider) Sum(name string, attrs ...attribute.KeyValue) (int64, bool) {
	pt, ok := p.point(name, Counter, UpDownCounter, attrs)
	return pt.Value, ok
}

// Histogram returns the number and the sum of the values recorded by the
// histogram named name with exactly the attributes attrs (in any order),
// and whether it recorded any.
func (p *MeterProvider) Histogram(name string, attrs ...attribute.KeyValue) (count uint64, sum float64, ok bool) {
	pt, ok := p.point(name, Histogram, Histogram, attrs)
	return pt.Count, pt.Sum, ok
}

// Gauge runs the callbacks of the gauge named name and returns what they
// observed with exactly the attributes attrs (in any order), and whether
// they observed it.
func (p *MeterProvider) Gauge(name string, attrs ...attribute.KeyValue) (int64, bool) {
	pt, ok := p.point(name, Gauge, Gauge, attrs)
	return pt.Value, ok
}

// instrument is the record of one instrument.
type instrument struct {
	provider *MeterProvider
	desc     Instrument
	points   map[attribute.Distinct]*Point // of a synchronous instrument; guarded by provider.mu
}

// measure applies f to the point of attrs, made on first use.
func (in *instrument) measure(attrs attribute.Set, f func(*Point)) {
	in.provider.mu.Lock()
	defer in.provider.mu.Unlock()
	pt := in.points[attrs.Equivalent()]
	if pt == nil {
		pt = &Point{Attributes: attrs}
		in.points[attrs.Equivalent()] = pt
	}
	f(pt)
}

// meter makes the instruments of one named meter of a MeterProvider.
type meter struct {
	noop.Meter
	provider *MeterProvider
	name     string
}

// instrument returns the instrument named name of kind k, made on first
// use; the name may not be in use by another meter or kind.
func (m *meter) instrument(name string, k Kind, unit, description string) (*instrument, error) {
	p := m.provider
	p.mu.Lock()
	defer p.mu.Unlock()
	if in, ok := p.instruments[name]; ok {
		if in.desc.Meter != m.name || in.desc.Kind != k {
			return nil, fmt.Errorf("oteltest: instrument %q is already a %s of meter %q", name, in.desc.Kind, in.desc.Meter)
		}
		return in, nil
	}
	in := &instrument{provider: p, desc: Instrument{Meter: m.name, Name: name, Kind: k, Unit: unit, Description: description},
		points: map[attribute.Distinct]*Point{}}
	p.instruments[name] = in
	return in, nil
}

// Int64Counter returns the counter named name.
func (m *meter) Int64Counter(name string, opts ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	cfg := metric.NewInt64CounterConfig(opts...)
	in, err := m.instrument(name, Counter, cfg.Unit(), cfg.Description())
	if err != nil {
		return noop.Int64Counter{}, err
	}
	return &int64Counter{in: in}, nil
}

// Int64UpDownCounter returns the up-down counter named name.
func (m *meter) Int64UpDownCounter(name string, opts ...metric.Int64UpDownCounterOption) (metric.Int64UpDownCounter, error) {
	cfg := metric.NewInt64UpDownCounterConfig(opts...)
	in, err := m.instrument(name, UpDownCounter, cfg.Unit(), cfg.Description())
	if err != nil {
		return noop.Int64UpDownCounter{}, err
	}
	return &int64UpDownCounter{in: in}, nil
}

// Float64Histogram returns the histogram named name. Its buckets are not
// kept: only the count and sum of its values.
func (m *meter) Float64Histogram(name string, opts ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	cfg := metric.NewFloat64HistogramConfig(opts...)
	in, err := m.instrument(name, Histogram, cfg.Unit(), cfg.Description())
	if err != nil {
		return noop.Float64Histogram{}, err
	}
	return &float64Histogram{in: in}, nil
}

// Int64ObservableGauge returns the gauge named name, registering the
// callbacks among opts for good.
func (m *meter) Int64ObservableGauge(name string, opts ...metric.Int64ObservableGaugeOption) (metric.Int64ObservableGauge, error) {
	cfg := metric.NewInt64ObservableGaugeConfig(opts...)
	in, err := m.instrument(name, Gauge, cfg.Unit(), cfg.Description())
	if err != nil {
		return noop.Int64ObservableGauge{}, err
	}
	g := &int64Gauge{in: in}
	for _, f := range cfg.Callbacks() {
		m.provider.register(&callback{observes: []*instrument{in}, run: func(ctx context.Context, o *observer) error {
			return f(ctx, int64Observer{o: o, g: g})
		}})
	}
	return g, nil
}

// RegisterCallback registers f to run when one of instruments, gauges of
// this provider, is read.
func (m *meter) RegisterCallback(f metric.Callback, instruments ...metric.Observable) (metric.Registration, error) {
	if f == nil {
		return noop.Registration{}, errors.New("oteltest: RegisterCallback: nil callback")
	}
	cb := &callback{run: func(ctx context.Context, o *observer) error { return f(ctx, o) }}
	for _, i := range instruments {
		g, ok := i.(*int64Gauge)
		if !ok || g.in.provider != m.provider {
			return noop.Registration{}, fmt.Errorf("oteltest: RegisterCallback: %T is not a gauge of this provider", i)
		}
		cb.observes = append(cb.observes, g.in)
	}
	m.provider.register(cb)
	return &registration{provider: m.provider, cb: cb}, nil
}

// errKind is the error of the kinds of instrument a MeterProvider does not
// record.
func errKind(kind, name string) error {
	return fmt.Errorf("oteltest: %s %q: this kind of instrument is not recorded", kind, name)
}

// Int64Histogram is refused: it is not recorded.
func (m *meter) Int64Histogram(name string, _ ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	return noop.Int64Histogram{}, errKind("Int64Histogram", name)
}

// Int64Gauge is refused: it is not recorded.
func (m *meter) Int64Gauge(name string, _ ...metric.Int64GaugeOption) (metric.Int64Gauge, error) {
	return noop.Int64Gauge{}, errKind("Int64Gauge", name)
}

// Int64ObservableCounter is refused: it is not recorded.
func (m *meter) Int64ObservableCounter(name string, _ ...metric.Int64ObservableCounterOption) (metric.Int64ObservableCounter, error) {
	return noop.Int64ObservableCounter{}, errKind("Int64ObservableCounter", name)
}

// Int64ObservableUpDownCounter is refused: it is not recorded.
func (m *meter) Int64ObservableUpDownCounter(name string, _ ...metric.Int64ObservableUpDownCounterOption) (metric.Int64ObservableUpDownCounter, error) {
	return noop.Int64ObservableUpDownCounter{}, errKind("Int64ObservableUpDownCounter", name)
}

// Float64Counter is refused: it is not recorded.
func (m *meter) Float64Counter(name string, _ ...metric.Float64CounterOption) (metric.Float64Counter, error) {
	return noop.Float64Counter{}, errKind("Float64Counter", name)
}

// Float64UpDownCounter is refused: it is not recorded.
func (m *meter) Float64UpDownCounter(name string, _ ...metric.Float64UpDownCounterOption) (metric.Float64UpDownCounter, error) {
	return noop.Float64UpDownCounter{}, errKind("Float64UpDownCounter", name)
}

// Float64Gauge is refused: it is not recorded.
func (m *meter) Float64Gauge(name string, _ ...metric.Float64GaugeOption) (metric.Float64Gauge, error) {
	return noop.Float64Gauge{}, errKind("Float64Gauge", name)
}

// Float64ObservableCounter is refused: it is not recorded.
func (m *meter) Float64ObservableCounter(name string, _ ...metric.Float64ObservableCounterOption) (metric.Float64ObservableCounter, error) {
	return noop.Float64ObservableCounter{}, errKind("Float64ObservableCounter", name)
}

// Float64ObservableUpDownCounter is refused: it is not recorded.
func (m *meter) Float64ObservableUpDownCounter(name string, _ ...metric.Float64ObservableUpDownCounterOption) (metric.Float64ObservableUpDownCounter, error) {
	return noop.Float64ObservableUpDownCounter{}, errKind("Float64ObservableUpDownCounter", name)
}

// Float64ObservableGauge is refused: it is not recorded.
func (m *meter) Float64ObservableGauge(name string, _ ...metric.Float64ObservableGaugeOption) (metric.Float64ObservableGauge, error) {
	return noop.Float64ObservableGauge{}, errKind("Float64ObservableGauge", name)
}

// int64Counter adds to a counter's points.
type int64Counter struct {
	noop.Int64Counter
	in *instrument
}

// Add adds incr to the point of the options' attributes.
func (c *int64Counter) Add(_ context.Context, incr int64, opts ...metric.AddOption) {
	c.in.measure(metric.NewAddConfig(opts).Attributes(), func(pt *Point) { pt.Value += incr })
}

// Enabled reports that measurements are recorded.
func (c *int64Counter) Enabled(context.Context) bool { return true }

// int64UpDownCounter adds to an up-down counter's points.
type int64UpDownCounter struct {
	noop.Int64UpDownCounter
	in *instrument
}

// Add adds incr to the point of the options' attributes.
func (c *int64UpDownCounter) Add(_ context.Context, incr int64, opts ...metric.AddOption) {
	c.in.measure(metric.NewAddConfig(opts).Attributes(), func(pt *Point) { pt.Value += incr })
}

// Enabled reports that measurements are recorded.
func (c *int64UpDownCounter) Enabled(context.Context) bool { return true }

// float64Histogram counts and sums a histogram's values.
type float64Histogram struct {
	noop.Float64Histogram
	in *instrument
}

// Record counts v and adds it to the sum of the point of the options'
// attributes.
func (h *float64Histogram) Record(_ context.Context, v float64, opts ...metric.RecordOption) {
	h.in.measure(metric.NewRecordConfig(opts).Attributes(), func(pt *Point) { pt.Count++; pt.Sum += v })
}

// Enabled reports that measurements are recorded.
func (h *float64Histogram) Enabled(context.Context) bool { return true }

// int64Gauge is a gauge, observed by callbacks.
type int64Gauge struct {
	noop.Int64ObservableGauge
	in *instrument
}

// callback is a registered callback and the gauges it may observe.
type callback struct {
	run      func(context.Context, *observer) error
	observes []*instrument
}

// register adds cb to the callbacks run when its gauges are read.
func (p *MeterProvider) register(cb *callback) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.callbacks = append(p.callbacks, cb)
}

// registration unregisters a callback.
type registration struct {
	noop.Registration
	provider *MeterProvider
	cb       *callback
}

// Unregister removes the callback; the gauges it observed are no longer
// observed by it. Unregistering again does nothing.
func (r *registration) Unregister() error {
	r.provider.mu.Lock()
	defer r.provider.mu.Unlock()
	r.provider.callbacks = slices.DeleteFunc(r.provider.callbacks, func(cb *callback) bool { return cb == r.cb })
	return nil
}

// collect runs the callbacks among cbs that observe the gauge in and
// returns the points it was given, the last observation of each set of
// attributes.
func collect(in *instrument, cbs []*callback) []Point {
	seen := map[attribute.Distinct]Point{}
	for _, cb := range cbs {
		if !slices.Contains(cb.observes, in) {
			continue
		}
		_ = cb.run(context.Background(), &observer{cb: cb, observe: func(g *instrument, v int64, attrs attribute.Set) {
			if g == in {
				seen[attrs.Equivalent()] = Point{Attributes: attrs, Value: v}
			}
		}})
	}
	return slices.Collect(maps.Values(seen))
}

// observer hands a callback's observations to a collection, keeping only
// those of the gauges the callback was registered for.
type observer struct {
	noop.Observer
	cb      *callback
	observe func(g *instrument, v int64, attrs attribute.Set)
}

// ObserveInt64 observes v for the gauge obs, if the callback was
// registered for it.
func (o *observer) ObserveInt64(obs metric.Int64Observable, v int64, opts ...metric.ObserveOption) {
	g, ok := obs.(*int64Gauge)
	if !ok || !slices.Contains(o.cb.observes, g.in) {
		return
	}
	o.observe(g.in, v, metric.NewObserveConfig(opts).Attributes())
}

// int64Observer is the observer of a callback given to
// Int64ObservableGauge: it observes that one gauge.
type int64Observer struct {
	noop.Int64Observer
	o *observer
	g *int64Gauge
}

// Observe observes v for the gauge.
func (o int64Observer) Observe(v int64, opts ...metric.ObserveOption) {
	o.o.ObserveInt64(o.g, v, opts...)
}

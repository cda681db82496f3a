// Package oteltest records OpenTelemetry spans and metrics in memory, for
// tests. It is written on the OpenTelemetry API alone, so the module that
// tests with it requires no OpenTelemetry SDK.
//
// [TracerProvider] is a [go.opentelemetry.io/otel/trace.TracerProvider]
// whose spans keep their name, kind, attributes, events, links, status,
// parent and whether they ended; [TracerProvider.Spans] returns them in
// the order they started:
//
//	tp := oteltest.NewTracerProvider()
//	tk, _ := toolkit.New(toolkit.WithTracer(tp.Tracer("test")), ...)
//	...
//	for _, s := range tp.Spans() { ... s.Name, s.Status.Code, s.Ended ... }
//
// [MeterProvider] is a [go.opentelemetry.io/otel/metric.MeterProvider]
// that records the instruments the toolkit uses: int64 counters and
// up-down counters, float64 histograms and int64 observable gauges (their
// callbacks, given as options or to RegisterCallback, run when a gauge is
// read). Every other kind of instrument is refused with an error, so that
// nothing is recorded by halves. Values are read by instrument name and
// attributes, in any order:
//
//	mp := oteltest.NewMeterProvider()
//	tk, _ := toolkit.New(toolkit.WithMeterProvider(mp), ...)
//	...
//	n, ok := mp.Sum(toolkit.MetricToolCalls, attrs...)
//
// Both are safe for concurrent use. Nothing is ever exported or dropped:
// a provider keeps everything recorded with it for its whole life, which
// suits a test and nothing else.
package oteltest

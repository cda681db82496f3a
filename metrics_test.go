package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llmkit/toolkit/resource"
)

// collect reads every metric of reader, by name.
func collect(t *testing.T, reader sdkmetric.Reader) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != MeterName {
			continue
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// point returns the value of the int64 data point of a sum or gauge with
// exactly the given attributes, and whether there is one.
func point(data metricdata.Aggregation, attrs ...attribute.KeyValue) (int64, bool) {
	want := attribute.NewSet(attrs...)
	var pts []metricdata.DataPoint[int64]
	switch d := data.(type) {
	case metricdata.Sum[int64]:
		pts = d.DataPoints
	case metricdata.Gauge[int64]:
		pts = d.DataPoints
	}
	for _, p := range pts {
		if p.Attributes.Equals(&want) {
			return p.Value, true
		}
	}
	return 0, false
}

func TestMetricsCalls(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	inside := make(chan map[string]metricdata.Aggregation, 1)
	var tk *Toolkit
	slow := &testTool{name: "slow", run: func(context.Context, json.RawMessage) (any, error) {
		inside <- collect(t, reader)
		return "ok", nil
	}}
	fails := &testTool{name: "fails", run: func(context.Context, json.RawMessage) (any, error) {
		return nil, errors.New("broken")
	}}
	strict := &testTool{name: "strict", in: objSchema(map[string]*jsonschema.Schema{"n": {Type: "integer"}}, "n"),
		run: func(context.Context, json.RawMessage) (any, error) { return "ok", nil }}
	tk = mustNew(t, WithTool(slow, fails, strict), WithMeterProvider(mp))
	ctx := context.Background()

	if _, err := tk.Call(ctx, "slow"); err != nil {
		t.Fatal(err)
	}
	during := <-inside
	builtin := AttrNamespace.String(BuiltinNamespace)
	if v, _ := point(during[MetricToolCallsActive], builtin, AttrTool.String("slow")); v != 1 {
		t.Errorf("calls in flight during the call: %d, want 1", v)
	}
	for range 2 {
		if _, err := tk.Call(ctx, "fails"); !errors.Is(err, ErrToolFailed) {
			t.Fatal(err)
		}
	}
	if _, err := tk.Call(ctx, "strict", resource.Must("in", json.RawMessage(`{"n":"x"}`))); !errors.Is(err, ErrSchema) {
		t.Fatal(err)
	}
	if _, err := tk.Call(ctx, "no_such_tool"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}

	got := collect(t, reader)
	for _, c := range []struct {
		tool, outcome string
		want          int64
	}{
		{"slow", OutcomeOK, 1},
		{"fails", OutcomeToolFailed, 2},
		{"strict", OutcomeBadInput, 1},
	} {
		v, ok := point(got[MetricToolCalls], builtin, AttrTool.String(c.tool), AttrOutcome.String(c.outcome))
		if !ok || v != c.want {
			t.Errorf("calls of %s with outcome %s: %d (%v), want %d", c.tool, c.outcome, v, ok, c.want)
		}
	}
	if sum, ok := got[MetricToolCalls].(metricdata.Sum[int64]); !ok || len(sum.DataPoints) != 3 {
		t.Errorf("call series: %+v, want 3 (an unknown name adds none)", got[MetricToolCalls])
	}
	if v, ok := point(got[MetricToolCallsActive], builtin, AttrTool.String("slow")); !ok || v != 0 {
		t.Errorf("calls in flight after the call: %d (%v), want 0", v, ok)
	}
	hist, ok := got[MetricToolCallDuration].(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("duration: %T", got[MetricToolCallDuration])
	}
	counts := map[string]uint64{}
	for _, p := range hist.DataPoints {
		tool, _ := p.Attributes.Value(AttrTool)
		counts[tool.AsString()] = p.Count
	}
	if counts["slow"] != 1 || counts["fails"] != 2 || counts["strict"] != 1 {
		t.Errorf("duration counts: %v", counts)
	}
}

func TestMetricsConnectors(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	d := newDelegate()
	tk := mustNew(t, WithDelegate(d), WithMeterProvider(mp))
	running(t, tk)
	if err := tk.AddConnectorNS("up", "test://up"); err != nil {
		t.Fatal(err)
	}
	c := d.conn("test://up")
	<-c.started
	c.onEvent(StateChangeEvent(ConnectorState{Status: StatusReady}))
	if _, err := tk.WaitConnectors(context.Background(), "up"); err != nil {
		t.Fatal(err)
	}
	up := AttrNamespace.String("up")
	status := func(want ConnectorStatus) {
		t.Helper()
		got := collect(t, reader)
		for _, s := range statuses {
			v, ok := point(got[MetricConnectorStatus], up, AttrStatus.String(s.String()))
			if !ok || (v == 1) != (s == want) {
				t.Errorf("status %s: %d (%v), want the current status %s only", s, v, ok, want)
			}
		}
	}
	status(StatusReady)
	for range 2 {
		c.onEvent(StateChangeEvent(ConnectorState{Status: StatusReconnecting}))
		c.onEvent(StateChangeEvent(ConnectorState{Status: StatusReconnecting, LastError: "again"})) // still the same outage
		c.onEvent(StateChangeEvent(ConnectorState{Status: StatusReady}))
		if _, err := tk.WaitConnectors(context.Background(), "up"); err != nil {
			t.Fatal(err)
		}
	}
	c.onEvent(StateChangeEvent(ConnectorState{Status: StatusFailed}))
	status(StatusFailed)
	if v, _ := point(collect(t, reader)[MetricConnectorReconnect], up); v != 2 {
		t.Errorf("reconnects: %d, want 2", v)
	}
}

func TestMetricsOutcome(t *testing.T) {
	for err, want := range map[error]string{
		nil:                                   OutcomeOK,
		ErrToolFailed:                         OutcomeToolFailed,
		ErrSchema:                             OutcomeBadInput,
		ErrBadParameter:                       OutcomeBadInput,
		ErrUnavailable:                        OutcomeUnavailable,
		ErrClosed:                             OutcomeUnavailable,
		ErrNotFound:                           OutcomeNotFound,
		ErrDepthExceeded:                      OutcomeDepthExceeded,
		context.Canceled:                      OutcomeCanceled,
		context.DeadlineExceeded:              OutcomeTimeout,
		errors.New("other"):                   OutcomeError,
		errors.Join(ErrToolFailed, ErrSchema): OutcomeToolFailed,
	} {
		if got := Outcome(err); got != want {
			t.Errorf("Outcome(%v) = %q, want %q", err, got, want)
		}
	}
}

// A connector whose first attempts fail is reconnecting, but it lost no
// connection: the reconnect counter counts connections lost only.
func TestMetricsFailedFirstAttemptIsNoReconnect(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	d := newDelegate()
	tk := mustNew(t, WithDelegate(d), WithMeterProvider(mp))
	running(t, tk)
	if err := tk.AddConnectorNS("down", "test://down"); err != nil {
		t.Fatal(err)
	}
	c := d.conn("test://down")
	<-c.started
	c.onEvent(StateChangeEvent(ConnectorState{Status: StatusReconnecting, LastError: "refused"}))
	c.onEvent(StateChangeEvent(ConnectorState{Status: StatusReconnecting, LastError: "refused again"}))
	down := AttrNamespace.String("down")
	if v, _ := point(collect(t, reader)[MetricConnectorReconnect], down); v != 0 {
		t.Errorf("reconnects before any connection: %d, want 0", v)
	}
	c.onEvent(StateChangeEvent(ConnectorState{Status: StatusReady}))
	if _, err := tk.WaitConnectors(context.Background(), "down"); err != nil {
		t.Fatal(err)
	}
	c.onEvent(StateChangeEvent(ConnectorState{Status: StatusReconnecting, LastError: "lost"}))
	if v, _ := point(collect(t, reader)[MetricConnectorReconnect], down); v != 1 {
		t.Errorf("reconnects after one loss: %d, want 1", v)
	}
}

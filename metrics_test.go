package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit/internal/testing/oteltest"
	"github.com/llmkit/toolkit/resource"
)

// checkMeter checks that the instruments named names were made by the
// toolkit's meter, MeterName.
func checkMeter(t *testing.T, mp *oteltest.MeterProvider, names ...string) {
	t.Helper()
	for _, name := range names {
		if in, ok := mp.Instrument(name); !ok || in.Meter != MeterName {
			t.Errorf("instrument %s: %+v (%v), want one of meter %s", name, in, ok, MeterName)
		}
	}
}

func TestMetricsCalls(t *testing.T) {
	mp := oteltest.NewMeterProvider()
	builtin := AttrNamespace.String(BuiltinNamespace)
	inside := make(chan int64, 1)
	var tk *Toolkit
	slow := &testTool{name: "slow", run: func(context.Context, json.RawMessage) (any, error) {
		v, _ := mp.Sum(MetricToolCallsActive, builtin, AttrTool.String("slow"))
		inside <- v
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
	if v := <-inside; v != 1 {
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

	checkMeter(t, mp, MetricToolCalls, MetricToolCallDuration, MetricToolCallsActive, MetricConnectorStatus, MetricConnectorReconnect)
	for _, c := range []struct {
		tool, outcome string
		want          int64
	}{
		{"slow", OutcomeOK, 1},
		{"fails", OutcomeToolFailed, 2},
		{"strict", OutcomeBadInput, 1},
	} {
		v, ok := mp.Sum(MetricToolCalls, builtin, AttrTool.String(c.tool), AttrOutcome.String(c.outcome))
		if !ok || v != c.want {
			t.Errorf("calls of %s with outcome %s: %d (%v), want %d", c.tool, c.outcome, v, ok, c.want)
		}
	}
	if in, _ := mp.Instrument(MetricToolCalls); in.Kind != oteltest.Counter || len(mp.Points(MetricToolCalls)) != 3 {
		t.Errorf("call series: %+v of a %s, want 3 of a counter (an unknown name adds none)", mp.Points(MetricToolCalls), in.Kind)
	}
	if v, ok := mp.Sum(MetricToolCallsActive, builtin, AttrTool.String("slow")); !ok || v != 0 {
		t.Errorf("calls in flight after the call: %d (%v), want 0", v, ok)
	}
	if in, _ := mp.Instrument(MetricToolCallDuration); in.Kind != oteltest.Histogram {
		t.Fatalf("duration: a %s", in.Kind)
	}
	counts := map[string]uint64{}
	for _, p := range mp.Points(MetricToolCallDuration) {
		tool, _ := p.Attributes.Value(AttrTool)
		counts[tool.AsString()] = p.Count
	}
	if counts["slow"] != 1 || counts["fails"] != 2 || counts["strict"] != 1 {
		t.Errorf("duration counts: %v", counts)
	}
}

func TestMetricsConnectors(t *testing.T) {
	mp := oteltest.NewMeterProvider()
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
		for _, s := range statuses {
			v, ok := mp.Gauge(MetricConnectorStatus, up, AttrStatus.String(s.String()))
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
	checkMeter(t, mp, MetricConnectorStatus, MetricConnectorReconnect)
	if v, _ := mp.Sum(MetricConnectorReconnect, up); v != 2 {
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

package toolkit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// MeterName is the name of the OpenTelemetry meter the toolkit records
// its metrics with (see WithMeterProvider).
const MeterName = "github.com/llmkit/toolkit"

// Names of the toolkit's metrics (see WithMeterProvider). A Prometheus
// exporter writes them with underscores, counters with a "_total" suffix
// and the duration with "_seconds": toolkit_tool_calls_total, and so on.
const (
	MetricToolCalls          = "toolkit.tool.calls"
	MetricToolCallDuration   = "toolkit.tool.call.duration"
	MetricToolCallsActive    = "toolkit.tool.calls.active"
	MetricConnectorStatus    = "toolkit.connector.status"
	MetricConnectorReconnect = "toolkit.connector.reconnects"
)

// Attribute keys of the toolkit's metrics (and of its spans, for the
// first two).
const (
	AttrNamespace = attribute.Key("toolkit.namespace")
	AttrTool      = attribute.Key("toolkit.tool")
	AttrOutcome   = attribute.Key("toolkit.outcome")
	AttrStatus    = attribute.Key("toolkit.status")
)

// Outcomes of a tool call, the values of AttrOutcome.
const (
	OutcomeOK            = "ok"             // the tool ran and succeeded
	OutcomeToolFailed    = "tool_failed"    // ErrToolFailed: the tool ran and failed, or panicked
	OutcomeBadInput      = "bad_input"      // ErrSchema or ErrBadParameter: refused before running
	OutcomeUnavailable   = "unavailable"    // ErrUnavailable or ErrClosed: its source could not be reached
	OutcomeNotFound      = "not_found"      // ErrNotFound: the tool went away meanwhile
	OutcomeDepthExceeded = "depth_exceeded" // ErrDepthExceeded
	OutcomeCanceled      = "canceled"       // context.Canceled
	OutcomeTimeout       = "timeout"        // context.DeadlineExceeded
	OutcomeError         = "error"          // anything else
	OutcomeDenied        = "denied"         // ErrDenied: the policy refused it
	OutcomeRateLimited   = "rate_limited"   // ErrRateLimited: a rate limit refused it
)

// WithMeterProvider makes the toolkit record OpenTelemetry metrics with a
// meter (MeterName) of mp:
//
//   - toolkit.tool.calls (counter): tool calls, by namespace, tool and
//     outcome (OutcomeOK, OutcomeToolFailed, OutcomeBadInput, ...);
//   - toolkit.tool.call.duration (histogram, seconds): call latency, by
//     namespace and tool;
//   - toolkit.tool.calls.active (up-down counter): calls in flight, by
//     namespace and tool;
//   - toolkit.connector.status (gauge): 1 for the current status of each
//     connector and 0 for the others, by namespace and status;
//   - toolkit.connector.reconnects (counter): connections lost (a
//     connector entering StatusReconnecting, but from StatusConnecting:
//     a first attempt that failed lost nothing), by namespace.
//
// Calls are counted once the tool is resolved: a call by a name that
// reaches no tool is not, so clients cannot add series by inventing names.
// Without this option nothing is recorded and a call pays one nil check.
// A nil mp turns metrics off.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(tk *Toolkit) error {
		if mp == nil {
			tk.metrics = nil
			return nil
		}
		m, err := newMetrics(tk, mp)
		if err != nil {
			return fmt.Errorf("%w: WithMeterProvider: %w", ErrBadParameter, err)
		}
		tk.metrics = m
		return nil
	}
}

// metrics holds the toolkit's instruments.
type metrics struct {
	calls      metric.Int64Counter
	duration   metric.Float64Histogram
	active     metric.Int64UpDownCounter
	reconnects metric.Int64Counter
	// attrs caches the attribute sets of each tool called: toolKey →
	// *toolAttrs. It holds one entry per tool ever called (calls name
	// resolved tools only).
	attrs sync.Map
}

// toolKey identifies a tool in the metrics' attribute cache.
type toolKey struct{ ns, name string }

// toolAttrs are the attribute sets of one tool's measurements, made once,
// in the option slices the instruments take, so that a measurement
// allocates nothing.
type toolAttrs struct {
	add      []metric.AddOption    // namespace and tool
	record   []metric.RecordOption // the same
	outcomes [len(outcomes)][]metric.AddOption
}

// outcomes lists the values of AttrOutcome; outcomeOf indexes it.
var outcomes = [...]string{OutcomeOK, OutcomeToolFailed, OutcomeBadInput, OutcomeUnavailable,
	OutcomeNotFound, OutcomeDepthExceeded, OutcomeCanceled, OutcomeTimeout, OutcomeError,
	OutcomeDenied, OutcomeRateLimited}

// statuses are the connector statuses the status gauge reports.
var statuses = [...]ConnectorStatus{StatusConnecting, StatusReady, StatusReconnecting, StatusFailed, StatusStopped, StatusNeedsAuthorization}

func newMetrics(tk *Toolkit, mp metric.MeterProvider) (*metrics, error) {
	meter := mp.Meter(MeterName)
	var m metrics
	var err error
	var errs []error
	m.calls, err = meter.Int64Counter(MetricToolCalls, metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls, by namespace, tool and outcome."))
	errs = append(errs, err)
	m.duration, err = meter.Float64Histogram(MetricToolCallDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of tool calls, by namespace and tool."),
		// The SDK's default buckets (0 to 10,000) suit milliseconds.
		metric.WithExplicitBucketBoundaries(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300))
	errs = append(errs, err)
	m.active, err = meter.Int64UpDownCounter(MetricToolCallsActive, metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls in flight, by namespace and tool."))
	errs = append(errs, err)
	m.reconnects, err = meter.Int64Counter(MetricConnectorReconnect, metric.WithUnit("{reconnect}"),
		metric.WithDescription("Connections to a connector's source that were lost, by namespace."))
	errs = append(errs, err)
	_, err = meter.Int64ObservableGauge(MetricConnectorStatus,
		metric.WithDescription("1 for the current status of each connector, 0 for the others, by namespace and status."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			for _, st := range tk.Connectors() {
				for _, s := range statuses {
					v := int64(0)
					if st.Status == s {
						v = 1
					}
					o.Observe(v, metric.WithAttributes(AttrNamespace.String(st.Namespace), AttrStatus.String(s.String())))
				}
			}
			return nil
		}))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &m, nil
}

// attrsOf returns the attribute sets of the tool name in namespace ns.
func (m *metrics) attrsOf(ns, name string) *toolAttrs {
	k := toolKey{ns, name}
	if a, ok := m.attrs.Load(k); ok {
		return a.(*toolAttrs)
	}
	nsAttr, toolAttr := AttrNamespace.String(ns), AttrTool.String(name)
	tool := metric.WithAttributeSet(attribute.NewSet(nsAttr, toolAttr))
	a := &toolAttrs{add: []metric.AddOption{tool}, record: []metric.RecordOption{tool}}
	for i, o := range outcomes {
		a.outcomes[i] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(nsAttr, toolAttr, AttrOutcome.String(o)))}
	}
	v, _ := m.attrs.LoadOrStore(k, a)
	return v.(*toolAttrs)
}

// callStarted records the start of a call of tool name in namespace ns.
// Give what it returns to callEnded.
func (m *metrics) callStarted(ctx context.Context, ns, name string) callRecord {
	a := m.attrsOf(ns, name)
	m.active.Add(ctx, 1, a.add...)
	return callRecord{attrs: a, start: time.Now()}
}

// callRecord is what callEnded needs of a call's start.
type callRecord struct {
	attrs *toolAttrs
	start time.Time
}

// callEnded records the end of a call that returned err.
func (m *metrics) callEnded(ctx context.Context, r callRecord, err error) {
	m.active.Add(ctx, -1, r.attrs.add...)
	m.duration.Record(ctx, time.Since(r.start).Seconds(), r.attrs.record...)
	m.calls.Add(ctx, 1, r.attrs.outcomes[outcomeOf(err)]...)
}

// reconnected records that the connector of namespace ns lost its
// connection.
func (m *metrics) reconnected(ns string) {
	m.reconnects.Add(context.Background(), 1, metric.WithAttributes(AttrNamespace.String(ns)))
}

// Outcome classifies the error of a tool call (nil for success) as one of
// the Outcome constants, as the toolkit's metrics do.
func Outcome(err error) string { return outcomes[outcomeOf(err)] }

// outcomeOf returns the index in outcomes of the outcome of err.
func outcomeOf(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrRateLimited):
		return 10
	case errors.Is(err, ErrDenied):
		return 9
	case errors.Is(err, ErrToolFailed):
		return 1
	case errors.Is(err, ErrSchema), errors.Is(err, ErrBadParameter):
		return 2
	case errors.Is(err, ErrUnavailable), errors.Is(err, ErrClosed):
		return 3
	case errors.Is(err, ErrNotFound):
		return 4
	case errors.Is(err, ErrDepthExceeded):
		return 5
	case errors.Is(err, context.Canceled):
		return 6
	case errors.Is(err, context.DeadlineExceeded):
		return 7
	}
	return 8
}

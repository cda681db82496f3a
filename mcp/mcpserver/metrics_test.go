package mcpserver

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// sessionGauge reads the sessions gauge, and whether it is there.
func sessionGauge(t *testing.T, reader sdkmetric.Reader) (int64, bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sm.Scope.Name == MeterName && m.Name == MetricSessions {
				g := m.Data.(metricdata.Gauge[int64])
				if len(g.DataPoints) == 1 {
					return g.DataPoints[0].Value, true
				}
			}
		}
	}
	return 0, false
}

func TestServerMetricsSessions(t *testing.T) {
	leakCheck(t)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	f := newFixture(t, nil, WithMeterProvider(mp))
	if n, ok := sessionGauge(t, reader); !ok || n != 0 {
		t.Errorf("sessions before any client: %d (%v)", n, ok)
	}
	f.connect(t, nil)
	f.connect(t, nil)
	if n, ok := sessionGauge(t, reader); !ok || n != 2 {
		t.Errorf("sessions with two clients: %d (%v), want 2", n, ok)
	}
	f.srv.Close()
	if n, ok := sessionGauge(t, reader); ok {
		t.Errorf("a closed server still reports %d sessions", n)
	}
}

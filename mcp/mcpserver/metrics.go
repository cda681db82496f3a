package mcpserver

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/metric"

	"github.com/llmkit/toolkit"
)

// MeterName is the name of the OpenTelemetry meter of the server's
// metrics (see WithMeterProvider).
const MeterName = toolkit.MeterName + "/mcp/mcpserver"

// MetricSessions is the name of the gauge of open client sessions (a
// Prometheus exporter writes toolkit_mcp_server_sessions).
const MetricSessions = "toolkit.mcp.server.sessions"

// recordMetrics registers the server's instruments with mp and returns
// the function that unregisters them.
func (s *Server) recordMetrics(mp metric.MeterProvider) (func(), error) {
	meter := mp.Meter(MeterName)
	sessions, err := meter.Int64ObservableGauge(MetricSessions, metric.WithUnit("{session}"),
		metric.WithDescription("Client sessions open."))
	if err != nil {
		return nil, fmt.Errorf("%w: WithMeterProvider: %w", toolkit.ErrBadParameter, err)
	}
	reg, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		n := int64(0)
		for range s.server.Sessions() {
			n++
		}
		o.ObserveInt64(sessions, n)
		return nil
	}, sessions)
	if err != nil {
		return nil, fmt.Errorf("%w: WithMeterProvider: %w", toolkit.ErrBadParameter, err)
	}
	return func() { reg.Unregister() }, nil
}

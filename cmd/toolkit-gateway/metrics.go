package main

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// gatewayMetrics is the OpenTelemetry meter provider of the gateway when
// metrics are on, with the Prometheus exporter that reads it.
type gatewayMetrics struct {
	provider *sdkmetric.MeterProvider
	handler  http.Handler // /metrics, Prometheus text format
}

// newMetrics makes a meter provider read by a Prometheus exporter of its
// own registry (not the process-wide default one). Names are written the
// Prometheus way: toolkit_tool_calls_total{toolkit_tool="add",...}.
func newMetrics() (*gatewayMetrics, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(
		otelprom.WithRegisterer(reg),
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes),
	)
	if err != nil {
		return nil, err
	}
	return &gatewayMetrics{
		provider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp)),
		handler:  promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
	}, nil
}

// meterProvider returns m's provider, or nil when metrics are off.
func (m *gatewayMetrics) meterProvider() metric.MeterProvider {
	if m == nil {
		return nil
	}
	return m.provider
}

// shutdown stops the meter provider.
func (m *gatewayMetrics) shutdown() {
	if m != nil {
		m.provider.Shutdown(context.Background())
	}
}

// Instruments of the gateway itself.
const (
	// meterName names the gateway's own meter.
	meterName = "github.com/llmkit/toolkit/cmd/toolkit-gateway"
	// metricUpstreamSessions counts the open upstream sessions of clients
	// of each per_client upstream (toolkit_gateway_upstream_sessions in
	// Prometheus).
	metricUpstreamSessions = "toolkit.gateway.upstream_sessions"
	// metricUpstreamSessionsOpened counts those opened since the gateway
	// started (toolkit_gateway_upstream_sessions_opened_total).
	metricUpstreamSessionsOpened = "toolkit.gateway.upstream_sessions.opened"
	// metricUserAuthorizations counts the users of each per_user upstream
	// by the state of their authorization, the attribute
	// toolkit.authorization.state: authorized, pending or failed
	// (toolkit_gateway_user_authorizations in Prometheus).
	metricUserAuthorizations = "toolkit.gateway.user_authorizations"
)

// observeUpstreamSessions reports, at each collection, the client
// sessions counts returns by namespace.
func (m *gatewayMetrics) observeUpstreamSessions(counts func() map[string]upstreamSessions) error {
	meter := m.provider.Meter(meterName)
	open, err := meter.Int64ObservableGauge(metricUpstreamSessions, metric.WithUnit("{session}"),
		metric.WithDescription("Upstream sessions of clients open, by per_client upstream."))
	if err != nil {
		return err
	}
	opened, err := meter.Int64ObservableCounter(metricUpstreamSessionsOpened, metric.WithUnit("{session}"),
		metric.WithDescription("Upstream sessions of clients opened since the gateway started, by per_client upstream."))
	if err != nil {
		return err
	}
	users, err := meter.Int64ObservableGauge(metricUserAuthorizations, metric.WithUnit("{user}"),
		metric.WithDescription("Users of a per_user upstream, by the state of their authorization."))
	if err != nil {
		return err
	}
	_, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for ns, n := range counts() {
			attrs := metric.WithAttributes(attribute.String("toolkit.namespace", ns))
			o.ObserveInt64(open, int64(n.Open), attrs)
			o.ObserveInt64(opened, n.Opened, attrs)
			if u := n.Users; u != nil {
				for _, s := range []struct {
					state string
					n     int
				}{{"authorized", u.Authorized}, {"pending", u.Pending}, {"failed", u.Failed}} {
					o.ObserveInt64(users, int64(s.n), metric.WithAttributes(attribute.String("toolkit.namespace", ns), attribute.String("toolkit.authorization.state", s.state)))
				}
			}
		}
		return nil
	}, open, opened, users)
	return err
}

package main

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
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

// shutdown stops the meter provider.
func (m *gatewayMetrics) shutdown() {
	if m != nil {
		m.provider.Shutdown(context.Background())
	}
}

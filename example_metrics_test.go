package toolkit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

// Metrics go to any OpenTelemetry meter provider; here the SDK's, read by
// hand (a Prometheus exporter is another reader).
func ExampleWithMeterProvider() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	tk, err := toolkit.New(
		toolkit.WithTool(tool.Must("add", "Adds two integers.", add)),
		toolkit.WithMeterProvider(mp),
	)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	in := resource.Must("input", json.RawMessage(`{"a": 1, "b": 2}`))
	tk.Call(ctx, "add", in)
	tk.Call(ctx, "add", in)

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != toolkit.MetricToolCalls {
				continue
			}
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				tool, _ := p.Attributes.Value(toolkit.AttrTool)
				outcome, _ := p.Attributes.Value(toolkit.AttrOutcome)
				fmt.Println(tool.AsString(), outcome.AsString(), p.Value)
			}
		}
	}
	// Output:
	// add ok 2
}

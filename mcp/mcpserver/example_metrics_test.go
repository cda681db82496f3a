package mcpserver_test

import (
	"context"
	"fmt"
	"log"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/mcpserver"
	"github.com/llmkit/toolkit/resource"
)

// Resource reads (and prompt gets) counted by kind, namespace, item and
// outcome, read here with the OpenTelemetry SDK's manual reader.
func ExampleWithMeterProvider() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)

	tk, err := toolkit.New(toolkit.WithResource(resource.Must("notes", []byte("remember the milk"))))
	if err != nil {
		log.Fatal(err)
	}
	srv, err := mcpserver.New(tk, nil, mcpserver.WithMeterProvider(mp))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	clientT, serverT := sdk.NewInMemoryTransports()
	go srv.Run(ctx, serverT)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: res.Resources[0].URI}); err != nil {
		log.Fatal(err)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != mcpserver.MetricRequests {
				continue
			}
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				kind, _ := p.Attributes.Value(mcpserver.AttrKind)
				outcome, _ := p.Attributes.Value(toolkit.AttrOutcome)
				fmt.Println(kind.AsString(), outcome.AsString(), p.Value)
			}
		}
	}
	// Output: resource ok 1
}

package mcpserver_test

import (
	"context"
	"fmt"
	"log"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/mcpserver"
	"github.com/llmkit/toolkit/resource"
)

// Resource reads (and prompt gets) are counted by kind, namespace, item
// and outcome with any OpenTelemetry meter provider. Here it is the global
// one, which a program sets once with otel.SetMeterProvider (the
// OpenTelemetry SDK's, with the exporter it uses: Prometheus, OTLP, ...);
// until then it records nothing. The read below adds one to the series of
// MetricRequests with the attributes toolkit.kind=resource,
// toolkit.namespace=builtin, toolkit.item=(the URI) and
// toolkit.outcome=ok, and its duration to MetricRequestDuration.
func ExampleWithMeterProvider() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	mp := otel.GetMeterProvider()
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
	read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: res.Resources[0].URI})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %s\n", res.Resources[0].Name, read.Contents[0].Text)
	// Output: notes: remember the milk
}

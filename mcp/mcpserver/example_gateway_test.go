package mcpserver_test

import (
	"context"
	"log"
	"os"
	"os/signal"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/mcpserver"
)

// A gateway over stdio: a client that lists the tools once, right after
// initialize, gets the upstream's tools rather than an empty list, as its
// first requests wait (at most 5 seconds) for the upstream to be ready.
// Both the toolkit and the server record metrics with the same provider.
func ExampleWithStartupWait() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	mp := otel.GetMeterProvider() // the program's, set with otel.SetMeterProvider

	tk, err := toolkit.New(toolkit.WithDelegate(mcp.NewDelegate("gateway", "1.0")), toolkit.WithMeterProvider(mp))
	if err != nil {
		log.Fatal(err)
	}
	if err := tk.AddConnectorNS("files", "stdio:npx?arg=-y&arg=@modelcontextprotocol/server-filesystem&arg=/tmp"); err != nil {
		log.Fatal(err)
	}
	srv, err := mcpserver.New(tk, nil, mcpserver.WithStartupWait(5*time.Second), mcpserver.WithMeterProvider(mp))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	go tk.Run(ctx) // the connectors start with Run
	if err := srv.ServeStdio(ctx); err != nil {
		log.Print(err)
	}
}

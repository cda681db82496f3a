package mcpserver_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/mcpserver"
	"github.com/llmkit/toolkit/tool"
)

// A server that speaks streamable HTTP at /mcp and the legacy HTTP+SSE
// transport at /sse, for clients that know only the 2024-11-05 protocol.
func ExampleServer_SSEHandler() {
	tk, err := toolkit.New(toolkit.WithTool(tool.Must("add", "Adds two numbers", func(_ context.Context, in addIn) (int, error) {
		return in.A + in.B, nil
	})))
	if err != nil {
		log.Fatal(err)
	}
	srv, err := mcpserver.New(tk, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	h, err := srv.Handler()
	if err != nil {
		log.Fatal(err)
	}
	sse, err := srv.SSEHandler()
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/sse", sse)
	ts := httptest.NewServer(mux)
	defer ts.Close()

	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "old-client", Version: "1"}, nil).
		Connect(ctx, &sdk.SSEClientTransport{Endpoint: ts.URL + "/sse"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "add", Arguments: map[string]int{"a": 2, "b": 3}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*sdk.TextContent).Text)
	// Output: 5
}

// Bounds on what clients may hold: sessions idle for 10 minutes are
// closed, and a session may run 16 calls at once.
func ExampleWithMaxSessionCalls() {
	tk, err := toolkit.New()
	if err != nil {
		log.Fatal(err)
	}
	srv, err := mcpserver.New(tk, nil,
		mcpserver.WithMaxSessionCalls(16),
		mcpserver.WithHTTP(mcpserver.WithSessionTimeout(10*time.Minute)),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	h, err := srv.Handler()
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	fmt.Println("ready")
	// Output: ready
}

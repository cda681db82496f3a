package toolkit_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/tool"
)

func ExampleToolkit_Subscribe() {
	tk, err := toolkit.New()
	if err != nil {
		log.Fatal(err)
	}
	cancel := tk.Subscribe(func(ev toolkit.ConnectorEvent) {
		// Runs outside any toolkit lock: reading the toolkit is fine.
		resp, _ := tk.List(context.Background(), toolkit.ListRequest{Namespace: ev.Namespace})
		fmt.Println(ev.Namespace, ev.Kind, resp.Count)
	})
	defer cancel()

	if err := tk.AddTool(tool.Must("add", "Adds two integers.", add)); err != nil {
		log.Fatal(err)
	}
	tk.WaitEvents()
	// Output: builtin tool_list_changed 1
}

func ExampleToolkit_WaitConnectors() {
	// A remote MCP server with one tool.
	server := sdk.NewServer(&sdk.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "forecast", Description: "Tomorrow's weather."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "sunny"}}}, nil, nil
		})
	mux := http.NewServeMux()
	mux.Handle("/weather/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	hs := httptest.NewServer(mux)
	defer hs.Close()

	delegate, err := mcp.NewDelegate("my-app", "1.0.0")
	if err != nil {
		log.Fatal(err)
	}
	tk, err := toolkit.New(toolkit.WithDelegate(delegate))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tk.Run(ctx) }()
	defer func() { cancel(); <-runDone }() // stop the connectors before the server

	if err := tk.AddConnector(hs.URL + "/weather/mcp"); err != nil {
		log.Fatal(err)
	}
	// Wait, a bounded time, until the server's tools can be looked up.
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	states, err := tk.WaitConnectors(wctx, "weather")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(states[0].Namespace, states[0].Status)
	if _, err := tk.Lookup(ctx, "weather.forecast"); err == nil {
		fmt.Println("weather.forecast found")
	}
	// Output:
	// weather ready
	// weather.forecast found
}

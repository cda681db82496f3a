package mcpserver_test

import (
	"context"
	"fmt"
	"log"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/mcpserver"
	"github.com/llmkit/toolkit/tool"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

// A toolkit served to an MCP client. The server follows the toolkit's
// changes itself, so clients hear about new tools.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	tk, err := toolkit.New(
		toolkit.WithTool(tool.Must("add", "Adds two numbers", func(_ context.Context, in addIn) (int, error) {
			return in.A + in.B, nil
		})),
	)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := mcpserver.New(tk, &sdk.Implementation{Name: "calculator", Version: "1.0.0"})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	// Serve one client in memory; srv.Handler() would serve HTTP and
	// srv.ServeStdio standard input and output.
	clientT, serverT := sdk.NewInMemoryTransports()
	go srv.Run(ctx, serverT)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, clientT, nil)
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

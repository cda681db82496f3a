package mcp_test

import (
	"context"
	"fmt"
	"log"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
)

// A toolkit calls the tool of a remote MCP server. The server runs in this
// process, reached through an in-memory transport; with a real server the
// URL alone (https://..., stdio:...) selects the transport.
func Example() {
	server := sdk.NewServer(&sdk.Implementation{Name: "files", Version: "1.0.0"}, nil)
	type readIn struct {
		Path string `json:"path"`
	}
	sdk.AddTool(server, &sdk.Tool{Name: "read", Description: "Reads a file."},
		func(_ context.Context, _ *sdk.CallToolRequest, in readIn) (*sdk.CallToolResult, any, error) {
			text := "contents of " + in.Path
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil, nil
		})

	delegate, err := mcp.NewDelegate("app", "1.0", mcp.OptTimeouts(mcp.Timeouts{Call: time.Minute}),
		mcp.OptDialer(func(ctx context.Context) (sdk.Transport, error) {
			ct, st := sdk.NewInMemoryTransports()
			if _, err := server.Connect(ctx, st, nil); err != nil {
				return nil, err
			}
			return ct, nil
		}))
	if err != nil {
		log.Fatal(err)
	}
	tk, err := toolkit.New(toolkit.WithDelegate(delegate))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tk.Run(ctx) }()
	defer func() { cancel(); <-done }()

	if err := tk.AddConnectorNS("files", "memory://files"); err != nil {
		log.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if _, err := tk.WaitConnectors(wctx, "files"); err != nil {
		log.Fatal(err)
	}
	out, err := tk.Call(ctx, "files.read", toolkit.Input(readIn{Path: "/srv/notes.txt"}))
	if err != nil {
		log.Fatal(err)
	}
	text, _ := out.Read(ctx)
	fmt.Println(string(text))
	// Output:
	// contents of /srv/notes.txt
}

package mcp_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
)

// requestingServer is a server whose tool "ask" asks its client for roots and
// to sample a model, and reports what it got. It asks with server requests,
// which protocol 2026-07-28 forbids, so it speaks only the versions of the
// initialize handshake (the connector then falls back to those).
func requestingServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "asking", Version: "1"}, &sdk.ServerOptions{
		SupportedProtocolVersions: []string{mcp.StatefulProtocolVersion},
	})
	s.AddTool(&sdk.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		roots, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, err
		}
		var uris []string
		for _, r := range roots.Roots {
			uris = append(uris, r.URI)
		}
		msg, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10,
			Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "a colour?"}}}})
		if err != nil {
			return nil, err
		}
		text := fmt.Sprintf("roots %s, model says %s", strings.Join(uris, " "), msg.Content.(*sdk.TextContent).Text)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
	})
	return s
}

// An application offers a server its roots and answers the server's
// sampling requests with its own model, for every connector its delegate
// creates; the roots can change later for all of them at once.
func ExampleOptServerRequests() {
	roots, err := mcp.NewRootSet(&sdk.Root{URI: "file:///srv/project", Name: "project"})
	if err != nil {
		log.Fatal(err)
	}
	model := func(ctx context.Context, p *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
		return &sdk.CreateMessageResult{Model: "app-model", Role: "assistant", Content: &sdk.TextContent{Text: "teal"}}, nil
	}
	server := requestingServer()
	d, err := mcp.NewDelegate("app", "1.0",
		mcp.OptRootSet(roots),
		mcp.OptServerRequests(mcp.ServerRequests{Sampling: model}),
		// The server runs in this process for the example.
		mcp.OptDialer(func(ctx context.Context) (sdk.Transport, error) {
			ct, st := sdk.NewInMemoryTransports()
			if _, err := server.Connect(ctx, st, nil); err != nil {
				return nil, err
			}
			return ct, nil
		}),
	)
	if err != nil {
		log.Fatal(err)
	}
	events := make(chan toolkit.ConnectorEvent, 16)
	d.Events = func(e toolkit.ConnectorEvent) { events <- e }
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tk.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := tk.AddConnectorNS("asking", "memory://asking"); err != nil {
		log.Fatal(err)
	}
	for e := range events {
		if e.Kind == toolkit.ConnectorEventToolListChanged {
			break
		}
	}
	tk.WaitEvents()

	out, err := tk.Call(ctx, "asking.ask")
	if err != nil {
		log.Fatal(err)
	}
	text, _ := out.Read(ctx)
	fmt.Println(string(text))

	// Every connector using the set tells its server; the next call sees
	// the new roots.
	if err := roots.Set(&sdk.Root{URI: "file:///srv/other"}); err != nil {
		log.Fatal(err)
	}
	out, err = tk.Call(ctx, "asking.ask")
	if err != nil {
		log.Fatal(err)
	}
	text, _ = out.Read(ctx)
	fmt.Println(string(text))
	// Output:
	// roots file:///srv/project, model says teal
	// roots file:///srv/other, model says teal
}

// A connector offers roots of its own, replaced at run time.
func ExampleConnector_SetRoots() {
	c, err := mcp.New("https://tools.example.com/mcp", "app", "1.0",
		mcp.OptRoots(&sdk.Root{URI: "file:///home/ada/notes"}))
	if err != nil {
		log.Fatal(err)
	}
	// While the connector runs, its server gets notifications/roots/list_changed.
	err = c.SetRoots(&sdk.Root{URI: "file:///home/ada/code"})
	fmt.Println(err, c.Roots()[0].URI)
	// Output: <nil> file:///home/ada/code
}

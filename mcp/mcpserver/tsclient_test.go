package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/peers"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp"
)

// TestTypeScriptClientMatrix runs the TypeScript SDK's client (version 2,
// @modelcontextprotocol/client) through a gateway, at 2025-11-25
// (initialize, stateful face) and at 2026-07-28 (server/discover, stateful
// and stateless face), to an upstream of either generation: list, call, a
// sampling tool, an elicitation tool, a resource update and a tool list
// change. The go-sdk's clients run the same matrix in TestProtocolMatrix.
func TestTypeScriptClientMatrix(t *testing.T) {
	for _, face := range []string{"stateful", "stateless"} {
		for _, upstream := range []string{"2025-11-25", statelessVersion} {
			for _, client := range []string{"legacy", statelessVersion} {
				if face == "stateless" && client == "legacy" {
					continue // no session: nothing can reach it outside a request
				}
				t.Run(fmt.Sprintf("face=%s/upstream=%s/client=%s", face, upstream, client), func(t *testing.T) {
					leakCheck(t)
					subscribed := make(chan string, 8)
					o := testserver.Options{Server: &sdk.ServerOptions{
						SubscribeHandler:   func(context.Context, *sdk.SubscribeRequest) error { return nil },
						UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
						Logger:             slog.New(&messageHandler{msg: "resource subscribed", key: "uri", ch: subscribed}),
					}}
					if upstream < statelessVersion {
						o.Server.SupportedProtocolVersions = []string{upstream}
					}
					up := newServer(t, o)
					addAskingTools(up, upstream >= statelessVersion)
					m := testserver.NewMemory(up.Server)
					t.Cleanup(m.Close)
					var hopts []HTTPOption
					if face == "stateless" {
						hopts = append(hopts, WithStateless())
					}
					gw := startGateway(t, "memory://up", []mcp.Option{mcp.OptDialer(m.Dial), mcp.OptForwardServerRequests()}, nil, hopts)

					ts := peers.StartTSClient(t, gw.url, client)
					ev := ts.Next(t)
					want := client
					if client == "legacy" {
						want = "2025-11-25"
					}
					if ev.Event != "connected" || ev.Version != want {
						t.Fatalf("connected: %+v, want version %s", ev, want)
					}
					if ev = ts.Next(t); !slices.Contains(ev.Names, "echo") || !slices.Contains(ev.Names, "ask_user") {
						t.Errorf("tools: %+v", ev)
					}
					for _, want := range []tsCall{{"echo", "hi"}, {"ask_model", "model: teal"}, {"ask_user", "user: accept Ada"}} {
						if ev = ts.Next(t); ev.Event != "call" || ev.Name != want.name || ev.Error || ev.Text != want.text {
							t.Errorf("call %s: %+v, want %q", want.name, ev, want.text)
						}
					}
					if ev = ts.Next(t); ev.Event != "listening" {
						t.Fatalf("want listening: %+v", ev)
					}
					if got := recvString(t, subscribed); got != testserver.TextURI {
						t.Errorf("the upstream subscribed to %q", got)
					}
					mustNotErr(t, up.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: testserver.TextURI}))
					if ev = ts.Next(t); ev.Event != "updated" || ev.URI != testserver.TextURI {
						t.Errorf("want the update of %s: %+v", testserver.TextURI, ev)
					}
					up.AddTool(mustTool("late"), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
						return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late"}}}, nil
					})
					if ev = ts.Next(t); ev.Event != "changed" {
						t.Errorf("want the tool list change: %+v", ev)
					}
					ts.Wait(t)
				})
			}
		}
	}
}

// tsCall is a call the TypeScript client makes and the text it should get.
type tsCall struct{ name, text string }

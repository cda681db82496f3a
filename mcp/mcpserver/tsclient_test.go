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
// and stateless face), to a go-sdk upstream of either generation and to an
// upstream written with the TypeScript SDK's version 2 over HTTP
// (2026-07-28): list, call, a sampling tool, an elicitation tool, a
// resource update (go-sdk upstreams) and a tool list change. The go-sdk's
// clients run the same matrix in TestProtocolMatrix.
func TestTypeScriptClientMatrix(t *testing.T) {
	for _, face := range []string{"stateful", "stateless"} {
		for _, upstream := range []string{"2025-11-25", statelessVersion, "typescript"} {
			for _, client := range []string{"legacy", statelessVersion} {
				if face == "stateless" && client == "legacy" {
					continue // no session: nothing can reach it outside a request
				}
				t.Run(fmt.Sprintf("face=%s/upstream=%s/client=%s", face, upstream, client), func(t *testing.T) {
					leakCheck(t)
					tsClientCell(t, face == "stateless", upstream, client)
				})
			}
		}
	}
}

func tsClientCell(t *testing.T, statelessFace bool, upstream, client string) {
	var hopts []HTTPOption
	if statelessFace {
		hopts = append(hopts, WithStateless())
	}
	ctx := context.Background()
	var gw *testGateway
	var update, change func()
	subscribed := make(chan string, 8)
	if upstream == "typescript" {
		gw = startGateway(t, peers.StartTSServerHTTP(t), []mcp.Option{mcp.OptServerRequests(mcp.ServerRequests{Forward: true})}, nil, hopts)
		change = func() {
			cs, err := connectHTTPVersion(t, gw.url, "", nil)
			mustNotErr(t, err)
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "add_tool", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("add_tool: %v %+v", err, res)
			}
		}
	} else {
		o := testserver.Options{Server: &sdk.ServerOptions{
			SubscribeHandler:   func(context.Context, *sdk.SubscribeRequest) error { return nil },
			UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
			Logger:             slog.New(&messageHandler{msg: "resource subscribed", key: "uri", ch: subscribed}),
		}}
		if upstream < statelessVersion {
			o.Server.SupportedProtocolVersions = []string{upstream}
		}
		up := newServer(t, o)
		addRequestingTools(up, upstream >= statelessVersion)
		m := testserver.NewMemory(up.Server)
		t.Cleanup(m.Close)
		gw = startGateway(t, "memory://up", []mcp.Option{mcp.OptDialer(m.Dial), mcp.OptServerRequests(mcp.ServerRequests{Forward: true})}, nil, hopts)
		update = func() {
			if got := recvString(t, subscribed); got != testserver.TextURI {
				t.Errorf("the upstream subscribed to %q", got)
			}
			mustNotErr(t, up.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: testserver.TextURI}))
		}
		change = func() {
			up.AddTool(mustTool("late"), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late"}}}, nil
			})
		}
	}

	ts := peers.StartTSClient(t, gw.url, client, update != nil)
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
	if update != nil {
		update()
		if ev = ts.Next(t); ev.Event != "updated" || ev.URI != testserver.TextURI {
			t.Errorf("want the update of %s: %+v", testserver.TextURI, ev)
		}
	}
	change()
	if ev = ts.Next(t); ev.Event != "changed" {
		t.Errorf("want the tool list change: %+v", ev)
	}
	ts.Wait(t)
}

// tsCall is a call the TypeScript client makes and the text it should get.
type tsCall struct{ name, text string }

package main

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectGatewaySession connects a go-sdk client to the gateway with the
// initialize handshake (protocol 2025-11-25), so that it has a session: a
// client of the go-sdk's default 2026-07-28 has none.
func connectGatewaySession(t *testing.T, g *gatewayProcess) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "gateway-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: g.mcpURL}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/peers"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// TestGatewayServerEndpoints: with server_endpoints, each upstream is
// also served alone at <path>/<name>, under its own names, behind the
// same authentication: an MCP Apps host connected there reads the
// server's view and calls its app-only tool, and another upstream's
// app-only tool is unknown there; a name that is no upstream's, or a
// path below one, is not found.
func TestGatewayServerEndpoints(t *testing.T) {
	g := startEndpointsGateway(t, true)
	ctx := context.Background()

	if status, _ := postStatus(t, g.mcpURL+"/b", ""); status != http.StatusUnauthorized {
		t.Errorf("b's endpoint without a token: %d, want 401", status)
	}
	for _, path := range []string{"/c", "/b/x", "/"} {
		if status, _ := postStatus(t, g.mcpURL+path, tokenA); status != http.StatusNotFound {
			t.Errorf("%s%s: %d, want 404", g.mcpURL, path, status)
		}
	}

	all, err := connectURLWithToken(t, g.mcpURL, tokenA)
	if err != nil {
		t.Fatal(err)
	}
	b, err := connectURLWithToken(t, g.mcpURL+"/b", tokenA)
	if err != nil {
		t.Fatal(err)
	}
	if name := b.InitializeResult().ServerInfo.Name; name != "b" {
		t.Errorf("b's endpoint names itself %q", name)
	}
	var want []string
	for _, n := range toolNames(t, all) {
		if rest, ok := strings.CutPrefix(n, "b_"); ok {
			want = append(want, rest)
		}
	}
	if got := toolNames(t, b); len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("b's endpoint lists %v, want b's own tools %v", got, want)
	}
	rr, err := b.ReadResource(ctx, &sdk.ReadResourceParams{URI: testserver.MetaViewURI})
	if err != nil {
		t.Fatalf("reading b's view at b's endpoint: %v", err)
	}
	if c := rr.Contents[0]; c.Text != testserver.MetaViewHTML || c.Meta == nil {
		t.Errorf("b's view: %q, _meta %v", c.Text, c.Meta)
	}
	if r, err := b.CallTool(ctx, &sdk.CallToolParams{Name: "app_only", Arguments: map[string]any{}}); err != nil || r.IsError {
		t.Errorf("b's app-only tool at b's endpoint: %v %v", r, err)
	}
	for _, name := range []string{"a_app_only", "a_app_view"} {
		if r, err := b.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{}}); err == nil && !r.IsError {
			t.Errorf("%s, another upstream's, was called at b's endpoint", name)
		}
	}
	if r, err := all.CallTool(ctx, &sdk.CallToolParams{Name: "a_app_only", Arguments: map[string]any{}}); err != nil || r.IsError {
		t.Errorf("a_app_only at the endpoint of all: %v %v", r, err)
	}
}

// connectURLWithToken connects an MCP client to url with a bearer token.
func connectURLWithToken(t *testing.T, url, token string) (*sdk.ClientSession, error) {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "gateway-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport(token)}, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// TestGatewayServerEndpointsAppsHost: a host written with the MCP Apps
// SDK (@modelcontextprotocol/ext-apps' AppBridge, and its App as the
// view) connected to an upstream's own endpoint sees the server's tools
// with their views and visibility, reads the view with its sandbox
// metadata, and its view calls the server's app-only tool; the view's
// call of another upstream's app-only tool fails.
func TestGatewayServerEndpointsAppsHost(t *testing.T) {
	g := startEndpointsGateway(t, false)
	events := peers.RunAppsHost(t, g.mcpURL+"/b", tokenA, "a_app_only")
	if len(events) != 4 {
		t.Fatalf("the host printed %d lines, want 4: %+v", len(events), events)
	}
	tools, view, own, foreign := events[0], events[1], events[2], events[3]
	if !slices.Equal(tools.AppOnly, []string{"app_only"}) || tools.Views["app_view"] != testserver.MetaViewURI || slices.Contains(tools.Names, "a_app_only") {
		t.Errorf("tools at b's endpoint: %+v", tools)
	}
	if view.URI != testserver.MetaViewURI || view.MIMEType != "text/html;profile=mcp-app" || view.UI == nil {
		t.Errorf("b's view: %+v", view)
	}
	if own.Name != "app_only" || !own.OK {
		t.Errorf("the view's call of its server's app-only tool: %+v", own)
	}
	if foreign.Name != "a_app_only" || foreign.OK {
		t.Errorf("the view's call of another server's app-only tool: %+v", foreign)
	}
}

// startEndpointsGateway runs the gateway with server_endpoints and bearer
// token tokenA in front of two MCP Apps servers, a and b, that list the
// same view.
func startEndpointsGateway(t *testing.T, qualified bool) *gatewayProcess {
	t.Helper()
	urls := twoAppServers(t)
	t.Setenv("ENDPOINTS_TEST_TOKENS", tokenA)
	g := startGateway(t, writeConfig(t, t.TempDir(), fmt.Sprintf(`
listen: 127.0.0.1:0
qualified_names: %t
server_endpoints: true
auth:
  bearer: {tokens_env: ENDPOINTS_TEST_TOKENS}
servers:
  - name: a
    url: %s
  - name: b
    url: %s
`, qualified, urls[0], urls[1])))
	g.waitLog(t, 0, upstreamReady("a"))
	g.waitLog(t, 0, upstreamReady("b"))
	return g
}

// TestGatewayServerEndpointsPerClient: a client of one upstream's
// endpoint gets a per_client session (a process) of that upstream only;
// another per_client upstream, which it cannot call there, starts no
// process for it.
func TestGatewayServerEndpointsPerClient(t *testing.T) {
	node, args := peers.FilesystemStdio(t)
	command1, _ := json.Marshal(append([]string{node}, append(args, t.TempDir())...))
	command2, _ := json.Marshal(append([]string{node}, append(args, t.TempDir())...))
	g := startGateway(t, writeConfig(t, t.TempDir(), fmt.Sprintf(`listen: 127.0.0.1:0
server_endpoints: true
servers:
  - name: fs1
    command: %s
    upstream_sessions: per_client
    timeouts: {connect: 60s}
  - name: fs2
    command: %s
    upstream_sessions: per_client
    timeouts: {connect: 60s}
`, command1, command2)))
	g.waitLog(t, 0, upstreamReady("fs1"))
	g.waitLog(t, 0, upstreamReady("fs2"))

	c := sdk.NewClient(&sdk.Implementation{Name: "one", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: g.mcpURL + "/fs2"}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if _, err := callTextErr(cs, "list_allowed_directories", map[string]any{}); err != nil {
		t.Fatalf("fs2's tool at fs2's endpoint: %v", err)
	}
	if _, opened, ok := g.clientSessions(t, "fs2"); !ok || opened != 1 {
		t.Errorf("fs2: %d client sessions opened (%v), want 1", opened, ok)
	}
	if _, opened, ok := g.clientSessions(t, "fs1"); !ok || opened != 0 {
		t.Errorf("fs1: %d client sessions opened (%v) for a client of fs2's endpoint, want 0", opened, ok)
	}
	if n := children(t, g.cmd.Process.Pid); n != 3 {
		t.Errorf("the gateway has %d child processes, want 3 (the two shared servers and the client's fs2)", n)
	}
}

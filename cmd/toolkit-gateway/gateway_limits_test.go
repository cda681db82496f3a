//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// TestGatewayMaxResultBytes: an upstream's max_result_bytes reaches its
// connector: a result within the limit passes through the gateway, a
// larger one becomes a tool error naming the limit.
func TestGatewayMaxResultBytes(t *testing.T) {
	s := testserver.New(testserver.Options{})
	t.Cleanup(s.Close)
	up := testserver.ServeHTTP(t, s.Server, testserver.Stateful)
	config := writeConfig(t, t.TempDir(), fmt.Sprintf(`
listen: 127.0.0.1:0
qualified_names: true
servers:
  - name: up
    url: %s
    max_concurrency: 2
    max_result_bytes: 100
`, up.URL))
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("up"))
	cs := connectGateway(t, g)
	if names := toolNames(t, cs); !slices.Contains(names, "up_big") {
		t.Fatalf("tools = %v", names)
	}
	call := func(size int) *sdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "up_big", Arguments: map[string]any{"size": size}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := call(100); res.IsError || len(res.Content) != 1 || len(res.Content[0].(*sdk.TextContent).Text) != 100 {
		t.Errorf("result of 100 bytes: %+v", res)
	}
	res := call(5000)
	if !res.IsError || len(res.Content) == 0 {
		t.Fatalf("result of 5000 bytes: %+v, want a tool error", res)
	}
	if text, _ := res.Content[0].(*sdk.TextContent); text == nil || !strings.Contains(text.Text, "limit of 100 bytes") {
		t.Errorf("error %+v does not name the limit", res.Content[0])
	}
}

// TestGatewayMaxSessions: max_sessions reaches the HTTP face: with one
// session open, the next initialize is refused with 503 and Retry-After,
// and closing the first makes room.
func TestGatewayMaxSessions(t *testing.T) {
	config := writeConfig(t, t.TempDir(), "listen: 127.0.0.1:0\nmax_sessions: 1\nidle_timeout: 1m\nread_timeout: 10s\n")
	g := startGateway(t, config)
	first := connectGatewaySession(t, g)
	initialize := func() *http.Response {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
		req, err := http.NewRequest(http.MethodPost, g.mcpURL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	if resp := initialize(); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("second session: %s, Retry-After %q; want 503 with Retry-After", resp.Status, resp.Header.Get("Retry-After"))
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if resp := initialize(); resp.StatusCode != http.StatusOK {
		t.Errorf("after the first session closed: %s, want 200", resp.Status)
	}
}

// TestGatewayMaxListItems: an upstream's max_list_items reaches its
// connector: the gateway keeps only that many of the upstream's tools.
func TestGatewayMaxListItems(t *testing.T) {
	s := testserver.New(testserver.Options{})
	t.Cleanup(s.Close)
	up := testserver.ServeHTTP(t, s.Server, testserver.Stateful)
	config := writeConfig(t, t.TempDir(), fmt.Sprintf(`
listen: 127.0.0.1:0
qualified_names: true
servers:
  - name: up
    url: %s
    max_list_items: 2
    max_list_bytes: 1048576
`, up.URL))
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("up"))
	cs := connectGateway(t, g)
	n := 0
	for _, name := range toolNames(t, cs) {
		if strings.HasPrefix(name, "up_") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("the gateway serves %d of the upstream's tools, want 2", n)
	}
}

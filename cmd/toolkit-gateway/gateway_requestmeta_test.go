package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// TestGatewayRequestMeta runs the gateway in front of a server on a shared
// upstream session and one on per-client sessions: the `_meta` key of a
// client's tools/call reaches each server unchanged, and a huge `_meta` is
// refused with invalid params, reaching neither.
func TestGatewayRequestMeta(t *testing.T) {
	var urls [2]string
	for i := range urls {
		up := testserver.New(testserver.Options{Name: fmt.Sprint("meta", i)})
		up.AddRequestMetaItems()
		t.Cleanup(up.Close)
		urls[i] = testserver.ServeHTTP(t, up.Server, testserver.Stateful).URL
	}
	config := writeConfig(t, t.TempDir(), fmt.Sprintf(`
listen: 127.0.0.1:0
qualified_names: true
servers:
  - name: a
    url: %s
  - name: b
    url: %s
    upstream_sessions: per_client
`, urls[0], urls[1]))
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("a"))
	g.waitLog(t, 0, upstreamReady("b"))
	cs := connectGatewaySession(t, g)
	ctx := context.Background()
	for _, ns := range []string{"a", "b"} {
		cr, err := cs.CallTool(ctx, &sdk.CallToolParams{
			Meta: sdk.Meta{"x.example/app": map[string]any{"view": "v1", "n": 2}},
			Name: ns + "_request_meta", Arguments: map[string]any{},
		})
		if err != nil {
			t.Fatal(err)
		}
		var seen map[string]any
		got := cr.Content[0].(*sdk.TextContent).Text
		if err := json.Unmarshal([]byte(got), &seen); err != nil {
			t.Fatalf("server %s saw %s: %v", ns, got, err)
		}
		b, _ := json.Marshal(seen["x.example/app"])
		if string(b) != `{"n":2,"view":"v1"}` {
			t.Errorf("server %s saw the _meta %s, want x.example/app", ns, got)
		}

		_, err = cs.CallTool(ctx, &sdk.CallToolParams{
			Meta: sdk.Meta{"x.example/huge": strings.Repeat("x", 1<<20)},
			Name: ns + "_request_meta", Arguments: map[string]any{},
		})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, "_meta is larger") {
			t.Errorf("server %s: a huge _meta: %v, want invalid params", ns, err)
		}
	}
}

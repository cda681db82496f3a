package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/mcp/internal/wire"
)

// The `_meta` of a client's tools/call, prompts/get and resources/read
// reaches the upstream with the gateway's request, its data keys
// unchanged and its hop keys (progress token, trace context) the
// gateway's own, for clients of either protocol generation, through
// shared and per-client upstream sessions. A `_meta` too large or too
// deep is refused with invalid params.
func TestRequestMetaThroughGateway(t *testing.T) {
	leakCheck(t)
	up := newServer(t, testserver.Options{})
	up.AddRequestMetaItems()
	upURL := testserver.ServeHTTP(t, up.Server, testserver.Stateful).URL
	shared := startGateway(t, upURL, nil, nil, nil)
	// Per-client sessions are kept for clients with a session (2025-11-25)
	// or a principal.
	perClient := startGateway(t, upURL, []mcp.Option{mcp.OptPerClient(mcp.ClientSessionLimits{})},
		[]Option{WithClientSessions(observerFunc(func(context.Context, bridge.Client) {}))}, nil)
	const data = `{"x.example/k":{"a":[1,"two",true]},"y":"z"}`
	for _, tc := range []struct {
		name, url, version string
	}{
		{"shared", shared.url, "2025-11-25"},
		{"shared", shared.url, "2026-07-28"},
		{"perclient", perClient.url, "2025-11-25"},
	} {
		t.Run(tc.name+"/"+tc.version, func(t *testing.T) {
			cs, err := connectHTTPVersion(t, tc.url, tc.version, nil)
			mustNotErr(t, err)
			ctx := context.Background()
			meta := func() sdk.Meta {
				var m sdk.Meta
				mustNotErr(t, json.Unmarshal([]byte(data), &m))
				m["traceparent"] = "00-the-client's"
				m["tracestate"] = "the-client's"
				return m
			}
			seen := func(what, got string) {
				t.Helper()
				var sm map[string]any
				if err := json.Unmarshal([]byte(got), &sm); err != nil {
					t.Fatalf("%s: the upstream saw %s: %v", what, got, err)
				}
				if sm["traceparent"] != nil || sm["tracestate"] != nil {
					t.Errorf("%s: the client's hop keys reached the upstream: %s", what, got)
				}
				b, _ := json.Marshal(map[string]any{"x.example/k": sm["x.example/k"], "y": sm["y"]})
				if string(b) != data {
					t.Errorf("%s: the upstream saw %s, want the keys of %s", what, got, data)
				}
			}

			cr, err := cs.CallTool(ctx, &sdk.CallToolParams{Meta: meta(), Name: "request_meta", Arguments: map[string]any{}})
			mustNotErr(t, err)
			seen("tools/call", cr.Content[0].(*sdk.TextContent).Text)
			pr, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Meta: meta(), Name: "request_meta"})
			mustNotErr(t, err)
			seen("prompts/get", pr.Messages[0].Content.(*sdk.TextContent).Text)
			rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{Meta: meta(), URI: testserver.RequestMetaURI})
			mustNotErr(t, err)
			seen("resources/read", rr.Contents[0].Text)

			cr, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "request_meta", Arguments: map[string]any{}})
			mustNotErr(t, err)
			if got := cr.Content[0].(*sdk.TextContent).Text; strings.Contains(got, "x.example") {
				t.Errorf("a call without _meta sent %s", got)
			}

			for what, m := range map[string]sdk.Meta{
				"huge": {"k": strings.Repeat("x", wire.MaxMetaBytes)},
				"deep": deepMeta(wire.MaxMetaDepth + 1),
			} {
				for _, send := range []func() error{
					func() error {
						_, err := cs.CallTool(ctx, &sdk.CallToolParams{Meta: m, Name: "request_meta", Arguments: map[string]any{}})
						return err
					},
					func() error {
						_, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Meta: m, Name: "request_meta"})
						return err
					},
					func() error {
						_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{Meta: m, URI: testserver.RequestMetaURI})
						return err
					},
				} {
					var we *jsonrpc.Error
					if err := send(); !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, "request _meta") {
						t.Errorf("a %s _meta: %v, want invalid params", what, err)
					}
				}
			}
			mustNotErr(t, cs.Close())
		})
	}
}

// deepMeta returns a `_meta` nested n levels deep.
func deepMeta(n int) sdk.Meta {
	var v any = "bottom"
	for range n - 1 {
		v = map[string]any{"k": v}
	}
	return sdk.Meta{"k": v}
}

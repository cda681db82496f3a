package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/prompt"
)

// The `_meta` of a caller's request (bridge.WithRequestMeta) reaches the
// server with the connector's tools/call, prompts/get and resources/read,
// with both protocol generations: its data keys unchanged, its hop keys
// (progress token, trace context) not the caller's. A `_meta` beyond the
// bounds fails the call with ErrBadParameter and is not sent.
func TestRequestMetaToServer(t *testing.T) {
	const data = `{"x.example/k":{"a":[1,"two",true]},"y":"z"}`
	var m map[string]any
	mustNotErr(t, json.Unmarshal([]byte(data), &m))
	m["progressToken"] = "the-client's"
	m["traceparent"] = "00-the-client's"
	m[sdk.MetaKeyClientInfo] = "the-client's"
	for _, tc := range []struct {
		name, proto string
		mode        testserver.Mode
	}{
		{"stateful", StatefulProtocolVersion, testserver.Stateful},
		{"stateless", StatelessProtocolVersion, testserver.Stateless},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			srv := newServer(t, testserver.Options{})
			srv.AddRequestMetaItems()
			r := start(t, testserver.ServeHTTP(t, srv.Server, tc.mode).URL, false, OptProtocolVersion(tc.proto))
			ctx := bridge.WithRequestMeta(context.Background(), m)
			seen := func(what, got string) {
				t.Helper()
				var sm map[string]any
				if err := json.Unmarshal([]byte(got), &sm); err != nil {
					t.Fatalf("%s: the server saw %s: %v", what, got, err)
				}
				if sm["progressToken"] == "the-client's" || sm["traceparent"] != nil || sm[sdk.MetaKeyClientInfo] == "the-client's" {
					t.Errorf("%s: the caller's hop keys reached the server: %s", what, got)
				}
				b, _ := json.Marshal(map[string]any{"x.example/k": sm["x.example/k"], "y": sm["y"]})
				if string(b) != data {
					t.Errorf("%s: the server saw %s, want the keys of %s", what, got, data)
				}
			}

			out, err := call(t, ctx, r.Connector, "request_meta", `{}`)
			mustNotErr(t, err)
			seen("tools/call", read(t, out))

			prompts, err := r.ListPrompts(ctx)
			mustNotErr(t, err)
			var rp prompt.Renderer
			for _, p := range prompts {
				if p.Name() == "request_meta" {
					rp, _ = p.(prompt.Renderer)
				}
			}
			if rp == nil {
				t.Fatal("no prompt request_meta")
			}
			rendered, err := rp.Render(ctx, nil)
			mustNotErr(t, err)
			seen("prompts/get", read(t, rendered.Messages[0].Content))

			resources, err := r.ListResources(ctx)
			mustNotErr(t, err)
			var res toolkit.Resource
			for _, x := range resources {
				if x.URI() == testserver.RequestMetaURI {
					res = x
				}
			}
			if res == nil {
				t.Fatal("no resource " + testserver.RequestMetaURI)
			}
			b, err := res.Read(ctx)
			mustNotErr(t, err)
			seen("resources/read", string(b))

			out, err = call(t, context.Background(), r.Connector, "request_meta", `{}`)
			mustNotErr(t, err)
			if got := read(t, out); strings.Contains(got, "x.example") {
				t.Errorf("a call without a request _meta sent %s", got)
			}

			huge := bridge.WithRequestMeta(context.Background(), map[string]any{"k": strings.Repeat("x", maxMetaBytes)})
			if _, err := call(t, huge, r.Connector, "request_meta", `{}`); !errors.Is(err, toolkit.ErrBadParameter) {
				t.Errorf("a huge request _meta: %v, want ErrBadParameter", err)
			}
			deep := bridge.WithRequestMeta(context.Background(), deepMeta(maxMetaDepth+1))
			if _, err := call(t, deep, r.Connector, "request_meta", `{}`); !errors.Is(err, toolkit.ErrBadParameter) {
				t.Errorf("a deep request _meta: %v, want ErrBadParameter", err)
			}
			mustNotErr(t, r.stop(t))
		})
	}
}

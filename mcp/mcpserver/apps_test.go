package mcpserver

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp"
)

// twoAppsGateway serves a toolkit with two MCP Apps upstreams, in
// namespaces "a" and "b", that list the same ui:// resource; it returns
// the URL of the served endpoint.
func twoAppsGateway(t *testing.T, opts ...Option) string {
	t.Helper()
	d := mustDelegate(t, mcp.OptLogger(quietLogger()))
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	mustNotErr(t, err)
	srv, err := New(tk, nil, opts...)
	mustNotErr(t, err)
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tk.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		mustNotErr(t, <-runDone)
	})
	for _, ns := range []string{"a", "b"} {
		up := newServer(t, testserver.Options{Name: ns})
		up.AddMetaItems()
		mustNotErr(t, tk.AddConnectorNS(ns, testserver.ServeHTTP(t, up.Server, testserver.Stateful).URL))
	}
	wctx, wcancel := context.WithTimeout(ctx, waitLimit)
	defer wcancel()
	_, err = tk.WaitConnectors(wctx)
	mustNotErr(t, err)
	tk.WaitEvents()
	h, err := srv.Handler()
	mustNotErr(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// When the gateway serves an upstream's ui:// resource under another URI
// (qualified names, or two servers listing the same URI), each app tool's
// `_meta.ui.resourceUri`, and its legacy `_meta["ui/resourceUri"]` when it
// has one, names the URI the gateway serves for its own server's resource,
// which reads; the rest of the `_meta` is kept.
func TestAppResourceURIRewritten(t *testing.T) {
	leakCheck(t)
	for _, tc := range []struct {
		name string
		opts []Option
		want map[string]string // exposed tool name -> resourceUri
	}{
		{"collision", nil, map[string]string{
			"app_view":   testserver.MetaViewURI,
			"b_app_view": testserver.MetaViewURI + "#b",
		}},
		{"qualified", []Option{WithQualifiedNames()}, map[string]string{
			"a_app_view": testserver.MetaViewURI + "#a",
			"b_app_view": testserver.MetaViewURI + "#b",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := connectHTTPVersion(t, twoAppsGateway(t, tc.opts...), "2025-11-25", nil)
			mustNotErr(t, err)
			ctx := context.Background()
			tools, err := cs.ListTools(ctx, nil)
			mustNotErr(t, err)
			got := map[string]*sdk.Tool{}
			for _, tl := range tools.Tools {
				got[tl.Name] = tl
			}
			for name, want := range tc.want {
				tl := got[name]
				if tl == nil {
					t.Fatalf("no tool %q among %d", name, len(tools.Tools))
				}
				_, uri, _ := uiResourceURI(tl.Meta)
				if uri != want {
					t.Errorf("%s: resourceUri %q, want %q", name, uri, want)
				}
				if tl.Meta["x.example/tag"] != "tool" {
					t.Errorf("%s: _meta %v lost its other keys", name, tl.Meta)
				}
				only := got[strings.Replace(name, "app_view", "app_only", 1)]
				if _, onlyURI, _ := uiResourceURI(only.Meta); onlyURI != want || only.Meta[legacyResourceURIKey] != want {
					t.Errorf("%s: app-only tool's _meta %v, want both view URIs %q", name, only.Meta, want)
				}
				rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
				if err != nil {
					t.Errorf("%s: reading %s: %v", name, uri, err)
					continue
				}
				if c := rr.Contents[0]; c.Text != testserver.MetaViewHTML || c.Meta == nil {
					t.Errorf("%s: %s read %q, _meta %v", name, uri, c.Text, c.Meta)
				}
			}
		})
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// TestGatewayApps runs the gateway in front of two MCP Apps servers that
// list the same ui:// resource, with qualified names: each app tool keeps
// its `_meta` and names the URI the gateway serves for its own server's
// view, which reads with the contents' `_meta`; call results keep theirs;
// the app-only tool is listed to the client (whose host keeps it from its
// model); the gateway advertises the extensions its upstreams declare,
// and declares to a server the extensions its configuration names.
func TestGatewayApps(t *testing.T) {
	urls := twoAppServers(t)
	config := writeConfig(t, t.TempDir(), fmt.Sprintf(`
listen: 127.0.0.1:0
qualified_names: true
servers:
  - name: a
    url: %s
    extensions:
      io.modelcontextprotocol/ui: {mimeTypes: [text/html;profile=mcp-app]}
  - name: b
    url: %s
`, urls[0], urls[1]))
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("a"))
	g.waitLog(t, 0, upstreamReady("b"))
	cs := connectGateway(t, g)
	ctx := context.Background()

	ext, err := json.Marshal(cs.InitializeResult().Capabilities.Extensions)
	if err != nil || string(ext) != testserver.MetaServerExtensions {
		t.Errorf("advertised extensions %s (%v), want %s", ext, err, testserver.MetaServerExtensions)
	}
	for ns, want := range map[string]string{"a": `{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`, "b": "null"} {
		cr, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: ns + "_client_extensions", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		if got := cr.Content[0].(*sdk.TextContent).Text; got != want {
			t.Errorf("server %s saw the extensions %s, want %s", ns, got, want)
		}
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*sdk.Tool{}
	for _, tl := range res.Tools {
		tools[tl.Name] = tl
	}
	for _, ns := range []string{"a", "b"} {
		tl := tools[ns+"_app_view"]
		if tl == nil {
			t.Fatalf("no tool %s_app_view", ns)
		}
		ui, _ := tl.Meta["ui"].(map[string]any)
		uri, _ := ui["resourceUri"].(string)
		if want := testserver.MetaViewURI + "#" + ns; uri != want || tl.Meta["x.example/tag"] != "tool" {
			t.Errorf("%s_app_view: _meta %v, want resourceUri %s", ns, tl.Meta, want)
		}
		rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("reading %s: %v", uri, err)
		}
		if c := rr.Contents[0]; c.Text != testserver.MetaViewHTML || c.MIMEType != testserver.MetaAppMIME || c.Meta["ui"] == nil {
			t.Errorf("%s read %q (%s), _meta %v", uri, c.Text, c.MIMEType, c.Meta)
		}
		if tools[ns+"_app_only"] == nil {
			t.Errorf("the app-only tool of %s is not listed to the client", ns)
		}
		cr, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: ns + "_app_view", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		if cr.Meta["x.example/tag"] != "result" || cr.Meta["ui"] == nil {
			t.Errorf("%s_app_view result _meta %v", ns, cr.Meta)
		}
	}
}

// twoAppServers serves two MCP Apps test servers, apps0 and apps1, that
// list the same view, and returns their URLs.
func twoAppServers(t *testing.T) [2]string {
	t.Helper()
	var urls [2]string
	for i := range urls {
		up := testserver.New(testserver.Options{Name: fmt.Sprint("apps", i), Server: testserver.MetaOptions()})
		up.AddMetaItems()
		t.Cleanup(up.Close)
		urls[i] = testserver.ServeHTTP(t, up.Server, testserver.Stateful).URL
	}
	return urls
}

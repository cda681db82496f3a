package mcp_test

import (
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp"
)

// With OptPerClient each client's upstream session declares the
// extensions the client declared to the gateway (with the connector's
// own, OptExtensions, the client's winning); a client that declares none
// gets the connector's alone. The shared session speaks for no client.
func TestExtensionsPerClient(t *testing.T) {
	checkLeaks(t)
	up := testserver.New(testserver.Options{Server: testserver.MetaOptions()})
	up.AddMetaItems()
	t.Cleanup(up.Close)
	url := testserver.ServeHTTP(t, up.Server, testserver.Stateful).URL
	g := startPerClientGateway(t, 4, url, mcp.OptExtensions(map[string]any{
		"x.example/gateway":          nil,
		"io.modelcontextprotocol/ui": map[string]any{"mimeTypes": []any{"text/plain"}},
	}))
	apps := &sdk.ClientCapabilities{}
	apps.AddExtension("io.modelcontextprotocol/ui", map[string]any{"mimeTypes": []any{"text/html;profile=mcp-app"}})
	a := g.connect(t, sdk.NewClient(&sdk.Implementation{Name: "apps", Version: "1"}, &sdk.ClientOptions{Capabilities: apps}))
	b := g.connect(t, sdk.NewClient(&sdk.Implementation{Name: "plain", Version: "1"}, nil))
	for cs, want := range map[*sdk.ClientSession]string{
		a: `{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]},"x.example/gateway":{}}`,
		b: `{"io.modelcontextprotocol/ui":{"mimeTypes":["text/plain"]},"x.example/gateway":{}}`,
	} {
		if got, err := callText(t, cs, "client_extensions"); err != nil || got != want {
			t.Errorf("the upstream saw %s (%v), want %s", got, err, want)
		}
	}
}

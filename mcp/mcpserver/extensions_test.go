package mcpserver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// The server face advertises the extensions its sources provide: those of
// WithExtensions and those its upstreams declare, to clients of both
// protocol generations (initialize and server/discover). A shared upstream
// session does not declare a client's extensions on its behalf.
func TestExtensionsAdvertised(t *testing.T) {
	leakCheck(t)
	up := newServer(t, testserver.Options{Server: testserver.MetaOptions()})
	up.AddMetaItems()
	upURL := testserver.ServeHTTP(t, up.Server, testserver.Stateful).URL
	opts := []Option{WithExtensions(map[string]any{"x.example/builtin": nil})}
	stateful := startGateway(t, upURL, nil, opts, nil)
	stateless := startGateway(t, upURL, nil, opts, []HTTPOption{WithStateless()})
	const want = `{"io.modelcontextprotocol/ui":{"version":"test"},"x.example/builtin":{}}`
	apps := &sdk.ClientCapabilities{}
	apps.AddExtension("io.modelcontextprotocol/ui", nil)
	for _, tc := range []struct{ name, url, version string }{
		{"stateful", stateful.url, "2025-11-25"},
		{"stateful", stateful.url, "2026-07-28"},
		{"stateless", stateless.url, "2026-07-28"},
	} {
		t.Run(tc.name+"/"+tc.version, func(t *testing.T) {
			cs, err := connectHTTPVersion(t, tc.url, tc.version, &sdk.ClientOptions{Capabilities: apps})
			mustNotErr(t, err)
			b, err := json.Marshal(cs.InitializeResult().Capabilities.Extensions)
			mustNotErr(t, err)
			if string(b) != want {
				t.Errorf("advertised %s, want %s", b, want)
			}
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "client_extensions", Arguments: map[string]any{}})
			mustNotErr(t, err)
			if got := resultText(t, res); got != "null" {
				t.Errorf("the shared upstream session declared %s", got)
			}
		})
	}
}

// WithExtensions refuses settings that are not an object.
func TestWithExtensionsRefusesNonObject(t *testing.T) {
	tk, err := toolkit.New()
	mustNotErr(t, err)
	_, err = New(tk, nil, WithExtensions(map[string]any{"x.example/a": 3}))
	if !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "WithExtensions") {
		t.Errorf("New: %v, want an error naming WithExtensions", err)
	}
}

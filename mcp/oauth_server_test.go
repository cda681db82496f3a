package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// protectedServer is an MCP server with an echo tool behind bearer tokens,
// on a test server whose mux each OAuth test completes with the
// authorization server it needs. Only the tokens it was granted pass.
type protectedServer struct {
	*httptest.Server
	mux *http.ServeMux
	mcp *sdk.Server

	hits atomic.Int32 // requests received

	tokMu  sync.Mutex
	valid  map[string]bool
	issuer *protectedServer // when set, the tokens it granted pass instead
}

func newProtectedServer(t *testing.T, name string) *protectedServer {
	t.Helper()
	s := &protectedServer{mux: http.NewServeMux(), valid: map[string]bool{}}
	s.mcp = sdk.NewServer(&sdk.Implementation{Name: name, Version: "1"}, nil)
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest, map[string]any) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hi"}}}, nil, nil
		})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// serve serves the MCP server at path (over the legacy SSE transport with
// sse) behind bearer tokens. A non-nil prm is published as the path's
// protected resource metadata (at its path-based well-known location, and
// named in the 401 challenges), with Resource set to the path's URL and
// each authorization server given as a path on this server.
func (s *protectedServer) serve(path string, sse bool, prm *oauthex.ProtectedResourceMetadata) {
	var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.mcp }, nil)
	if sse {
		h = sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s.mcp }, nil)
	}
	opts := &auth.RequireBearerTokenOptions{}
	if prm != nil {
		meta := *prm
		meta.Resource = s.URL + path
		meta.AuthorizationServers = nil
		for _, as := range prm.AuthorizationServers {
			meta.AuthorizationServers = append(meta.AuthorizationServers, s.URL+as)
		}
		opts.ResourceMetadataURL = s.URL + "/.well-known/oauth-protected-resource" + path
		s.mux.Handle("/.well-known/oauth-protected-resource"+path, auth.ProtectedResourceMetadataHandler(&meta))
	}
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		if !s.granted(tok) {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	}
	s.mux.Handle(path, auth.RequireBearerToken(verify, opts)(h))
}

// grant makes the MCP server accept tok.
func (s *protectedServer) grant(tok string) {
	s.tokMu.Lock()
	defer s.tokMu.Unlock()
	s.valid[tok] = true
}

// granted reports whether the MCP server accepts tok.
func (s *protectedServer) granted(tok string) bool {
	if s.issuer != nil {
		return s.issuer.granted(tok)
	}
	s.tokMu.Lock()
	defer s.tokMu.Unlock()
	return s.valid[tok]
}

// revoke makes every access token invalid.
func (s *protectedServer) revoke() {
	s.tokMu.Lock()
	defer s.tokMu.Unlock()
	clear(s.valid)
}

// authCodeMetadata is the metadata of an authorization server with the
// authorization code grant, PKCE and dynamic registration of public
// clients, its endpoints under base.
func authCodeMetadata(issuer, base string) map[string]any {
	return map[string]any{
		"issuer":                                issuer,
		"authorization_endpoint":                base + "/authorize",
		"token_endpoint":                        base + "/token",
		"registration_endpoint":                 base + "/register",
		"response_types_supported":              []string{"code"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"},
	}
}

// registerPublicClient answers a dynamic client registration with the
// public client "client-1".
func registerPublicClient(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": "client-1", "token_endpoint_auth_method": "none"})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

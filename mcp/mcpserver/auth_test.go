package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/oauthtest"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// An MCP server as an OAuth resource server: 401 with the metadata URL,
// 403 insufficient_scope, the metadata at both well-known paths, and a
// client with a good token served.
func TestServerProtectedResource(t *testing.T) {
	leakCheck(t)
	iss := oauthtest.NewIssuer(t)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(funcTool("hello", func(context.Context, json.RawMessage) (any, error) { return "hi", nil }))})
	ln, err := listenLoopback(t)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	v, err := oauth.NewJWTVerifier(oauth.JWTConfig{JWKSURL: iss.JWKSURL(), Issuer: iss.URL, Audience: base + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	meta := &oauthex.ProtectedResourceMetadata{Resource: base + "/mcp", AuthorizationServers: []string{iss.URL}, ScopesSupported: []string{"mcp"}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- f.srv.ServeListener(ctx, ln,
			WithBearerAuth(v.Verify, &auth.RequireBearerTokenOptions{Scopes: []string{"mcp"}}),
			WithProtectedResource(meta))
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	prmURL := base + "/.well-known/oauth-protected-resource/mcp"

	post := func(token string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for _, tc := range []struct {
		name, token string
		code        int
		challenge   string
	}{
		{"no token", "", 401, `Bearer resource_metadata="` + prmURL + `", scope="mcp"`},
		{"bad token", "nope", 401, `Bearer resource_metadata="` + prmURL + `", scope="mcp", error="invalid_token"`},
		{"no scope", iss.Sign("rsa-1", iss.Claims(base+"/mcp", "other")), 403, `Bearer resource_metadata="` + prmURL + `", scope="mcp", error="insufficient_scope"`},
	} {
		resp := post(tc.token)
		if resp.StatusCode != tc.code || resp.Header.Get("WWW-Authenticate") != tc.challenge {
			t.Errorf("%s: %d %q, want %d %q", tc.name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tc.code, tc.challenge)
		}
	}

	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		var got oauthex.ProtectedResourceMetadata
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || got.Resource != base+"/mcp" || got.AuthorizationServers[0] != iss.URL || got.ScopesSupported[0] != "mcp" {
			t.Errorf("%s: %d %+v %v", p, resp.StatusCode, got, err)
		}
	}
	// The go-sdk client reads the metadata the same way.
	if got, err := oauthex.GetProtectedResourceMetadata(context.Background(), prmURL, base+"/mcp", http.DefaultClient); err != nil || got.AuthorizationServers[0] != iss.URL {
		t.Errorf("GetProtectedResourceMetadata: %+v, %v", got, err)
	}

	cs, err := connectHTTP(t, base+"/mcp", http.Header{"Authorization": {"Bearer " + iss.Sign("ec-1", iss.Claims(base+"/mcp", "mcp"))}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "hello"}); err != nil || resultText(t, res) != "hi" {
		t.Errorf("call: %v %v", res, err)
	}
	cs.Close()
}

// Without WithProtectedResource, a refusal still carries a challenge.
func TestServerBearerChallenge(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, nil)
	verifier := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return nil, auth.ErrInvalidToken
	}
	ts := f.serveHTTP(t, WithBearerAuth(verifier, nil))
	for token, want := range map[string]string{"": "Bearer", "x": `Bearer error="invalid_token"`} {
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(`{}`))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != want {
			t.Errorf("token %q: %d %q, want 401 %q", token, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
		}
	}
	if h, err := f.srv.Handler(WithProtectedResource(&oauthex.ProtectedResourceMetadata{Resource: "/mcp"})); h != nil || !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("relative resource: %v, %v; want no handler and ErrBadParameter", h, err)
	}
}

// An MCP endpoint at a metadata path is refused, not a panic of the mux.
func TestServeListenerMetadataPathTaken(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, nil)
	ln, err := listenLoopback(t)
	if err != nil {
		t.Fatal(err)
	}
	err = f.srv.ServeListener(context.Background(), ln, WithPath(oauth.ProtectedResourceMetadataPath),
		WithProtectedResource(&oauthex.ProtectedResourceMetadata{Resource: "https://x.example.com/mcp"}))
	if !errors.Is(err, toolkit.ErrBadParameter) {
		t.Fatalf("err = %v", err)
	}
}

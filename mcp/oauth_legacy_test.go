package mcp

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit/mcp/oauth"
)

// legacyServer is an MCP server behind bearer tokens whose authorization
// server lives under /oauth, with its metadata at the root well-known
// location naming issuer (a URL under the server when issuer is a path).
// With prm it also publishes protected resource metadata naming its origin
// as the authorization server, as a current server would.
type legacyTestServer struct {
	*protectedServer
	tokens  atomic.Int32
	metaHit atomic.Int32
}

func newLegacyTestServer(t *testing.T, issuer string, prm bool) *legacyTestServer {
	t.Helper()
	s := &legacyTestServer{protectedServer: newProtectedServer(t, "legacy")}
	if strings.HasPrefix(issuer, "/") {
		issuer = s.URL + issuer
	}
	var meta *oauthex.ProtectedResourceMetadata
	if prm {
		meta = &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{""}}
	}
	s.serve("/mcp", false, meta)
	s.mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		s.metaHit.Add(1)
		writeJSON(w, http.StatusOK, authCodeMetadata(issuer, s.URL+"/oauth"))
	})
	s.mux.HandleFunc("POST /oauth/register", registerPublicClient)
	s.mux.HandleFunc("POST /oauth/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.Form.Get("code") != "code-1" || r.Form.Get("code_verifier") == "" || r.Form.Get("resource") != s.URL+"/mcp" {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
			return
		}
		s.tokens.Add(1)
		s.grant("secret-access")
		writeJSON(w, http.StatusOK, map[string]any{"access_token": "secret-access", "token_type": "Bearer", "expires_in": 3600})
	})
	return s
}

// consentAt grants access at once when the authorization URL is the
// server's /oauth/authorize, with PKCE and the resource.
func (s *legacyTestServer) consentAt(asked *atomic.Int32) auth.AuthorizationCodeFetcher {
	return func(_ context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		asked.Add(1)
		u, err := url.Parse(args.URL)
		if err != nil || u.Path != "/oauth/authorize" || u.Query().Get("code_challenge_method") != "S256" || u.Query().Get("resource") == "" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.AuthorizationResult{Code: "code-1", State: u.Query().Get("state")}, nil
	}
}

// TestOAuthLegacyIssuer: a 2025-03-26 server (no protected resource
// metadata) whose root metadata names the issuer <origin>/oauth is
// authorized through that authorization server; a current server
// (protected resource metadata naming the origin) serving the same
// metadata is refused, as is a 2025-03-26 server naming an issuer on
// another origin.
func TestOAuthLegacyIssuer(t *testing.T) {
	for name, tc := range map[string]struct {
		issuer string
		prm    bool
		ok     bool
	}{
		"2025-03-26 issuer with a path":     {"/oauth", false, true},
		"current server, issuer mismatch":   {"/oauth", true, false},
		"2025-03-26 issuer on other origin": {"https://other.example/oauth", false, false},
	} {
		t.Run(name, func(t *testing.T) {
			s := newLegacyTestServer(t, tc.issuer, tc.prm)
			var asked atomic.Int32
			cfg := oauth.Config{Authorize: s.consentAt(&asked), RedirectURL: "http://127.0.0.1:9/callback"}
			r := start(t, s.URL+"/mcp", !tc.ok, OptOAuth(oauth.AuthorizationCode(cfg)), OptReconnect(Reconnect{MaxAttempts: 1}), OptTimeouts(Timeouts{Connect: 10 * time.Second}))
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			if !tc.ok {
				select {
				case err := <-r.done:
					r.done <- err
					if err == nil || !strings.Contains(err.Error(), "issuer") {
						t.Fatalf("Run = %v, want an authorization failure", err)
					}
				case <-ctx.Done():
					t.Fatal("the connector did not give up")
				}
				if asked.Load() != 0 || s.tokens.Load() != 0 {
					t.Fatalf("asked %d times and issued %d tokens, want none", asked.Load(), s.tokens.Load())
				}
				return
			}
			if err := callEcho(t, ctx, r); err != nil {
				t.Fatalf("call: %v", err)
			}
			if asked.Load() != 1 || s.tokens.Load() != 1 || s.metaHit.Load() == 0 {
				t.Fatalf("asked %d times, issued %d tokens, metadata fetched %d times; want 1, 1, >0", asked.Load(), s.tokens.Load(), s.metaHit.Load())
			}
		})
	}
}

package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// enterpriseServer is an IdP, an MCP server's authorization server (under
// /as) and the MCP server, on one test server. The IdP's metadata
// advertises no PKCE and names idpIssuer (the IdP's URL when empty).
type enterpriseServer struct {
	*protectedServer
	mu      sync.Mutex
	jags    map[string]bool // ID-JAGs issued and not yet used
	refused []string
}

func newEnterpriseServer(t *testing.T, idpIssuer string) *enterpriseServer {
	t.Helper()
	s := &enterpriseServer{protectedServer: newProtectedServer(t, "protected"), jags: map[string]bool{}}
	if idpIssuer == "" {
		idpIssuer = s.URL + "/idp"
	}
	s.serve("/mcp", false, &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{"/as"}, ScopesSupported: []string{"tools"}})
	mux := s.mux
	mux.HandleFunc("GET /.well-known/openid-configuration/idp", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"issuer": idpIssuer, "token_endpoint": s.URL + "/idp/token"})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server/as", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer":                                s.URL + "/as",
			"token_endpoint":                        s.URL + "/as/token",
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic"},
		})
	})
	mux.HandleFunc("POST /idp/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		s.mu.Lock()
		defer s.mu.Unlock()
		f := r.PostForm
		want := map[string]string{
			"grant_type": oauthex.GrantTypeTokenExchange, "subject_token": "secret-id-token", "subject_token_type": oauthex.TokenTypeIDToken,
			"requested_token_type": oauthex.TokenTypeIDJAG, "audience": s.URL + "/as", "resource": s.URL + "/mcp", "client_id": "idp-client", "scope": "tools",
		}
		for k, v := range want {
			if f.Get(k) != v {
				s.refused = append(s.refused, fmt.Sprintf("IdP: %s=%q", k, f.Get(k)))
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
				return
			}
		}
		jag := fmt.Sprintf("secret-jag-%d", len(s.jags))
		s.jags[jag] = true
		writeJSON(w, http.StatusOK, map[string]any{"access_token": jag, "issued_token_type": oauthex.TokenTypeIDJAG, "token_type": "N_A"})
	})
	mux.HandleFunc("POST /as/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		s.mu.Lock()
		defer s.mu.Unlock()
		id, secret, basic := r.BasicAuth()
		switch {
		case !basic || id != "mcp-client" || secret != "secret-client":
			s.refused = append(s.refused, "AS: no client_secret_basic authentication")
			writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "invalid_client"})
			return
		case r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || !s.jags[r.PostForm.Get("assertion")]:
			s.refused = append(s.refused, "AS: grant "+r.PostForm.Get("grant_type"))
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
			return
		}
		delete(s.jags, r.PostForm.Get("assertion"))
		s.grant("secret-access")
		writeJSON(w, http.StatusOK, map[string]any{"access_token": "secret-access", "token_type": "Bearer", "expires_in": 3600})
	})
	return s
}

func (s *enterpriseServer) config() oauth.EnterpriseConfig {
	return oauth.EnterpriseConfig{
		IDToken:      func(context.Context) (string, error) { return "secret-id-token", nil },
		IdPIssuer:    s.URL + "/idp",
		IdPClientID:  "idp-client",
		ClientID:     "mcp-client",
		ClientSecret: "secret-client",
	}
}

// TestOAuthEnterprise: the connector exchanges the ID token at an IdP whose
// metadata advertises no PKCE, then the ID-JAG at the authorization server
// with client_secret_basic; no secret appears in the logs or the state.
func TestOAuthEnterprise(t *testing.T) {
	s := newEnterpriseServer(t, "")
	logs := newLogCapture()
	r := start(t, s.URL+"/mcp", false, OptOAuth(oauth.Enterprise(s.config())), OptLogger(slogNew(logs)))
	if err := callEcho(t, context.Background(), r); err != nil {
		t.Fatalf("call: %v", err)
	}
	state := r.State()
	r.stop(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.refused) > 0 || !s.granted("secret-access") {
		t.Fatalf("refused: %q", s.refused)
	}
	for _, rec := range append(logs.all(), fmt.Sprintf("%+v", state)) {
		if strings.Contains(rec, "secret-") {
			t.Errorf("a secret leaked: %s", rec)
		}
	}
}

// TestOAuthEnterpriseIdPIssuer: IdP metadata naming another issuer is
// refused before any token exchange.
func TestOAuthEnterpriseIdPIssuer(t *testing.T) {
	s := newEnterpriseServer(t, "https://idp.example")
	r := start(t, s.URL+"/mcp", true, OptOAuth(oauth.Enterprise(s.config())), OptReconnect(Reconnect{MaxAttempts: 1}))
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	select {
	case err := <-r.done:
		r.done <- err
		if err == nil || !strings.Contains(err.Error(), "IdP metadata issuer") || strings.Contains(err.Error(), "secret-") {
			t.Fatalf("Run = %v, want the IdP's issuer refused", err)
		}
	case <-ctx.Done():
		t.Fatal("the connector did not give up")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.jags) != 0 || len(s.refused) != 0 {
		t.Fatalf("%d ID-JAGs issued, refused %q; want none", len(s.jags), s.refused)
	}
}

// TestOAuthEnterpriseOptions: an incomplete configuration is refused.
func TestOAuthEnterpriseOptions(t *testing.T) {
	cfg := oauth.EnterpriseConfig{IdPIssuer: "https://idp.example", IdPClientID: "a", ClientID: "b"}
	_, err := New("http://127.0.0.1/mcp", "c", "1", OptOAuth(oauth.Enterprise(cfg)))
	if !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "OptOAuth:") {
		t.Fatalf("New = %v, want ErrBadParameter naming the option", err)
	}
}

package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
)

// TestCleanError: a token endpoint's answer is not quoted in errors.
func TestCleanError(t *testing.T) {
	re := &oauth2.RetrieveError{
		Response:         &http.Response{Status: "400 Bad Request", StatusCode: 400},
		Body:             []byte(`{"error":"invalid_grant","access_token":"secret-x"}`),
		ErrorCode:        "invalid_grant",
		ErrorDescription: "expired",
	}
	got := cleanError(fmt.Errorf("token exchange failed: %w", re)).Error()
	if got != "token endpoint answered 400 Bad Request: invalid_grant (expired)" {
		t.Fatalf("cleanError = %q", got)
	}
	if cleanError(nil) != nil {
		t.Fatal("cleanError(nil) != nil")
	}
	other := errors.New("other")
	if cleanError(other) != other {
		t.Fatal("cleanError changed an unrelated error")
	}
}

// flowServer is an MCP endpoint (/mcp, which answers 401) with an
// authorization server of its own on the same origin, whose documents may
// name endpoints elsewhere.
type flowServer struct {
	*httptest.Server
	n atomic.Int32 // requests received

	mu      sync.Mutex
	asURL   string // the authorization server the resource metadata names
	reg     string // registration endpoint
	tokenAt string // token endpoint
}

func newFlowServer(t *testing.T) *flowServer {
	t.Helper()
	s := &flowServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+s.URL+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"resource": s.URL + "/mcp", "authorization_servers": []string{s.asURL}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer":                                s.URL,
			"authorization_endpoint":                s.URL + "/authorize",
			"token_endpoint":                        s.tokenAt,
			"registration_endpoint":                 s.reg,
			"response_types_supported":              []string{"code"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusCreated, map[string]any{"client_id": "client-1", "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"access_token": "secret-access", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "secret-refresh"})
	})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.n.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	s.asURL, s.reg, s.tokenAt = s.URL, s.URL+"/register", s.URL+"/token"
	return s
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// consent grants access at once.
func consent(_ context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	u, err := url.Parse(args.URL)
	if err != nil {
		return nil, err
	}
	return &auth.AuthorizationResult{Code: "code-1", State: u.Query().Get("state")}, nil
}

// authorize has h authorize after the 401 of the MCP endpoint of s.
func authorize(t *testing.T, h *Handler, s *flowServer) error {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/mcp", nil)
	mustNotErr(t, err)
	resp, err := http.DefaultClient.Do(req)
	mustNotErr(t, err)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the MCP endpoint answered %s", resp.Status)
	}
	return h.Authorize(context.Background(), req, resp)
}

// TestHandlerRefusesDestinations: the documents of a resource and its
// authorization server cannot make the handler send a discovery,
// registration, token or refresh request to a loopback destination other
// than the resource's own origin; the application can allow one.
func TestHandlerRefusesDestinations(t *testing.T) {
	leakCheck(t)
	flow, err := AuthorizationCode(Config{Authorize: consent, RedirectURL: "http://127.0.0.1:9/callback"})
	mustNotErr(t, err)
	for name, tc := range map[string]struct {
		point func(s *flowServer, elsewhere string)
		allow bool
	}{
		"authorization server":         {point: func(s *flowServer, e string) { s.asURL = e }},
		"registration endpoint":        {point: func(s *flowServer, e string) { s.reg = e + "/register" }},
		"token endpoint":               {point: func(s *flowServer, e string) { s.tokenAt = e + "/token" }},
		"authorization server allowed": {point: func(s *flowServer, e string) { s.asURL = e }, allow: true},
		"token endpoint allowed":       {point: func(s *flowServer, e string) { s.tokenAt = e + "/token" }, allow: true},
	} {
		t.Run(name, func(t *testing.T) {
			s, elsewhere := newFlowServer(t), newFlowServer(t)
			tc.point(s, elsewhere.URL)
			var logs lockedBuffer
			hc := HandlerConfig{Resource: s.URL + "/mcp", Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			if tc.allow {
				hc.Allow, err = NewAllowList(elsewhere.URL)
				mustNotErr(t, err)
			}
			h := NewHandler(context.Background(), flow, hc)
			err := authorize(t, h, s)
			if tc.allow {
				if err != nil || elsewhere.n.Load() == 0 {
					t.Fatalf("allowed: %v, %d requests elsewhere", err, elsewhere.n.Load())
				}
				return
			}
			host := strings.TrimPrefix(elsewhere.URL, "http://")
			if !errors.Is(err, ErrDestinationRefused) || !strings.Contains(err.Error(), host) {
				t.Fatalf("Authorize = %v, want ErrDestinationRefused naming %s", err, host)
			}
			if n := elsewhere.n.Load(); n != 0 {
				t.Fatalf("%d requests reached %s", n, host)
			}
			if out := logs.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, host) || strings.Contains(out, "secret") {
				t.Errorf("log:\n%s", out)
			}
		})
	}
}

// memoryStore is a TokenStore in memory.
type memoryStore struct {
	mu sync.Mutex
	t  *StoredToken
}

func (m *memoryStore) LoadToken(context.Context, string) (*StoredToken, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t, nil
}

func (m *memoryStore) SaveToken(_ context.Context, t *StoredToken) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.t = t
	return nil
}

// TestHandlerRefusesRefresh: a stored token whose token endpoint the
// rules refuse is not refreshed there: the request goes out without a
// token, so that the server's 401 starts a new authorization.
func TestHandlerRefusesRefresh(t *testing.T) {
	leakCheck(t)
	elsewhere := newFlowServer(t)
	store := &memoryStore{t: &StoredToken{
		Resource: "https://mcp.example.com/mcp", TokenURL: elsewhere.URL + "/token", ClientID: "c",
		Token: &oauth2.Token{AccessToken: "secret-old", RefreshToken: "secret-refresh", Expiry: time.Now().Add(-time.Hour)},
	}}
	flow, err := AuthorizationCode(Config{Authorize: consent, RedirectURL: "http://127.0.0.1:9/callback", Store: store})
	mustNotErr(t, err)
	h := NewHandler(context.Background(), flow, HandlerConfig{Resource: "https://mcp.example.com/mcp"})
	ts, err := h.TokenSource(context.Background())
	if err != nil || ts == nil {
		t.Fatalf("TokenSource = %v, %v", ts, err)
	}
	tok, err := ts.Token()
	if tok != nil || err != nil {
		t.Fatalf("Token = %v, %v; want no token", tok, err)
	}
	if n := elsewhere.n.Load(); n != 0 {
		t.Fatalf("the refresh reached the refused token endpoint (%d requests)", n)
	}
	if r := h.refused.Load(); r == nil || !errors.Is(*r, ErrDestinationRefused) {
		t.Fatalf("refusal noted: %v", r)
	}
}

// TestHandlerForgetsRefusedStoredToken: once the server refused the stored
// token, a request that went out without a token meanwhile is not retried
// with that token from the store (the SDK retries once, so it would fail
// for good with a bare 401): it waits for the authorization like the
// request that found the token refused. Before the fix it failed about
// once in twenty connections whose stored token had been revoked.
func TestHandlerForgetsRefusedStoredToken(t *testing.T) {
	leakCheck(t)
	s := newFlowServer(t)
	store := &memoryStore{t: &StoredToken{
		Resource: s.URL + "/mcp", Issuer: s.URL, TokenURL: s.URL + "/token", ClientID: "client-1",
		Token: &oauth2.Token{AccessToken: "secret-revoked", Expiry: time.Now().Add(time.Hour)},
	}}
	no := errors.New("the user said no")
	refuse := func(context.Context, *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) { return nil, no }
	flow, err := AuthorizationCode(Config{Authorize: refuse, RedirectURL: "http://127.0.0.1:9/callback", Store: store})
	mustNotErr(t, err)
	h := NewHandler(context.Background(), flow, HandlerConfig{Resource: s.URL + "/mcp"})
	defer h.Stop()
	refused := func(bearer string) error {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, s.URL+"/mcp", nil)
		mustNotErr(t, err)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		mustNotErr(t, err)
		return h.Authorize(context.Background(), req, resp)
	}
	if err := refused("secret-revoked"); !errors.Is(err, no) {
		t.Fatalf("Authorize after the stored token was refused = %v, want the user's refusal", err)
	}
	if err := refused(""); err == nil {
		t.Fatal("Authorize of a request sent without a token = nil: the SDK would retry it with the refused token")
	}
}

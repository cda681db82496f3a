package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// oauthServer is an MCP server behind bearer tokens with its own small
// authorization server: metadata, dynamic registration and a token
// endpoint (codes and refresh tokens). The user's consent is the test's
// authorize function, which makes a code from the authorization URL.
type oauthServer struct {
	*protectedServer
	mu        sync.Mutex
	n         int
	codes     map[string]bool // codes not yet exchanged
	refresh   map[string]bool // refresh tokens accepted
	refreshes atomic.Int32
}

// newOAuthServer serves the MCP server at /mcp (streamable HTTP) and /sse
// (the legacy SSE transport), its authorization server at the root.
func newOAuthServer(t *testing.T) *oauthServer {
	t.Helper()
	s := &oauthServer{protectedServer: newProtectedServer(t, "protected"), codes: map[string]bool{}, refresh: map[string]bool{}}
	prm := &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{""}}
	s.serve("/mcp", false, prm)
	s.serve("/sse", true, prm)
	s.mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, authCodeMetadata(s.URL, s.URL))
	})
	s.mux.HandleFunc("POST /register", registerPublicClient)
	s.mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		s.mu.Lock()
		defer s.mu.Unlock()
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			if !s.codes[r.Form.Get("code")] || r.Form.Get("code_verifier") == "" {
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": "bad code; secret-response-body"})
				return
			}
			delete(s.codes, r.Form.Get("code"))
		case "refresh_token":
			if !s.refresh[r.Form.Get("refresh_token")] {
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
				return
			}
			s.refreshes.Add(1)
		default:
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "unsupported_grant_type"})
			return
		}
		s.n++
		access, ref := fmt.Sprintf("secret-access-%d", s.n), fmt.Sprintf("secret-refresh-%d", s.n)
		s.grant(access)
		s.refresh[ref] = true
		writeJSON(w, http.StatusOK, map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": ref})
	})
	return s
}

// revoke makes every token the server issued invalid, access and refresh
// tokens alike: the user must authorize again.
func (s *oauthServer) revoke() {
	s.protectedServer.revoke()
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.refresh)
}

// consent returns an authorization function that grants access at once,
// counting the times it is asked; the code is registered with the server.
// With a gate, the asks from the gateFrom-th on send to entered and wait
// for the gate.
func (s *oauthServer) consent(asked *atomic.Int32, gate <-chan struct{}, gateFrom int32, entered chan<- struct{}) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		n := asked.Add(1)
		if gate != nil && n >= gateFrom {
			entered <- struct{}{}
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		u, err := url.Parse(args.URL)
		if err != nil {
			return nil, err
		}
		if u.Query().Get("code_challenge_method") != "S256" || u.Query().Get("resource") == "" {
			return nil, fmt.Errorf("authorization URL without PKCE or resource: %s", args.URL)
		}
		code := fmt.Sprintf("code-%d", n)
		s.mu.Lock()
		s.codes[code] = true
		s.mu.Unlock()
		return &auth.AuthorizationResult{Code: code, State: u.Query().Get("state")}, nil
	}
}

func callEcho(t *testing.T, ctx context.Context, r *running) error {
	t.Helper()
	tools, err := r.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Name() == "echo" {
			_, err := tl.Run(ctx, json.RawMessage(`{}`))
			return err
		}
	}
	t.Fatalf("no echo tool in %d tools", len(tools))
	return nil
}

// TestOAuthStoredTokens authorizes once, then connects again with the
// stored token (refreshing it when expired) without asking the user; no
// token appears in the logs or the state.
func TestOAuthStoredTokens(t *testing.T) {
	s := newOAuthServer(t)
	path := t.TempDir() + "/tokens.json"
	store := oauth.NewFileTokenStore(path)
	var asked atomic.Int32
	logs := newLogCapture()
	cfg := oauth.Config{Authorize: s.consent(&asked, nil, 0, nil), RedirectURL: "http://127.0.0.1:9/callback", Store: store}
	ctx := context.Background()

	r := start(t, s.URL+"/mcp", false, OptOAuth(oauth.AuthorizationCode(cfg)), OptLogger(slogNew(logs)))
	if err := callEcho(t, ctx, r); err != nil {
		t.Fatalf("call after authorization: %v", err)
	}
	r.stop(t)
	if asked.Load() != 1 {
		t.Fatalf("asked the user %d times, want 1", asked.Load())
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	st, err := store.LoadToken(ctx, s.URL+"/mcp")
	if err != nil || st == nil || st.Token.RefreshToken == "" || st.ClientID != "client-1" || st.TokenURL != s.URL+"/token" {
		t.Fatalf("stored %v (refresh token set: %v), %v", st, st != nil && st.Token.RefreshToken != "", err)
	}

	// A restart uses the stored token.
	r = start(t, s.URL+"/mcp", false, OptOAuth(oauth.AuthorizationCode(cfg)), OptLogger(slogNew(logs)))
	if err := callEcho(t, ctx, r); err != nil {
		t.Fatalf("call with the stored token: %v", err)
	}
	r.stop(t)
	if asked.Load() != 1 {
		t.Fatalf("asked the user %d times after a restart, want 1", asked.Load())
	}

	// An expired stored token is refreshed, and the new one stored.
	st.Token.Expiry = time.Now().Add(-time.Hour)
	if err := store.SaveToken(ctx, st); err != nil {
		t.Fatal(err)
	}
	r = start(t, s.URL+"/mcp", false, OptOAuth(oauth.AuthorizationCode(cfg)), OptLogger(slogNew(logs)))
	if err := callEcho(t, ctx, r); err != nil {
		t.Fatalf("call with the refreshed token: %v", err)
	}
	state := r.State()
	r.stop(t)
	if asked.Load() != 1 || s.refreshes.Load() != 1 {
		t.Fatalf("asked %d times and refreshed %d times, want 1 and 1", asked.Load(), s.refreshes.Load())
	}
	after, err := store.LoadToken(ctx, s.URL+"/mcp")
	if err != nil || after.Token.AccessToken == st.Token.AccessToken || !after.Token.Valid() {
		t.Fatalf("the refreshed token was not stored: %v", err)
	}
	for _, rec := range append(logs.all(), fmt.Sprintf("%+v", state), st.String()) {
		if strings.Contains(rec, "secret-") {
			t.Errorf("a token leaked: %s", rec)
		}
	}
}

// TestOAuthPending: while the user is asked to authorize again, the state
// says so and other calls fail at once; the call that needed the new
// authorization completes once it is given.
func TestOAuthPending(t *testing.T) {
	s := newOAuthServer(t)
	var asked atomic.Int32
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	cfg := oauth.Config{Authorize: s.consent(&asked, gate, 2, entered), RedirectURL: "http://127.0.0.1:9/callback"}
	r := start(t, s.URL+"/mcp", false, OptOAuth(oauth.AuthorizationCode(cfg)))
	// Run after start's cleanup: nothing waits for the gate then.
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	ctx := context.Background()

	s.revoke()
	first := make(chan error, 1)
	go func() { first <- callEcho(t, ctx, r) }()
	select {
	case <-entered:
	case <-time.After(waitLimit):
		t.Fatal("the user was not asked again")
	}
	if st := r.State(); st.Status != toolkit.StatusNeedsAuthorization || !strings.Contains(st.LastError, "waiting for the user to authorize access at 127.0.0.1") {
		t.Fatalf("state during the authorization: %+v", st)
	}
	// Bounded: without the check the call would wait for the
	// authorization in progress.
	bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := callEcho(t, bctx, r)
	if !errors.Is(err, ErrAuthorizationPending) || !errors.Is(err, toolkit.ErrUnavailable) {
		t.Fatalf("call during authorization: %v, want ErrAuthorizationPending", err)
	}
	release()
	select {
	case err := <-first:
		if err != nil {
			t.Fatalf("the call that authorized: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the call that authorized did not return")
	}
	if err := callEcho(t, ctx, r); err != nil {
		t.Fatalf("call after authorization: %v", err)
	}
	if st := r.State(); st.LastError != "" {
		t.Fatalf("state after the authorization: %+v", st)
	}
	if asked.Load() != 2 {
		t.Fatalf("asked %d times, want 2", asked.Load())
	}
}

// TestOAuthPendingConnect: a connection attempt waiting for the user is
// reported to the state callback.
func TestOAuthPendingConnect(t *testing.T) {
	s := newOAuthServer(t)
	var asked atomic.Int32
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	cfg := oauth.Config{Authorize: s.consent(&asked, gate, 1, entered), RedirectURL: "http://127.0.0.1:9/callback"}
	r := start(t, s.URL+"/mcp", true, OptOAuth(oauth.AuthorizationCode(cfg)))
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	select {
	case <-entered:
	case <-time.After(waitLimit):
		t.Fatal("the user was not asked")
	}
	r.states.wait(t, toolkit.StatusNeedsAuthorization, 1)
	if st := r.states.last(); st.Status != toolkit.StatusNeedsAuthorization || !strings.Contains(st.LastError, "waiting for the user to authorize access") {
		t.Fatalf("last state reported while the user is asked: %+v", st)
	}
	release()
	r.states.wait(t, toolkit.StatusReady, 1)
}

// TestOAuthOptions: invalid configurations make New fail with
// ErrBadParameter naming the option.
func TestOAuthOptions(t *testing.T) {
	for name, opt := range map[string]Option{
		"OptOAuth":     OptOAuth(oauth.AuthorizationCode(oauth.Config{RedirectURL: "http://127.0.0.1/cb"})),
		"OptOAuth ":    OptOAuth(oauth.AuthorizationCode(oauth.Config{Authorize: func(context.Context, *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) { return nil, nil }})),
		"OptOAuth  ":   OptOAuth(oauth.ClientCredentials("", "")),
		"OptOAuth   ":  OptOAuth(oauth.FromHandler(nil)),
		"OptOAuth    ": OptOAuth(nil, nil),
	} {
		_, err := New("http://127.0.0.1/mcp", "c", "1", opt)
		if !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), strings.TrimSpace(name)) {
			t.Errorf("%s: New = %v, want ErrBadParameter naming the option", name, err)
		}
	}
}

// TestOAuthAllow: the resource metadata of a server cannot send the
// connector's OAuth requests to a loopback authorization server on
// another origin: the connection fails saying so, and nothing reaches
// it; OptOAuthAllow lets them through.
func TestOAuthAllow(t *testing.T) {
	as := newOAuthServer(t) // its MCP endpoints unused
	p := newProtectedServer(t, "elsewhere")
	p.issuer = as.protectedServer
	p.serve("/mcp", false, nil)
	p.mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: p.URL + "/mcp", AuthorizationServers: []string{as.URL},
	}))
	var asked atomic.Int32
	cfg := oauth.Config{Authorize: as.consent(&asked, nil, 0, nil), RedirectURL: "http://127.0.0.1:9/callback"}

	r := start(t, p.URL+"/mcp", true, OptOAuth(oauth.AuthorizationCode(cfg)), OptReconnect(Reconnect{MaxAttempts: 1}))
	r.states.wait(t, toolkit.StatusFailed, 1)
	state := r.State()
	runErr := r.stop(t)
	host := strings.TrimPrefix(as.URL, "http://")
	// (The SDK's transport keeps the text of the handler's error, not
	// the error.)
	want := "OAuth request refused: " + as.URL + ": not https"
	if runErr == nil || !strings.Contains(runErr.Error(), want) || !strings.Contains(state.LastError, want) {
		t.Fatalf("Run = %v, state %+v; want the refusal of %s", runErr, state, host)
	}
	if n := as.hits.Load(); n != 0 || asked.Load() != 0 {
		t.Fatalf("%d requests reached the authorization server, the user was asked %d times", n, asked.Load())
	}

	r = start(t, p.URL+"/mcp", false, OptOAuth(oauth.AuthorizationCode(cfg)), OptOAuthAllow(as.URL))
	if err := callEcho(t, context.Background(), r); err != nil {
		t.Fatalf("call with the authorization server allowed: %v", err)
	}
	if _, err := New(p.URL+"/mcp", "c", "1", OptOAuthAllow("http://x/path")); !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "OptOAuthAllow") {
		t.Errorf("a bad entry: %v, want ErrBadParameter naming the option", err)
	}
}

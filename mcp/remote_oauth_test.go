package mcp

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/peers"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// oauthCounter counts the requests of an OAuth flow that reach the
// authorization server at origin: registrations and token requests.
type oauthCounter struct {
	origin        string
	registrations atomic.Int32
	tokens        atomic.Int32
}

func (c *oauthCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && r.URL.Scheme+"://"+r.URL.Host == c.origin {
		switch r.URL.Path {
		case "/register":
			c.registrations.Add(1)
		case "/token":
			c.tokens.Add(1)
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// personAtBrowser reads what a loopback authorizer prints and does what a
// person would: opens each URL in a browser, which follows the
// authorization server's redirect back to the authorizer. It counts the
// URLs.
type personAtBrowser struct {
	t    *testing.T
	urls atomic.Int32
	mu   sync.Mutex
	seen []string
}

func (p *personAtBrowser) Write(b []byte) (int, error) {
	for _, line := range strings.Split(string(b), "\n") {
		u := strings.TrimSpace(line)
		if !strings.HasPrefix(u, "http") {
			continue
		}
		p.urls.Add(1)
		p.mu.Lock()
		p.seen = append(p.seen, u)
		p.mu.Unlock()
		resp, err := http.Get(u) // the browser follows the redirect
		if err != nil {
			p.t.Errorf("the browser could not open the URL: %v", err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("Authorization complete")) {
			p.t.Errorf("the browser ended at %s: %d %s", resp.Request.URL.Host, resp.StatusCode, body)
		}
	}
	return len(b), nil
}

// TestOAuthTypeScriptExample runs the connector against the TypeScript
// SDK's example OAuth server (its streamable HTTP example with --oauth and
// its demo authorization server, which lists client_secret_post and none):
// dynamic registration as a public client and the authorization code flow,
// the person's browser following the printed URL to the loopback
// authorizer; one registration and one URL per login; a restart uses the
// stored token, and when that expired (the demo issues no refresh token),
// the stored registration with a new URL. No token reaches the logs.
func TestOAuthTypeScriptExample(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ex := peers.StartOAuthExample(t, ctx)
	// A fixed redirect port: the demo wants the registered redirect URI
	// exactly, and a restart reuses the registration.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	mustNotErr(t, err)
	redirectAddr := ln.Addr().String()
	ln.Close()
	path := filepath.Join(t.TempDir(), "tokens.json")
	store := oauth.NewFileTokenStore(path)
	counter := &oauthCounter{origin: ex.AuthServer}
	person := &personAtBrowser{t: t}
	logs := newLogCapture()
	run := func(wait bool) (*running, *oauth.LoopbackAuthorizer) {
		t.Helper()
		login, err := oauth.NewLoopbackAuthorizer(redirectAddr, person)
		mustNotErr(t, err)
		t.Cleanup(func() { login.Close() })
		r := start(t, ex.URL, !wait,
			OptOAuth(oauth.AuthorizationCode(oauth.Config{Authorize: login.Authorize, RedirectURL: login.RedirectURL(), Store: store})),
			OptOAuthAllow(ex.AuthServer), OptHTTPClient(&http.Client{Transport: counter}),
			OptLogger(slogNew(logs)), OptTimeouts(Timeouts{Connect: time.Minute}))
		return r, login
	}
	greet := func(r *running) {
		t.Helper()
		out, err := call(t, ctx, r.Connector, "greet", `{"name":"Ada"}`)
		if err != nil {
			t.Fatalf("greet: %v", err)
		}
		if data, _ := out.Read(ctx); !strings.Contains(string(data), "Hello, Ada!") {
			t.Fatalf("greet answered %q", data)
		}
	}
	counts := func(what string, registrations, urls int32) {
		t.Helper()
		if r, u := counter.registrations.Load(), person.urls.Load(); r != registrations || u != urls {
			t.Fatalf("%s: %d registrations and %d URLs, want %d and %d", what, r, u, registrations, urls)
		}
	}

	r, login := run(true)
	greet(r)
	counts("first login", 1, 1)
	if st := r.State(); st.Name != "simple-streamable-http-server" {
		t.Errorf("state %+v", st)
	}
	reg, err := store.LoadRegistration(ctx, ex.Issuer, login.RedirectURL())
	if err != nil || reg == nil || reg.TokenEndpointAuthMethod != "none" || reg.ClientSecret != "" {
		t.Fatalf("stored registration %v, %v; want a public client (none)", reg, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %v, %v", fi, err)
	}
	r.stop(t)
	login.Close()

	// A restart: the stored token, nobody asked, no token request.
	tokens := counter.tokens.Load()
	r, login = run(true)
	greet(r)
	counts("restart", 1, 1)
	if n := counter.tokens.Load(); n != tokens {
		t.Errorf("%d token requests after a restart with a stored token", n-tokens)
	}
	r.stop(t)
	login.Close()

	// A restart after the token expired (no refresh token): the person
	// is asked once more, with the stored registration.
	st, err := store.LoadToken(ctx, ex.URL)
	if err != nil || st == nil || st.Token.RefreshToken != "" {
		t.Fatalf("stored token %v, %v", st, err)
	}
	st.Token.Expiry = time.Now().Add(-time.Minute)
	mustNotErr(t, store.SaveToken(ctx, st))
	r, _ = run(false)
	r.states.wait(t, toolkit.StatusNeedsAuthorization, 1)
	r.states.wait(t, toolkit.StatusReady, 1)
	greet(r)
	counts("login after the expiry", 1, 2)
	if got := r.states.wait(t, toolkit.StatusNeedsAuthorization, 1); !strings.Contains(got.LastError, "the stored access token expired and there is no refresh token") {
		t.Errorf("needs authorization because %q", got.LastError)
	}
	state := r.State()
	r.stop(t)
	for _, rec := range append(logs.all(), state.LastError) {
		if strings.Contains(rec, st.Token.AccessToken) {
			t.Errorf("the access token reached the log: %s", rec)
		}
	}
}

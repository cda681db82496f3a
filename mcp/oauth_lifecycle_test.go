package mcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/oauthtest"
	"github.com/llmkit/toolkit/mcp/mcpserver"
	"github.com/llmkit/toolkit/mcp/oauth"
	"github.com/llmkit/toolkit/tool"
)

// issuedServer serves a toolkit with the tool "echo" as an OAuth
// protected resource of iss, with the library's resource server: JWT
// access tokens of iss that it did not revoke, its metadata, and its
// challenges (error="invalid_token" for a token refused). It returns the
// URL of its MCP endpoint and the count of requests refused although
// they carried a token.
func issuedServer(t *testing.T, iss *oauthtest.Issuer) (string, *atomic.Int32) {
	t.Helper()
	tk, err := toolkit.New(toolkit.WithTool(tool.Must("echo", "Says hi.", func(context.Context, struct{}) (string, error) {
		return "hi", nil
	})))
	mustNotErr(t, err)
	srv, err := mcpserver.New(tk, &sdk.Implementation{Name: "issued", Version: "1.0.0"})
	mustNotErr(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	mustNotErr(t, err)
	resource := "http://" + ln.Addr().String() + "/mcp"
	v, err := oauth.NewJWTVerifier(oauth.JWTConfig{JWKSURL: iss.JWKSURL(), Issuer: iss.URL, Audience: resource})
	mustNotErr(t, err)
	refused := &atomic.Int32{}
	verify := func(ctx context.Context, tok string, r *http.Request) (*auth.TokenInfo, error) {
		info, err := v.Verify(ctx, tok, r)
		if err != nil || !iss.Active(tok) {
			refused.Add(1)
			return nil, auth.ErrInvalidToken
		}
		return info, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- srv.ServeListener(ctx, ln, mcpserver.WithBearerAuth(verify, nil),
			mcpserver.WithProtectedResource(&oauthex.ProtectedResourceMetadata{Resource: resource, AuthorizationServers: []string{iss.URL}}))
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("protected server: %v", err)
		}
		srv.Close()
	})
	return resource, refused
}

// browser is the person: it opens each authorization URL (the oauthtest
// issuer consents at once, or says why not) and brings the code back.
// It counts the URLs; with gate set each visit first tells asked and
// waits for the gate.
type browser struct {
	urls  atomic.Int32
	gate  chan struct{}
	asked chan struct{}
}

func (b *browser) authorize(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	b.urls.Add(1)
	if b.gate != nil {
		b.asked <- struct{}{}
		select {
		case <-b.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(args.URL)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return nil, fmt.Errorf("the authorization server answered %s", resp.Status)
	}
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return nil, err
	}
	q := u.Query()
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// issuedSetup is an issuer, its protected server, a browser, a token
// file and the connector options that use them.
type issuedSetup struct {
	iss     *oauthtest.Issuer
	url     string
	refused *atomic.Int32
	b       *browser
	store   *oauth.FileTokenStore
	logs    *logCapture
}

func newIssuedSetup(t *testing.T) *issuedSetup {
	t.Helper()
	iss := oauthtest.NewIssuer(t)
	u, refused := issuedServer(t, iss)
	return &issuedSetup{iss: iss, url: u, refused: refused, b: &browser{}, logs: newLogCapture(),
		store: oauth.NewFileTokenStore(filepath.Join(t.TempDir(), "tokens.json"))}
}

func (s *issuedSetup) options() []Option {
	return []Option{
		OptOAuth(oauth.AuthorizationCode(oauth.Config{Authorize: s.b.authorize, RedirectURL: "http://127.0.0.1:9/callback", Store: s.store})),
		OptOAuthAllow(s.iss.URL), OptLogger(slogNew(s.logs)),
	}
}

// gate makes the browser wait.
func (s *issuedSetup) gate() (release func()) {
	s.b.gate, s.b.asked = make(chan struct{}), make(chan struct{}, 4)
	return func() { close(s.b.gate) }
}

// noSecrets fails the test if a token or secret reached the logs or st.
func (s *issuedSetup) noSecrets(t *testing.T, st toolkit.ConnectorState) {
	t.Helper()
	for _, rec := range append(s.logs.all(), fmt.Sprintf("%+v", st)) {
		if strings.Contains(rec, "eyJ") || strings.Contains(rec, "secret-") {
			t.Errorf("a secret leaked: %s", rec)
		}
	}
}

// asked waits until the browser is asked.
func (s *issuedSetup) asked(t *testing.T) {
	t.Helper()
	select {
	case <-s.b.asked:
	case <-time.After(waitLimit):
		t.Fatal("the user was not asked")
	}
}

// TestOAuthLifecycleRevoked: a token revoked server-side, its refresh
// token too: the connector says it needs authorization and why, calls
// fail at once, the user is asked once more (no new registration), and
// the connector goes on by itself, ready again.
func TestOAuthLifecycleRevoked(t *testing.T) {
	s := newIssuedSetup(t)
	r := start(t, s.url, false, s.options()...)
	ctx := context.Background()
	mustNotErr(t, callEcho(t, ctx, r))
	s.iss.Revoke()
	release := s.gate()
	first := make(chan error, 1)
	go func() { first <- callEcho(t, ctx, r) }()
	s.asked(t)
	st := r.State()
	if st.Status != toolkit.StatusNeedsAuthorization || !strings.Contains(st.LastError, "needs authorization: the server refused the access token and refreshing it failed") ||
		!strings.Contains(st.LastError, "waiting for the user to authorize access at "+strings.TrimPrefix(s.iss.URL, "http://")) {
		t.Fatalf("state while the user is asked: %+v", st)
	}
	bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := callEcho(t, bctx, r); !errors.Is(err, ErrAuthorizationPending) {
		t.Fatalf("a call meanwhile: %v, want ErrAuthorizationPending", err)
	}
	release()
	mustNotErr(t, <-first)
	r.states.wait(t, toolkit.StatusNeedsAuthorization, 1)
	r.states.wait(t, toolkit.StatusReady, 2)
	mustNotErr(t, callEcho(t, ctx, r))
	if u, reg := s.b.urls.Load(), s.iss.Registrations(); u != 2 || reg != 1 {
		t.Fatalf("%d URLs, %d registrations; want 2 and 1", u, reg)
	}
	s.noSecrets(t, r.State())
}

// TestOAuthLifecycleStoredTokens: a restart whose stored token expired
// without a refresh token asks the user again, saying why, with the stored
// registration; one whose token is about to expire refreshes it before
// sending it.
func TestOAuthLifecycleStoredTokens(t *testing.T) {
	s := newIssuedSetup(t)
	ctx := context.Background()
	s.iss.SetRefreshTokens(false)
	r := start(t, s.url, false, s.options()...)
	mustNotErr(t, callEcho(t, ctx, r))
	r.stop(t)
	st, err := s.store.LoadToken(ctx, s.url)
	if err != nil || st == nil || st.Token.RefreshToken != "" {
		t.Fatalf("stored %v, %v", st, err)
	}
	st.Token.Expiry = time.Now().Add(-time.Minute)
	mustNotErr(t, s.store.SaveToken(ctx, st))

	release := s.gate()
	r = start(t, s.url, true, s.options()...)
	s.asked(t)
	got := r.states.wait(t, toolkit.StatusNeedsAuthorization, 1)
	if want := "needs authorization: the stored access token expired and there is no refresh token; waiting for the user"; !strings.HasPrefix(got.LastError, want) {
		t.Fatalf("state: %+v, want %q", got, want)
	}
	release()
	r.states.wait(t, toolkit.StatusReady, 1)
	mustNotErr(t, callEcho(t, ctx, r))
	r.stop(t)
	if u, reg := s.b.urls.Load(), s.iss.Registrations(); u != 2 || reg != 1 {
		t.Fatalf("%d URLs, %d registrations; want 2 and 1", u, reg)
	}

	// With a refresh token, about to expire: refreshed before it is sent.
	s.b.gate = nil
	s.iss.SetRefreshTokens(true)
	s.iss.Revoke()
	r = start(t, s.url, false, s.options()...)
	mustNotErr(t, callEcho(t, ctx, r))
	r.stop(t)
	st, err = s.store.LoadToken(ctx, s.url)
	if err != nil || st.Token.RefreshToken == "" {
		t.Fatalf("stored %v, %v", st, err)
	}
	st.Token.Expiry = time.Now().Add(5 * time.Second)
	mustNotErr(t, s.store.SaveToken(ctx, st))
	refused := s.refused.Load()
	r = start(t, s.url, false, s.options()...)
	mustNotErr(t, callEcho(t, ctx, r))
	if s.iss.Refreshes() != 1 || s.refused.Load() != refused || s.b.urls.Load() != 3 {
		t.Fatalf("%d refreshes, %d more refusals, %d URLs; want 1, 0, 3", s.iss.Refreshes(), s.refused.Load()-refused, s.b.urls.Load())
	}
	s.noSecrets(t, r.State())
}

// TestOAuthLifecycleRateLimited: a registration answered 429 with
// Retry-After: the connector says so on one line and when it tries
// again, and calls fail at once without reaching anyone.
func TestOAuthLifecycleRateLimited(t *testing.T) {
	s := newIssuedSetup(t)
	s.iss.RefuseRegistrations(1, http.StatusTooManyRequests, "3600")
	r := start(t, s.url, true, s.options()...)
	got := r.states.wait(t, toolkit.StatusNeedsAuthorization, 1)
	want := "needs authorization: authorization server: registration answered 429 Too Many Requests: too_many_requests (You have exceeded the rate limit for client registration requests); retry after 1h0m0s; next attempt in 1h0m0s"
	if got.LastError != want {
		t.Fatalf("state %q\nwant  %q", got.LastError, want)
	}
	bctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := r.acquire(bctx); !errors.Is(err, ErrAuthorizationPending) || !errors.Is(err, toolkit.ErrUnavailable) {
		t.Fatalf("a call while waiting: %v", err)
	}
	if s.iss.Registrations() != 0 || s.b.urls.Load() != 0 {
		t.Fatalf("%d registrations, %d URLs", s.iss.Registrations(), s.b.urls.Load())
	}
	for _, rec := range s.logs.all() {
		if strings.Contains(rec, "secret-echo") || strings.Contains(rec, "\n") {
			t.Errorf("the server's answer reached the log: %q", rec)
		}
	}
}

// TestOAuthLifecycleForgottenClient: an authorization server that forgot
// its clients (restarted) rejects the refresh with invalid_client: the
// connector registers again, asks the user once, and goes on.
func TestOAuthLifecycleForgottenClient(t *testing.T) {
	s := newIssuedSetup(t)
	ctx := context.Background()
	r := start(t, s.url, false, s.options()...)
	mustNotErr(t, callEcho(t, ctx, r))
	s.iss.ForgetClients()
	s.iss.RevokeAccessTokens()
	mustNotErr(t, callEcho(t, ctx, r))
	if u, reg := s.b.urls.Load(), s.iss.Registrations(); u != 2 || reg != 2 {
		t.Fatalf("%d URLs, %d registrations; want 2 and 2", u, reg)
	}
	s.logs.waitFor(t, "OAuth client registration dropped")
	s.noSecrets(t, r.State())
}

package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit/internal/testing/oauthtest"
)

// fakeClock is a clock the test moves; functions due run when it does.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

// Advance moves the clock by d and runs the functions due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	keep := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !t.at.After(c.now):
			t.stopped = true
			due = append(due, t.f)
		default:
			keep = append(keep, t)
		}
	}
	c.timers = keep
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

// resourceServer is an MCP server with an echo tool, protected by the
// JWT access tokens of an issuer that it did not revoke; it answers 401
// with error="invalid_token" to a token it refuses, as RFC 6750 asks.
type resourceServer struct {
	*httptest.Server
	refused atomic.Int32 // requests answered 401 although they carried a token
	// stepUp, when set, answers every request with a good token 403
	// insufficient_scope, asking for a scope never granted.
	stepUp atomic.Bool
}

func newResourceServer(t *testing.T, iss *oauthtest.Issuer) *resourceServer {
	t.Helper()
	return newResourceServerOf(t, tokenIssuer{url: iss.URL, jwks: iss.JWKSURL(), active: iss.Active})
}

// tokenIssuer is the issuer of a resourceServer's tokens: its identifier,
// its key set, whether a token is still good, and the scopes the resource
// names in its metadata.
type tokenIssuer struct {
	url, jwks string
	active    func(token string) bool
	scopes    []string
}

// newResourceServerOf returns a resourceServer of the tokens of iss.
func newResourceServerOf(t *testing.T, iss tokenIssuer) *resourceServer {
	t.Helper()
	rs := &resourceServer{}
	mux := http.NewServeMux()
	rs.Server = httptest.NewServer(mux)
	t.Cleanup(rs.Close)
	resource := rs.URL + "/mcp"
	v, err := NewJWTVerifier(JWTConfig{JWKSURL: iss.jwks, Issuer: iss.url, Audience: resource})
	mustNotErr(t, err)
	srv := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest, map[string]any) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hi"}}}, nil, nil
		})
	// whoami answers the subject of the access token the request carried.
	sdk.AddTool(srv, &sdk.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ map[string]any) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: auth.TokenInfoFromContext(ctx).UserID}}}, nil, nil
		})
	verify := func(ctx context.Context, tok string, r *http.Request) (*auth.TokenInfo, error) {
		info, err := v.Verify(ctx, tok, r)
		if err != nil || !iss.active(tok) {
			return nil, auth.ErrInvalidToken
		}
		return info, nil
	}
	prm := ProtectedResourceMetadataURL
	metaURL, err := prm(resource)
	mustNotErr(t, err)
	protected := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: metaURL})(
		sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && rs.stepUp.Load() && iss.active(tok) {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="admin", resource_metadata="`+metaURL+`"`)
			http.Error(w, "insufficient scope", http.StatusForbidden)
			return
		}
		protected.ServeHTTP(&invalidToken{ResponseWriter: w, rs: rs, sent: r.Header.Get("Authorization") != ""}, r)
	}))
	mustNotErr(t, HandleProtectedResourceMetadata(mux, &oauthex.ProtectedResourceMetadata{Resource: resource, AuthorizationServers: []string{iss.url}, ScopesSupported: iss.scopes}))
	return rs
}

// invalidToken adds error="invalid_token" to the challenge of a token
// refused.
type invalidToken struct {
	http.ResponseWriter
	rs   *resourceServer
	sent bool
}

func (w *invalidToken) WriteHeader(code int) {
	if code == http.StatusUnauthorized && w.sent {
		w.rs.refused.Add(1)
		w.Header().Set("WWW-Authenticate", w.Header().Get("WWW-Authenticate")+`, error="invalid_token", error_description="The token was revoked"`)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *invalidToken) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *invalidToken) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// browser is the user: it opens the authorization URLs it is given (the
// oauthtest issuer consents at once) and brings the redirect's code back,
// counting the URLs. With gate set, each visit waits for the gate.
type browser struct {
	urls atomic.Int32
	gate chan struct{} // nil: no waiting
	in   chan string   // each URL, when the test listens (nil: not)
	fail atomic.Pointer[error]
}

func (b *browser) authorize(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	b.urls.Add(1)
	if b.in != nil {
		b.in <- args.URL
	}
	if b.gate != nil {
		select {
		case <-b.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if p := b.fail.Load(); p != nil {
		return nil, *p
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

// lifecycle is a resource server, its issuer, a browser and a handler of
// the authorization code flow for the resource, on a fake clock.
type lifecycle struct {
	iss   *oauthtest.Issuer
	rs    *resourceServer
	b     *browser
	clock *fakeClock
	store *FileTokenStore
	path  string
	cfg   Config
	h     *Handler
	logs  *lockedBuffer
}

func newLifecycle(t *testing.T) *lifecycle {
	t.Helper()
	iss := oauthtest.NewIssuer(t)
	lc := &lifecycle{iss: iss, rs: newResourceServer(t, iss), b: &browser{}, clock: newFakeClock(), logs: &lockedBuffer{}}
	lc.path = filepath.Join(t.TempDir(), "tokens.json")
	lc.store = NewFileTokenStore(lc.path)
	lc.cfg = Config{Authorize: lc.b.authorize, RedirectURL: "http://127.0.0.1:9/callback", Store: lc.store}
	lc.h = lc.handler(t)
	return lc
}

// handler returns a new handler of lc's flow (a restart), on lc's clock.
func (lc *lifecycle) handler(t *testing.T) *Handler {
	t.Helper()
	flow, err := AuthorizationCode(lc.cfg)
	mustNotErr(t, err)
	allow, err := NewAllowList(lc.iss.URL)
	mustNotErr(t, err)
	h := NewHandler(context.Background(), flow, HandlerConfig{
		Resource: lc.rs.URL + "/mcp", Allow: allow,
		Logger: lc.logger(),
	})
	h.clock = lc.clock
	t.Cleanup(h.Stop)
	return h
}

// logger is the logger of lc's handlers, into lc.logs.
func (lc *lifecycle) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(lc.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// connect connects an SDK client authorized by h.
func (lc *lifecycle) connect(ctx context.Context, h *Handler) (*sdk.ClientSession, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "oauth-test", Version: "1"}, nil)
	return client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: lc.rs.URL + "/mcp", OAuthHandler: h, MaxRetries: -1}, nil)
}

// call connects with h and calls echo.
func (lc *lifecycle) call(t *testing.T, h *Handler) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	cs, err := lc.connect(ctx, h)
	if err != nil {
		return err
	}
	defer cs.Close()
	_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{}})
	return err
}

// noSecrets fails the test if the log shows a secret.
func (lc *lifecycle) noSecrets(t *testing.T) {
	t.Helper()
	if out := lc.logs.String(); strings.Contains(out, "secret-") || strings.Contains(out, "eyJ") {
		t.Errorf("a secret reached the log:\n%s", out)
	}
}

// TestLifecycleRegistersOnce: a loopback client registers once, as a
// public client (none, with PKCE), whatever the authorizations that
// follow; a restart uses the stored token, and when it must authorize
// again, the stored registration: one registration and one URL per
// login.
func TestLifecycleRegistersOnce(t *testing.T) {
	leakCheck(t)
	lc := newLifecycle(t)
	mustNotErr(t, lc.call(t, lc.h))
	if r, u := lc.iss.Registrations(), lc.b.urls.Load(); r != 1 || u != 1 {
		t.Fatalf("%d registrations and %d URLs for the first login, want 1 and 1", r, u)
	}
	ctx := context.Background()
	reg, err := lc.store.LoadRegistration(ctx, lc.iss.URL, lc.cfg.RedirectURL)
	if err != nil || reg == nil || reg.TokenEndpointAuthMethod != "none" || reg.ClientSecret != "" || !strings.HasPrefix(reg.ClientID, "dynamic-") {
		t.Fatalf("stored registration %+v, %v; want a public client (none)", reg, err)
	}
	// Revoked: a second login, with the same registration.
	lc.iss.Revoke()
	mustNotErr(t, lc.call(t, lc.h))
	if r, u := lc.iss.Registrations(), lc.b.urls.Load(); r != 1 || u != 2 {
		t.Fatalf("%d registrations and %d URLs after a second login, want 1 and 2", r, u)
	}
	// A restart: the stored token, nobody asked.
	mustNotErr(t, lc.call(t, lc.handler(t)))
	if r, u := lc.iss.Registrations(), lc.b.urls.Load(); r != 1 || u != 2 {
		t.Fatalf("%d registrations and %d URLs after a restart, want 1 and 2", r, u)
	}
	// A restart that must authorize again uses the stored registration.
	lc.iss.Revoke()
	mustNotErr(t, lc.call(t, lc.handler(t)))
	if r, u := lc.iss.Registrations(), lc.b.urls.Load(); r != 1 || u != 3 {
		t.Fatalf("%d registrations and %d URLs after a restart and a login, want 1 and 3", r, u)
	}
	lc.noSecrets(t)
}

// TestLifecycleConfidentialClient: a client whose redirect is not on the
// loopback interface registers with the first of client_secret_post and
// client_secret_basic the server lists, and authenticates so.
func TestLifecycleConfidentialClient(t *testing.T) {
	leakCheck(t)
	lc := newLifecycle(t)
	// The redirect goes elsewhere; the browser brings the code back all
	// the same.
	lc.cfg.RedirectURL = "https://app.example/callback"
	h := lc.handler(t)
	mustNotErr(t, lc.call(t, h))
	reg, err := lc.store.LoadRegistration(context.Background(), lc.iss.URL, lc.cfg.RedirectURL)
	if err != nil || reg == nil || reg.TokenEndpointAuthMethod != "client_secret_post" || reg.ClientSecret == "" {
		t.Fatalf("stored registration %v, %v; want client_secret_post with a secret", reg, err)
	}
	for _, tc := range []struct {
		supported []string
		public    bool
		want      string
	}{
		{[]string{"client_secret_post", "none"}, true, "none"},
		{[]string{"client_secret_basic", "client_secret_post", "none"}, false, "client_secret_post"},
		{[]string{"client_secret_basic"}, true, "client_secret_basic"},
		{nil, true, "none"},
		{nil, false, ""},
		{[]string{"private_key_jwt"}, true, ""},
	} {
		if got := chooseAuthMethod(tc.supported, tc.public); got != tc.want {
			t.Errorf("chooseAuthMethod(%v, public %v) = %q, want %q", tc.supported, tc.public, got, tc.want)
		}
	}
	for redirect, public := range map[string]bool{
		"http://127.0.0.1:8765/cb": true, "http://localhost/cb": true, "http://[::1]:1/cb": true,
		"com.example.app:/cb": true, "https://app.example/cb": false, "http://10.0.0.1/cb": false,
	} {
		if publicClient(redirect) != public {
			t.Errorf("publicClient(%q) = %v", redirect, !public)
		}
	}
}

// TestLifecycleRegistrationRefused: a registration answered 429 with
// Retry-After fails the authorization with one readable line (no body,
// no line break); nothing is sent to the authorization server until the
// time it asked for has passed, requests fail at once with a
// PendingError meanwhile; then one registration and one URL.
func TestLifecycleRegistrationRefused(t *testing.T) {
	leakCheck(t)
	lc := newLifecycle(t)
	lc.iss.RefuseRegistrations(1, http.StatusTooManyRequests, "120")
	err := lc.call(t, lc.h)
	var se *ServerError
	if !errors.As(err, &se) || se.Status != 429 || se.Code != "too_many_requests" || se.RetryAfter != 2*time.Minute {
		t.Fatalf("call = %v, want the 429 of the registration", err)
	}
	const line = "authorization server: registration answered 429 Too Many Requests: too_many_requests (You have exceeded the rate limit for client registration requests); retry after 2m0s"
	if se.Error() != line || strings.Contains(err.Error(), "secret-echo") {
		t.Fatalf("error %q, want %q", se.Error(), line)
	}
	changed, perr := lc.h.Pending()
	var pe *PendingError
	if !errors.As(perr, &pe) || !errors.Is(perr, ErrAuthorizationPending) || !pe.RetryAt.Equal(lc.clock.Now().Add(2*time.Minute)) ||
		!strings.Contains(pe.Reason, "429") || !strings.Contains(pe.Reason, "next attempt in 2m0s") {
		t.Fatalf("Pending = %v (%+v)", perr, pe)
	}
	requests := lc.iss.TokensIssued()
	// Meanwhile a request fails at once, and nothing reaches the server.
	err = lc.call(t, lc.h)
	if !errors.Is(err, ErrAuthorizationPending) || lc.iss.Registrations() != 0 || lc.b.urls.Load() != 0 || lc.iss.TokensIssued() != requests {
		t.Fatalf("call during the wait = %v; %d registrations, %d URLs", err, lc.iss.Registrations(), lc.b.urls.Load())
	}
	lc.clock.Advance(time.Minute)
	select {
	case <-changed:
		t.Fatal("the wait ended early")
	default:
	}
	lc.clock.Advance(time.Minute)
	<-changed
	if _, err := lc.h.Pending(); err != nil {
		t.Fatalf("Pending after the wait = %v", err)
	}
	mustNotErr(t, lc.call(t, lc.h))
	if r, u := lc.iss.Registrations(), lc.b.urls.Load(); r != 1 || u != 1 {
		t.Fatalf("%d registrations and %d URLs, want 1 and 1", r, u)
	}
	if out := lc.logs.String(); strings.Contains(out, "secret-echo") || strings.Contains(out, `\n`) {
		t.Errorf("the server's answer reached the log:\n%s", out)
	}
}

// TestLifecycleBackoff: failed authorizations are retried after 1s, 2s,
// 4s, ... (a failure does not ask again before), one URL each; a success
// forgets the failures.
func TestLifecycleBackoff(t *testing.T) {
	leakCheck(t)
	lc := newLifecycle(t)
	no := error(errors.New("the user said no"))
	lc.b.fail.Store(&no)
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second} {
		err := lc.call(t, lc.h)
		if err == nil || !strings.Contains(err.Error(), "the user said no") {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
		_, perr := lc.h.Pending()
		var pe *PendingError
		if !errors.As(perr, &pe) || pe.RetryAt.Sub(lc.clock.Now()) != want || int(lc.b.urls.Load()) != i+1 {
			t.Fatalf("after failure %d: %v, %d URLs; want a wait of %v", i+1, perr, lc.b.urls.Load(), want)
		}
		if err := lc.call(t, lc.h); !errors.Is(err, ErrAuthorizationPending) || int(lc.b.urls.Load()) != i+1 {
			t.Fatalf("a request during the wait: %v, %d URLs", err, lc.b.urls.Load())
		}
		lc.clock.Advance(want)
	}
	lc.b.fail.Store(nil)
	mustNotErr(t, lc.call(t, lc.h))
	if _, err := lc.h.Pending(); err != nil || lc.h.findGate() != nil {
		t.Fatalf("after a success: %v, gate kept: %v", err, lc.h.findGate() != nil)
	}
}

// TestLifecycleExpiryWithoutRefresh: a token that expires without a
// refresh token is not sent; the next request asks the user again, saying
// why, and goes through once authorized.
func TestLifecycleExpiryWithoutRefresh(t *testing.T) {
	leakCheck(t)
	lc := newLifecycle(t)
	lc.iss.SetRefreshTokens(false)
	mustNotErr(t, lc.call(t, lc.h))
	lc.clock.Advance(time.Hour)
	ts, _ := lc.h.TokenSource(context.Background())
	if tok, err := ts.Token(); tok != nil || err != nil {
		t.Fatalf("Token after the expiry = %v, %v; want none", tok, err)
	}
	lc.b.gate, lc.b.in = make(chan struct{}), make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- lc.call(t, lc.h) }()
	<-lc.b.in
	_, perr := lc.h.Pending()
	var pe *PendingError
	if !errors.As(perr, &pe) || !pe.RetryAt.IsZero() || !lc.h.Waiting() ||
		pe.Reason != "the access token expired and there is no refresh token; waiting for the user to authorize access at "+strings.TrimPrefix(lc.iss.URL, "http://") {
		t.Fatalf("Pending while the user is asked = %v", perr)
	}
	close(lc.b.gate)
	mustNotErr(t, <-done)
	if u := lc.b.urls.Load(); u != 2 || lc.iss.Refreshes() != 0 {
		t.Fatalf("%d URLs, %d refreshes; want 2 and 0", u, lc.iss.Refreshes())
	}
	if _, err := lc.h.Pending(); err != nil {
		t.Fatal(err)
	}
}

// TestLifecycleRefreshBeforeExpiry: a token about to expire is refreshed
// before it is sent: the server never sees it refused, nobody is asked.
func TestLifecycleRefreshBeforeExpiry(t *testing.T) {
	leakCheck(t)
	lc := newLifecycle(t)
	mustNotErr(t, lc.call(t, lc.h))
	st, err := lc.store.LoadToken(context.Background(), lc.rs.URL+"/mcp")
	mustNotErr(t, err)
	lc.clock.Advance(st.Token.Expiry.Sub(lc.clock.Now()) - 5*time.Second)
	mustNotErr(t, lc.call(t, lc.h))
	if lc.iss.Refreshes() != 1 || lc.rs.refused.Load() != 0 || lc.b.urls.Load() != 1 {
		t.Fatalf("%d refreshes, %d refusals, %d URLs; want 1, 0, 1", lc.iss.Refreshes(), lc.rs.refused.Load(), lc.b.urls.Load())
	}
	after, err := lc.store.LoadToken(context.Background(), lc.rs.URL+"/mcp")
	if err != nil || after.Token.AccessToken == st.Token.AccessToken {
		t.Fatalf("the refreshed token was not stored: %v", err)
	}
	lc.noSecrets(t)
}

// TestLifecycleRevoked: a token revoked server-side (401 invalid_token)
// is refreshed once; when the refresh token was revoked too, the user is
// asked again, with the reason, and the request goes through.
func TestLifecycleRevoked(t *testing.T) {
	leakCheck(t)
	lc := newLifecycle(t)
	mustNotErr(t, lc.call(t, lc.h))
	lc.iss.Revoke()
	lc.b.gate, lc.b.in = make(chan struct{}), make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- lc.call(t, lc.h) }()
	<-lc.b.in
	_, perr := lc.h.Pending()
	if perr == nil || !strings.Contains(perr.Error(), "the server refused the access token and refreshing it failed: ") || !strings.Contains(perr.Error(), "invalid_grant") {
		t.Fatalf("Pending while the user is asked = %v", perr)
	}
	close(lc.b.gate)
	mustNotErr(t, <-done)
	if lc.b.urls.Load() != 2 || lc.iss.Registrations() != 1 {
		t.Fatalf("%d URLs, %d registrations; want 2 and 1", lc.b.urls.Load(), lc.iss.Registrations())
	}
	// Only the access token revoked: a refresh, nobody asked.
	lc.b.gate, lc.b.in = nil, nil
	lc.iss.RevokeAccessTokens()
	mustNotErr(t, lc.call(t, lc.h))
	if lc.b.urls.Load() != 2 || lc.iss.Refreshes() != 1 {
		t.Fatalf("%d URLs, %d refreshes; want 2 and 1", lc.b.urls.Load(), lc.iss.Refreshes())
	}
}

// TestLifecycleForgottenClient: an authorization server that forgot the
// client (a restart) answers its refresh with invalid_client: the
// registration is dropped, the client registers again, the user is asked
// again, and the request goes through.
func TestLifecycleForgottenClient(t *testing.T) {
	leakCheck(t)
	lc := newLifecycle(t)
	mustNotErr(t, lc.call(t, lc.h))
	first, _ := lc.store.LoadRegistration(context.Background(), lc.iss.URL, lc.cfg.RedirectURL)
	lc.iss.ForgetClients()
	lc.clock.Advance(time.Hour) // the access token expired: refresh
	mustNotErr(t, lc.call(t, lc.h))
	if r, u := lc.iss.Registrations(), lc.b.urls.Load(); r != 2 || u != 2 {
		t.Fatalf("%d registrations and %d URLs, want 2 and 2", r, u)
	}
	second, err := lc.store.LoadRegistration(context.Background(), lc.iss.URL, lc.cfg.RedirectURL)
	if err != nil || second == nil || first == nil || second.ClientID == first.ClientID {
		t.Fatalf("registrations %v then %v (%v)", first, second, err)
	}
	if !strings.Contains(lc.logs.String(), "OAuth client registration dropped") {
		t.Errorf("log:\n%s", lc.logs.String())
	}
}

// TestLifecycleOneFlight: two handlers of one token store and resource
// (two connectors, say) that need an authorization at once make one: one
// URL; the second fails at once while the user is asked and uses the
// token afterwards.
func TestLifecycleOneFlight(t *testing.T) {
	leakCheck(t)
	lc := newLifecycle(t)
	other := lc.handler(t)
	lc.b.gate, lc.b.in = make(chan struct{}), make(chan string, 2)
	done := make(chan error, 1)
	go func() { done <- lc.call(t, lc.h) }()
	<-lc.b.in
	if err := lc.call(t, other); !errors.Is(err, ErrAuthorizationPending) {
		t.Fatalf("the other handler's request = %v, want ErrAuthorizationPending", err)
	}
	if !other.Waiting() {
		t.Fatal("the other handler does not see the user asked")
	}
	close(lc.b.gate)
	mustNotErr(t, <-done)
	mustNotErr(t, lc.call(t, other))
	if r, u := lc.iss.Registrations(), lc.b.urls.Load(); r != 1 || u != 1 {
		t.Fatalf("%d registrations and %d URLs, want 1 and 1", r, u)
	}
}

// TestLifecycleStepUpLimit: a server that asks for a scope it never
// grants gets one step-up; when the token of that one is refused as well,
// the authorization failed and the next one waits, instead of the user
// being asked again and again.
func TestLifecycleStepUpLimit(t *testing.T) {
	leakCheck(t)
	lc := newLifecycle(t)
	mustNotErr(t, lc.call(t, lc.h))
	lc.rs.stepUp.Store(true)
	err := lc.call(t, lc.h)
	_, perr := lc.h.Pending()
	var pe *PendingError
	if err == nil || !errors.As(perr, &pe) || pe.RetryAt.IsZero() || !strings.Contains(pe.Reason, "the server asks for more scopes (insufficient_scope), right after an authorization gave it") {
		t.Fatalf("call = %v; Pending = %v", err, perr)
	}
	if u := lc.b.urls.Load(); u != 2 {
		t.Fatalf("%d URLs, want 2 (the login and one step-up)", u)
	}
}

// TestLifecycleStop: Stop ends the authorization waiting for the user,
// which does not count as a failure.
func TestLifecycleStop(t *testing.T) {
	leakCheck(t)
	lc := newLifecycle(t)
	lc.b.gate, lc.b.in = make(chan struct{}), make(chan string, 1)
	req, err := http.NewRequest(http.MethodPost, lc.rs.URL+"/mcp", strings.NewReader("{}"))
	mustNotErr(t, err)
	resp, err := http.DefaultClient.Do(req)
	mustNotErr(t, err)
	done := make(chan error, 1)
	go func() { done <- lc.h.Authorize(context.Background(), req, resp) }()
	<-lc.b.in
	lc.h.Stop()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Fatalf("Authorize = %v, want the authorization stopped", err)
	}
	if _, err := lc.h.Pending(); err != nil || lc.b.urls.Load() != 1 {
		t.Fatalf("Pending after Stop = %v (%d URLs), want nil", err, lc.b.urls.Load())
	}
}

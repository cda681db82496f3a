package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
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

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/internal/testing/oauthtest"
)

// delivered returns what reached e, if anything, without waiting.
func delivered(e *Expected) (loopbackResult, bool) {
	select {
	case r := <-e.ch:
		return r, true
	default:
		return loopbackResult{}, false
	}
}

// TestCallbackForgedStates: a redirect whose state only resembles the
// one expected (a prefix, a suffix, another case, spaces or a NUL around
// it, the state in another parameter) is refused and ends nothing.
func TestCallbackForgedStates(t *testing.T) {
	c, err := NewCallback("https://gw.example/cb", CallbackConfig{})
	mustNotErr(t, err)
	e, err := c.Expect("jwt:alice", authURL("Genuine-1"))
	mustNotErr(t, err)
	defer e.Close()
	for _, q := range []string{
		"code=x&state=Genuine", "code=x&state=Genuine-", "code=x&state=Genuine-12", "code=x&state=genuine-1",
		"code=x&state=GENUINE-1", "code=x&state=+Genuine-1", "code=x&state=Genuine-1+", "code=x&state=Genuine-1%00",
		"code=x&state=%47enuine-1x", "code=x&State=Genuine-1", "code=x&state%00=Genuine-1", "code=x&state[]=Genuine-1",
		"code=x&state=", "code=x&state", "code=x", "",
	} {
		if got := redirect(c, "GET", "/cb", q); got != http.StatusBadRequest {
			t.Errorf("%q: %d, want 400", q, got)
		}
	}
	if r, ok := delivered(e); ok || e.Arrived() {
		t.Fatalf("a forged redirect reached the authorization: %+v (arrived %v)", r, e.Arrived())
	}
	if c.Pending() != 1 {
		t.Fatalf("%d pending, want 1", c.Pending())
	}
	// The same state, encoded otherwise, is the same state.
	if got := redirect(c, "GET", "/cb", "code=x&state=%47enuine%2D1"); got != http.StatusOK {
		t.Errorf("the genuine state, percent-encoded: %d", got)
	}
	if !e.Arrived() {
		t.Error("the genuine redirect was answered, and Arrived is false")
	}
}

// TestCallbackRefusal: a redirect carrying error= ends the authorization
// whose state it carries, with an error of one bounded line that never
// quotes the error description; with a code beside it, the refusal wins;
// with a forged state, or an empty error and no code, it ends nothing.
func TestCallbackRefusal(t *testing.T) {
	c, err := NewCallback("https://gw.example/cb", CallbackConfig{})
	mustNotErr(t, err)
	a, err := c.Expect("a", authURL("sa"))
	mustNotErr(t, err)
	defer a.Close()
	b, err := c.Expect("b", authURL("sb"))
	mustNotErr(t, err)
	defer b.Close()
	for _, q := range []string{"error=access_denied&state=forged", "error=&state=sa", "error=access_denied"} {
		if got := redirect(c, "GET", "/cb", q); got != http.StatusBadRequest {
			t.Errorf("%q: %d, want 400", q, got)
		}
	}
	if _, ok := delivered(a); ok {
		t.Fatal("a refusal without the state, or without an error, ended the authorization")
	}
	long := url.QueryEscape("access_denied\r\nlevel=ERROR msg=forged " + strings.Repeat("x", 10000))
	if got := redirect(c, "GET", "/cb", "code=x&error="+long+"&error_description=secret-description&state=sa"); got != http.StatusForbidden {
		t.Errorf("a refusal: %d, want 403", got)
	}
	_, err = a.Wait(context.Background())
	switch {
	case err == nil:
		t.Fatal("the refused authorization got a result")
	case strings.ContainsAny(err.Error(), "\r\n"), len(err.Error()) > 200, strings.Contains(err.Error(), "secret-description"):
		t.Errorf("the refusal's error is not one short line without the description: %q", err)
	case !strings.Contains(err.Error(), "access_denied"):
		t.Errorf("the refusal's error does not name the error code: %q", err)
	}
	if got := redirect(c, "GET", "/cb", "code=x&state=sa"); got != http.StatusBadRequest {
		t.Errorf("a code after the refusal: %d, want 400", got)
	}
	if _, ok := delivered(b); ok || c.Pending() != 1 {
		t.Errorf("another authorization was touched (pending %d)", c.Pending())
	}
}

// TestCallbackOddQueries: a redirect that repeats one of its parameters
// (RFC 6749 §3.1 forbids it) or whose query is huge is refused and ends
// nothing, even with the genuine state; one with more parameters than the
// query parser takes is refused.
func TestCallbackOddQueries(t *testing.T) {
	c, err := NewCallback("https://gw.example/cb", CallbackConfig{})
	mustNotErr(t, err)
	e, err := c.Expect("p", authURL("genuine"))
	mustNotErr(t, err)
	defer e.Close()
	for _, tc := range []struct {
		name, q string
		want    int
	}{
		{"two codes", "code=a&code=b&state=genuine", http.StatusBadRequest},
		{"two states", "code=a&state=genuine&state=genuine", http.StatusBadRequest},
		{"two states, the second genuine", "code=a&state=forged&state=genuine", http.StatusBadRequest},
		{"two errors", "error=a&error=b&state=genuine", http.StatusBadRequest},
		{"two issuers", "code=a&iss=https%3A%2F%2Fa.example&iss=https%3A%2F%2Fb.example&state=genuine", http.StatusBadRequest},
		{"a huge code", "state=genuine&code=" + strings.Repeat("c", 1<<20), http.StatusRequestURITooLong},
		{"huge padding", strings.Repeat("pad=1&", 200000) + "state=genuine&code=a", http.StatusRequestURITooLong},
		{"semicolons", "code=a;state=genuine", http.StatusBadRequest},
		{"bad escapes", "code=%zz&state=genuine", http.StatusBadRequest},
	} {
		if got := redirect(c, "GET", "/cb", tc.q); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	if r, ok := delivered(e); ok {
		t.Fatalf("an odd redirect reached the authorization: code of %d bytes, %v", len(r.res.Code), r.err)
	}
	if got := redirect(c, "GET", "/cb", "code=a&state=genuine"); got != http.StatusOK {
		t.Errorf("the genuine redirect after the odd ones: %d", got)
	}
}

// TestCallbackConcurrentReplays: of many copies of one redirect arriving
// at once, exactly one is accepted, and its code is the one delivered.
func TestCallbackConcurrentReplays(t *testing.T) {
	leakCheck(t)
	c, err := NewCallback("https://gw.example/cb", CallbackConfig{})
	mustNotErr(t, err)
	e, err := c.Expect("p", authURL("genuine"))
	mustNotErr(t, err)
	defer e.Close()
	const n = 64
	start := make(chan struct{})
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			codes[i] = redirect(c, "GET", "/cb", fmt.Sprintf("code=c%d&state=genuine", i))
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, code := range codes {
		switch {
		case code == http.StatusOK && winner >= 0:
			t.Fatalf("copies %d and %d were both accepted", winner, i)
		case code == http.StatusOK:
			winner = i
		case code != http.StatusBadRequest:
			t.Errorf("copy %d: %d", i, code)
		}
	}
	if winner < 0 {
		t.Fatal("no copy was accepted")
	}
	res, err := e.Wait(context.Background())
	if err != nil || res.Code != fmt.Sprintf("c%d", winner) {
		t.Fatalf("Wait = %+v, %v; want the code of copy %d", res, err, winner)
	}
	if _, ok := delivered(e); ok {
		t.Fatal("a second result reached the authorization")
	}
}

// TestCallbackDefaultBounds: with the default bounds, a principal has at
// most 8 authorizations waiting and all of them together at most 1,000;
// an authorization closed or expired frees its place, and the refusal
// names neither the principal nor a state.
func TestCallbackDefaultBounds(t *testing.T) {
	c, err := NewCallback("https://gw.example/cb", CallbackConfig{})
	mustNotErr(t, err)
	now := time.Now()
	c.now = func() time.Time { return now }
	var first *Expected
	for u := range DefaultMaxPendingRedirects / DefaultMaxPendingRedirectsPerPrincipal {
		for i := range DefaultMaxPendingRedirectsPerPrincipal {
			e, err := c.Expect(fmt.Sprintf("user-%d", u), authURL(fmt.Sprintf("s-%d-%d", u, i)))
			mustNotErr(t, err)
			if first == nil {
				first = e
			}
		}
		if u == 0 {
			_, err := c.Expect("user-0", authURL("s-0-extra"))
			if !errors.Is(err, ErrTooManyAuthorizations) || strings.Contains(err.Error(), "user-0") || strings.Contains(err.Error(), "s-0") {
				t.Fatalf("a ninth authorization of one user: %v", err)
			}
		}
	}
	if c.Pending() != DefaultMaxPendingRedirects {
		t.Fatalf("%d pending, want %d", c.Pending(), DefaultMaxPendingRedirects)
	}
	if _, err := c.Expect("newcomer", authURL("s-new")); !errors.Is(err, ErrTooManyAuthorizations) {
		t.Fatalf("authorization %d: %v", DefaultMaxPendingRedirects+1, err)
	}
	first.Close()
	e, err := c.Expect("newcomer", authURL("s-new"))
	mustNotErr(t, err)
	// Just before the expiry the waits hold; at it they are over.
	now = now.Add(DefaultRedirectExpiry - time.Nanosecond)
	if _, err := c.Expect("late", authURL("s-late")); !errors.Is(err, ErrTooManyAuthorizations) {
		t.Fatalf("before the expiry: %v", err)
	}
	now = now.Add(time.Nanosecond)
	if got := redirect(c, "GET", "/cb", "code=x&state=s-5-5"); got != http.StatusBadRequest {
		t.Errorf("the redirect of an expired wait: %d", got)
	}
	late, err := c.Expect("user-1", authURL("s-late"))
	mustNotErr(t, err)
	defer late.Close()
	if c.Pending() != 1 {
		t.Errorf("%d pending after the expiry, want 1", c.Pending())
	}
	if _, err := e.Wait(context.Background()); !errors.Is(err, errRedirectExpired) {
		t.Errorf("the wait of an expired authorization: %v", err)
	}
}

// TestCallbackWaitAfterDeadline: a redirect that came in time is
// delivered even when Wait is called after the wait's deadline.
func TestCallbackWaitAfterDeadline(t *testing.T) {
	for i := range 32 {
		c, err := NewCallback("https://gw.example/cb", CallbackConfig{Expiry: time.Minute})
		mustNotErr(t, err)
		now := time.Now()
		c.now = func() time.Time { return now }
		e, err := c.Expect("p", authURL("s"))
		mustNotErr(t, err)
		if got := redirect(c, "GET", "/cb", "code=x&state=s"); got != http.StatusOK {
			t.Fatalf("the redirect: %d", got)
		}
		now = now.Add(time.Hour)
		if res, err := e.Wait(context.Background()); err != nil || res.Code != "x" {
			t.Fatalf("round %d: Wait = %+v, %v", i, res, err)
		}
		e.Close()
	}
}

// callbackBrowser is the user of a program that serves a Callback: it
// opens the authorization URL at the issuer (which consents at once) and
// follows its redirect to the callback, keeping the redirects it followed.
type callbackBrowser struct {
	mu        sync.Mutex
	redirects []string
}

func (b *callbackBrowser) open(ctx context.Context, authURL string) error {
	client := &http.Client{CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		b.mu.Lock()
		b.redirects = append(b.redirects, r.URL.String())
		b.mu.Unlock()
		return nil
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the callback answered %s: %s", resp.Status, body)
	}
	return nil
}

// TestCallbackReplayAcrossRestart: a program serving a Callback
// authorizes through it and stores its token; the redirect replayed
// afterwards, to the same process or to the next one (a new Callback
// with the same token store), is refused: it ends no authorization of the
// new process, no code is exchanged again, and the stored token stays.
func TestCallbackReplayAcrossRestart(t *testing.T) {
	leakCheck(t)
	iss := oauthtest.NewIssuer(t)
	rs := newResourceServer(t, iss)
	var cb atomic.Pointer[Callback]
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { cb.Load().ServeHTTP(w, r) }))
	defer front.Close()
	redirectURL := front.URL + "/oauth/callback"
	b := &callbackBrowser{}
	authorize := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		e, err := cb.Load().Expect("", args.URL)
		if err != nil {
			return nil, err
		}
		defer e.Close()
		opened := make(chan error, 1)
		go func() { opened <- b.open(ctx, args.URL) }()
		res, err := e.Wait(ctx)
		if err := <-opened; err != nil {
			return nil, err
		}
		return res, err
	}
	store := NewFileTokenStore(filepath.Join(t.TempDir(), "tokens.json"))
	allow, err := NewAllowList(iss.URL)
	mustNotErr(t, err)
	lc := &lifecycle{rs: rs}
	start := func() *Handler {
		c, err := NewCallback(redirectURL, CallbackConfig{})
		mustNotErr(t, err)
		cb.Store(c)
		flow, err := AuthorizationCode(Config{Authorize: authorize, RedirectURL: redirectURL, Store: store})
		mustNotErr(t, err)
		h := NewHandler(context.Background(), flow, HandlerConfig{Resource: rs.URL + "/mcp", Allow: allow})
		t.Cleanup(h.Stop)
		return h
	}
	mustNotErr(t, lc.call(t, start()))
	if len(b.redirects) != 1 || iss.Authorizations() != 1 {
		t.Fatalf("%d redirects followed, %d authorizations; want 1 and 1", len(b.redirects), iss.Authorizations())
	}
	replayed := b.redirects[0]
	if !strings.HasPrefix(replayed, redirectURL+"?") {
		t.Fatalf("the redirect went to %s", replayed)
	}
	stored, err := store.LoadToken(context.Background(), rs.URL+"/mcp")
	mustNotErr(t, err)
	tokens := iss.TokensIssued()
	replay := func(when string) {
		t.Helper()
		resp, err := http.Get(replayed)
		mustNotErr(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("the redirect replayed %s: %s, want 400", when, resp.Status)
		}
	}
	replay("after its success")

	// A restart: the stored token serves, nobody is asked, and the
	// replay ends nothing of the new process.
	mustNotErr(t, lc.call(t, start()))
	waiting, err := cb.Load().Expect("someone", authURL("another-state"))
	mustNotErr(t, err)
	defer waiting.Close()
	replay("after a restart")
	if r, ok := delivered(waiting); ok {
		t.Fatalf("the replay reached an authorization of the new process: %+v", r)
	}
	again, err := store.LoadToken(context.Background(), rs.URL+"/mcp")
	mustNotErr(t, err)
	if again.Token.AccessToken != stored.Token.AccessToken || iss.TokensIssued() != tokens || iss.Authorizations() != 1 {
		t.Errorf("the replays changed the stored token or reached the issuer (%d tokens issued, want %d)", iss.TokensIssued(), tokens)
	}
}

// TestCallbackExpectTwoStates: an authorization URL with two states (an
// authorization endpoint whose own URL names one, say) is refused: the
// state a redirect would carry is unknown, and a state chosen by the
// authorization server's metadata is known to anyone.
func TestCallbackExpectTwoStates(t *testing.T) {
	c, err := NewCallback("https://gw.example/cb", CallbackConfig{})
	mustNotErr(t, err)
	for _, u := range []string{
		"https://as.example/authorize?state=chosen&client_id=c&state=real",
		"https://as.example/authorize?state=real&state=real",
		"https://as.example/authorize?state=",
	} {
		if _, err := c.Expect("p", u); !errors.Is(err, errs.ErrBadParameter) {
			t.Errorf("Expect(%q): %v, want ErrBadParameter", u, err)
		}
	}
	if c.Pending() != 0 {
		t.Errorf("%d pending", c.Pending())
	}
}

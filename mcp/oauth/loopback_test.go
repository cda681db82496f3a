package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/llmkit/toolkit/internal/errs"
)

// printed collects what an authorizer writes, one Write a message.
type printed chan string

func (p printed) Write(b []byte) (int, error) {
	p <- string(b)
	return len(b), nil
}

func newLoopback(t *testing.T) (*LoopbackAuthorizer, printed) {
	t.Helper()
	out := make(printed, 4)
	a, err := NewLoopbackAuthorizer("127.0.0.1:0", out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, out
}

type fetched struct {
	res *auth.AuthorizationResult
	err error
}

// authorizeAsync starts a.Authorize for an authorization URL with state
// and waits until it printed the URL.
func authorizeAsync(t *testing.T, ctx context.Context, a *LoopbackAuthorizer, out printed, state string) <-chan fetched {
	t.Helper()
	ch := make(chan fetched, 1)
	go func() {
		r, err := a.Authorize(ctx, &auth.AuthorizationArgs{URL: "https://as.example/authorize?client_id=c&state=" + state})
		ch <- fetched{r, err}
	}()
	select {
	case msg := <-out:
		if !strings.Contains(msg, "https://as.example/authorize?client_id=c") {
			t.Fatalf("printed %q, want the authorization URL", msg)
		}
	case <-time.After(waitLimit):
		t.Fatal("Authorize printed nothing")
	}
	return ch
}

func get(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func result(t *testing.T, ch <-chan fetched) fetched {
	t.Helper()
	select {
	case f := <-ch:
		return f
	case <-time.After(waitLimit):
		t.Fatal("Authorize did not return")
		return fetched{}
	}
}

func TestLoopbackAuthorizer(t *testing.T) {
	a, out := newLoopback(t)
	if !strings.HasPrefix(a.RedirectURL(), "http://127.0.0.1:") || !strings.HasSuffix(a.RedirectURL(), "/callback") {
		t.Fatalf("RedirectURL = %q", a.RedirectURL())
	}
	// Nothing waits yet.
	if code := get(t, a.RedirectURL()+"?code=x&state=y"); code != http.StatusNotFound {
		t.Fatalf("redirect with no authorization in progress: %d, want 404", code)
	}

	ch := authorizeAsync(t, context.Background(), a, out, "s1")
	if code := get(t, a.RedirectURL()+"?state=s1"); code != http.StatusBadRequest {
		t.Fatalf("redirect without a code: %d, want 400", code)
	}
	if code := get(t, a.RedirectURL()+"?code=the-code&state=s1&iss=https%3A%2F%2Fas.example"); code != http.StatusOK {
		t.Fatalf("redirect: %d, want 200", code)
	}
	f := result(t, ch)
	if f.err != nil || f.res.Code != "the-code" || f.res.State != "s1" || f.res.Iss != "https://as.example" {
		t.Fatalf("Authorize = %+v, %v", f.res, f.err)
	}

	// A refusal.
	ch = authorizeAsync(t, context.Background(), a, out, "s2")
	if code := get(t, a.RedirectURL()+"?error=access_denied&state=s2"); code != http.StatusForbidden {
		t.Fatalf("refusal: %d, want 403", code)
	}
	if f := result(t, ch); f.err == nil || !strings.Contains(f.err.Error(), "access_denied") {
		t.Fatalf("Authorize after a refusal = %+v, %v", f.res, f.err)
	}

	// The context ends the wait.
	ctx, cancel := context.WithCancel(context.Background())
	ch = authorizeAsync(t, ctx, a, out, "s3")
	cancel()
	if f := result(t, ch); !errors.Is(f.err, context.Canceled) {
		t.Fatalf("Authorize after cancel: %v", f.err)
	}

	// Close ends the wait.
	ch = authorizeAsync(t, context.Background(), a, out, "s4")
	a.Close()
	if f := result(t, ch); f.err == nil {
		t.Fatal("Authorize after Close succeeded")
	}
}

// TestLoopbackAuthorizerRedirectURL checks a redirect URL given whole: its
// path is kept (a client may be registered with it), port 0 becomes the
// port listened on, and only that path answers.
func TestLoopbackAuthorizerRedirectURL(t *testing.T) {
	out := make(printed, 4)
	a, err := NewLoopbackAuthorizer("http://127.0.0.1:0/oauth/done%20here", out)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	u, err := url.Parse(a.RedirectURL())
	if err != nil || u.Hostname() != "127.0.0.1" || u.Port() == "0" || u.Port() == "" || u.EscapedPath() != "/oauth/done%20here" {
		t.Fatalf("RedirectURL = %q, want http://127.0.0.1:PORT/oauth/done%%20here", a.RedirectURL())
	}
	ch := authorizeAsync(t, context.Background(), a, out, "s")
	base := "http://" + u.Host
	if code := get(t, base+"/callback?code=c&state=s"); code != http.StatusNotFound {
		t.Errorf("redirect to /callback: %d, want 404", code)
	}
	resp, err := http.Post(a.RedirectURL()+"?code=c&state=s", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST to the redirect URL: %d, want 405", resp.StatusCode)
	}
	if code := get(t, a.RedirectURL()+"?code=the-code&state=s"); code != http.StatusOK {
		t.Fatalf("redirect: %d, want 200", code)
	}
	if f := result(t, ch); f.err != nil || f.res.Code != "the-code" {
		t.Fatalf("Authorize = %+v, %v", f.res, f.err)
	}
}

// TestLoopbackAuthorizerState: redirects whose state is missing or wrong
// (forged by anyone who can reach the port) are answered 400, and neither
// end the authorization nor use up its redirect: the genuine one that
// follows completes it.
func TestLoopbackAuthorizerState(t *testing.T) {
	a, out := newLoopback(t)
	ch := authorizeAsync(t, context.Background(), a, out, "the-state")
	for _, forged := range []string{
		"?code=evil",
		"?code=evil&state=",
		"?code=evil&state=other",
		"?code=evil&state=the-stat",
		"?code=evil&state=the-statex",
		"?error=access_denied",
		"?error=access_denied&state=other",
	} {
		if code := get(t, a.RedirectURL()+forged); code != http.StatusBadRequest {
			t.Errorf("forged redirect %s: %d, want 400", forged, code)
		}
	}
	if code := get(t, a.RedirectURL()+"?code=the-code&state=the-state"); code != http.StatusOK {
		t.Fatalf("the genuine redirect: %d, want 200", code)
	}
	if f := result(t, ch); f.err != nil || f.res.Code != "the-code" || f.res.State != "the-state" {
		t.Fatalf("Authorize = %+v, %v; want the genuine code", f.res, f.err)
	}
}

func TestLoopbackAuthorizerAddress(t *testing.T) {
	for _, addr := range []string{
		"192.0.2.1:0", "example.com:80", "nonsense", "127.0.0.1",
		"https://127.0.0.1:0/callback", "http://192.0.2.1:0/callback", "http://127.0.0.1/callback",
		"http://127.0.0.1:0", "http://127.0.0.1:0/", "http://127.0.0.1:0/cb?x=1", "http://127.0.0.1:0/cb#f",
		"http://u:p@127.0.0.1:0/cb", "http://127.0.0.1:0/cb?",
	} {
		if _, err := NewLoopbackAuthorizer(addr, os.Stderr); !errors.Is(err, errs.ErrBadParameter) {
			t.Errorf("NewLoopbackAuthorizer(%q) = %v, want ErrBadParameter", addr, err)
		}
	}
}

// FuzzLoopbackCallback checks that no redirect makes the authorizer panic
// and that only one carrying the state of the authorization in progress
// ends it: with its code (200) or the server's refusal (403).
func FuzzLoopbackCallback(f *testing.F) {
	for _, seed := range []string{
		"code=c&state=the-state", "code=c", "code=c&state=other", "state=the-state",
		"error=access_denied&state=the-state", "error=access_denied", "state=the-state&state=x&code=c",
		"code=c&state=the-state&iss=https%3A%2F%2Fas.example", "%zz&state=the-state", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, query string) {
		a := &LoopbackAuthorizer{}
		ch := make(chan loopbackResult, 1)
		a.waiting = &loopbackWait{state: "the-state", ch: ch}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/callback", nil)
		req.URL.RawQuery = query
		a.callback(rec, req)
		q := req.URL.Query()
		var got *loopbackResult
		select {
		case r := <-ch:
			got = &r
		default:
		}
		switch {
		case q.Get("state") != "the-state":
			if rec.Code != http.StatusBadRequest || got != nil {
				t.Fatalf("state %q: %d, result %v", q.Get("state"), rec.Code, got)
			}
		case q.Get("error") != "":
			if rec.Code != http.StatusForbidden || got == nil || got.err == nil {
				t.Fatalf("refusal: %d, result %v", rec.Code, got)
			}
		case q.Get("code") == "":
			if rec.Code != http.StatusBadRequest || got != nil {
				t.Fatalf("no code: %d, result %v", rec.Code, got)
			}
		default:
			if rec.Code != http.StatusOK || got == nil || got.res.Code != q.Get("code") || got.res.State != "the-state" {
				t.Fatalf("genuine: %d, result %v", rec.Code, got)
			}
		}
	})
}

package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/llmkit/toolkit/internal/errs"
)

// redirect sends the callback a redirect with the query q, and returns
// the status.
func redirect(c *Callback, method, path, q string) int {
	w := httptest.NewRecorder()
	c.ServeHTTP(w, httptest.NewRequest(method, "https://gw.example"+path+"?"+q, nil))
	if strings.Contains(w.Body.String(), "code-") || strings.Contains(w.Body.String(), "state-") {
		panic("the answer quotes the request: " + w.Body.String())
	}
	return w.Code
}

func authURL(state string) string {
	return "https://as.example/authorize?client_id=c&state=" + url.QueryEscape(state)
}

// TestCallback: a redirect reaches the authorization whose state it
// carries, once; forged, missing and used states are refused with 400 and
// end nothing; a refusal of the authorization server reaches its
// authorization only.
func TestCallback(t *testing.T) {
	c, err := NewCallback("https://gw.example/oauth/callback", CallbackConfig{})
	mustNotErr(t, err)
	if c.RedirectURL() != "https://gw.example/oauth/callback" || c.Path() != "/oauth/callback" {
		t.Fatalf("RedirectURL %q, Path %q", c.RedirectURL(), c.Path())
	}
	a, err := c.Expect("jwt:alice", authURL("state-a"))
	mustNotErr(t, err)
	defer a.Close()
	b, err := c.Expect("jwt:bob", authURL("state-b"))
	mustNotErr(t, err)
	defer b.Close()
	for _, tc := range []struct {
		method, path, q string
		want            int
	}{
		{"GET", "/oauth/callback", "code=code-1&state=forged", http.StatusBadRequest},
		{"GET", "/oauth/callback", "code=code-1", http.StatusBadRequest},
		{"GET", "/oauth/callback", "state=state-a", http.StatusBadRequest},
		{"GET", "/oauth/callback", "code=code-1&state=state-a%", http.StatusBadRequest},
		{"POST", "/oauth/callback", "code=code-1&state=state-a", http.StatusMethodNotAllowed},
		{"GET", "/other", "code=code-1&state=state-a", http.StatusNotFound},
	} {
		if got := redirect(c, tc.method, tc.path, tc.q); got != tc.want {
			t.Errorf("%s %s?%s: %d, want %d", tc.method, tc.path, tc.q, got, tc.want)
		}
	}
	if c.Pending() != 2 {
		t.Fatalf("%d pending after forged redirects, want 2", c.Pending())
	}
	if got := redirect(c, "GET", "/oauth/callback", "code=code-a&state=state-a&iss=https%3A%2F%2Fas.example"); got != http.StatusOK {
		t.Fatalf("the genuine redirect: %d", got)
	}
	res, err := a.Wait(context.Background())
	if err != nil || res.Code != "code-a" || res.State != "state-a" || res.Iss != "https://as.example" {
		t.Fatalf("Wait = %+v, %v", res, err)
	}
	if got := redirect(c, "GET", "/oauth/callback", "code=code-a2&state=state-a"); got != http.StatusBadRequest {
		t.Errorf("a second redirect for a used state: %d, want 400", got)
	}
	if got := redirect(c, "GET", "/oauth/callback", "error=access_denied&state=state-b"); got != http.StatusForbidden {
		t.Errorf("a refusal: %d", got)
	}
	if _, err := b.Wait(context.Background()); err == nil || !strings.Contains(err.Error(), "access_denied") {
		t.Errorf("bob's wait after a refusal: %v", err)
	}
	if c.Pending() != 0 {
		t.Errorf("%d pending at the end", c.Pending())
	}
}

// TestCallbackBounds: the waits are bounded per principal and in all,
// expire, and end with their context.
func TestCallbackBounds(t *testing.T) {
	c, err := NewCallback("http://127.0.0.1:8080/cb", CallbackConfig{MaxPending: 3, MaxPendingPerPrincipal: 2, Expiry: time.Minute})
	mustNotErr(t, err)
	now := time.Now()
	c.now = func() time.Time { return now }
	a1, err := c.Expect("a", authURL("1"))
	mustNotErr(t, err)
	_, err = c.Expect("a", authURL("2"))
	mustNotErr(t, err)
	if _, err := c.Expect("a", authURL("3")); !errors.Is(err, ErrTooManyAuthorizations) || !errors.Is(err, errs.ErrUnavailable) {
		t.Errorf("a third of one principal: %v", err)
	}
	_, err = c.Expect("b", authURL("3"))
	mustNotErr(t, err)
	if _, err := c.Expect("c", authURL("4")); !errors.Is(err, ErrTooManyAuthorizations) {
		t.Errorf("beyond the total: %v", err)
	}
	if _, err := c.Expect("c", authURL("3")); !errors.Is(err, errs.ErrBadParameter) {
		t.Errorf("a state expected already: %v", err)
	}
	if _, err := c.Expect("c", "https://as.example/authorize"); !errors.Is(err, errs.ErrBadParameter) {
		t.Errorf("no state: %v", err)
	}
	a1.Close()
	a1.Close()
	if got := redirect(c, "GET", "/cb", "code=x&state=1"); got != http.StatusBadRequest {
		t.Errorf("the redirect of a closed wait: %d", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a1.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with an ended context: %v", err)
	}
	now = now.Add(time.Minute)
	if got := redirect(c, "GET", "/cb", "code=x&state=2"); got != http.StatusBadRequest {
		t.Errorf("an expired redirect: %d", got)
	}
	d, err := c.Expect("c", authURL("5"))
	mustNotErr(t, err)
	defer d.Close()
	if c.Pending() != 1 {
		t.Errorf("%d pending after expiry, want 1", c.Pending())
	}
	for _, bad := range []string{"http://gw.example/cb", "https://gw.example", "https://gw.example/cb?x=1", "https://u@gw.example/cb", "/cb", "https://gw.example/cb#f"} {
		if _, err := NewCallback(bad, CallbackConfig{}); !errors.Is(err, errs.ErrBadParameter) {
			t.Errorf("NewCallback(%q): %v", bad, err)
		}
	}
}

// FuzzCallback: no redirect, however malformed, panics or reaches an
// authorization whose state it does not carry.
func FuzzCallback(f *testing.F) {
	for _, s := range []string{"code=x&state=s", "state=%zz", "code=&state=", "state=s&state=genuine&code=x", "error=x&state=genuine", strings.Repeat("a=b&", 1000), "state=genuine%00&code=1", ";state=genuine&code=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		c, err := NewCallback("https://gw.example/cb", CallbackConfig{})
		mustNotErr(t, err)
		e, err := c.Expect("p", authURL("genuine"))
		mustNotErr(t, err)
		defer e.Close()
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "https://gw.example/cb", nil)
		r.URL.RawQuery = q
		c.ServeHTTP(w, r)
		select {
		case <-e.ch:
			v, _ := url.ParseQuery(q)
			if v.Get("state") != "genuine" {
				t.Fatalf("%q reached the authorization", q)
			}
		default:
		}
	})
}

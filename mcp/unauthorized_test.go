package mcp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
)

// challengingServer answers every MCP request 401 with a Bearer challenge
// pointing to its protected resource metadata, which names as as its
// authorization server; attempts counts the MCP requests.
func challengingServer(t *testing.T, as string, attempts *atomic.Int32) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, srv.URL+"/mcp", as)
			return
		}
		attempts.Add(1)
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, srv.URL))
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestUnauthorizedWithoutOAuth: a connector without OAuth whose server
// answers 401 with a Bearer challenge goes to needs_authorization at its
// first attempt, with one message naming the server's authorization
// server (read from the metadata the challenge points to) and the option
// that would reach it; it never says "reconnecting", and a second failed
// attempt adds no state.
func TestUnauthorizedWithoutOAuth(t *testing.T) {
	leakCheck(t)
	var attempts atomic.Int32
	srv := challengingServer(t, "https://as.example.com", &attempts)
	retried := make(chan struct{})
	var backoffs atomic.Int32
	r := start(t, srv.URL+"/mcp", true, OptReconnect(Reconnect{BackoffMin: time.Millisecond, BackoffMax: time.Millisecond}), func(o *options) error {
		o.hooks.beforeBackoff = func(int, time.Duration) {
			if backoffs.Add(1) == 2 {
				close(retried)
			}
		}
		return nil
	})
	st := r.states.wait(t, toolkit.StatusNeedsAuthorization, 1)
	for _, want := range []string{"https://as.example.com", "OptOAuth", "oauth:", "401"} {
		if !strings.Contains(st.LastError, want) {
			t.Errorf("LastError %q does not say %q", st.LastError, want)
		}
	}
	<-retried
	mustNotErr(t, r.stop(t))
	if n := r.states.count(toolkit.StatusNeedsAuthorization); n != 1 {
		t.Errorf("%d needs_authorization states, want 1 (%s)", n, r.states.statuses())
	}
	if n := r.states.count(toolkit.StatusReconnecting); n != 0 {
		t.Errorf("reconnecting reported: %s", r.states.statuses())
	}
}

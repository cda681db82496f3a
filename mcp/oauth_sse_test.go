package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// TestOAuthSSE: a connector on the legacy SSE transport authorizes itself
// like a streamable one, calls with the token, authorizes again when the
// token is revoked, and keeps the token out of its logs and state.
func TestOAuthSSE(t *testing.T) {
	s := newOAuthServer(t)
	var asked atomic.Int32
	logs := newLogCapture()
	cfg := oauth.Config{Authorize: s.consent(&asked, nil, 0, nil), RedirectURL: "http://127.0.0.1:9/callback"}
	ctx := context.Background()
	r := start(t, s.URL+"/sse", false, OptOAuth(oauth.AuthorizationCode(cfg)), OptLogger(slogNew(logs)))
	if got := r.State().ProtocolVersion; got == "" {
		t.Fatalf("state %+v", r.State())
	}
	if err := callEcho(t, ctx, r); err != nil {
		t.Fatalf("call after authorization: %v", err)
	}
	if asked.Load() != 1 {
		t.Fatalf("asked the user %d times, want 1", asked.Load())
	}
	// A revoked token: the next request is refused with 401, the user is
	// asked again and the request goes through.
	s.revoke()
	if err := callEcho(t, ctx, r); err != nil {
		t.Fatalf("call after the token was revoked: %v", err)
	}
	if asked.Load() != 2 {
		t.Fatalf("asked the user %d times, want 2", asked.Load())
	}
	state := r.State()
	mustNotErr(t, r.stop(t))
	for _, rec := range append(logs.all(), fmt.Sprintf("%+v", state)) {
		if strings.Contains(rec, "secret-") {
			t.Errorf("a token leaked: %s", rec)
		}
	}
}

// TestOAuthSSEWithout: without OptOAuth, a protected SSE server fails the
// connection with its 401.
func TestOAuthSSEWithout(t *testing.T) {
	s := newOAuthServer(t)
	r := start(t, s.URL+"/sse", true, OptReconnect(Reconnect{MaxAttempts: 1}))
	r.states.wait(t, toolkit.StatusFailed, 1)
	if err := r.stop(t); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("Run: %v, want Unauthorized", err)
	}
}

package oauth

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/llmkit/toolkit/internal/errs"
)

// memRelay is a RedirectRelay between the callbacks of one test, as a
// shared store is between replicas.
type memRelay struct {
	mu    sync.Mutex
	takes []func(Redirect) bool
	ready chan struct{} // closed once n listen
	n     int
}

func newMemRelay(n int) *memRelay { return &memRelay{ready: make(chan struct{}), n: n} }

func (m *memRelay) Relay(_ context.Context, r Redirect) (bool, error) {
	m.mu.Lock()
	takes := append([]func(Redirect) bool(nil), m.takes...)
	m.mu.Unlock()
	for _, take := range takes {
		if take(r) {
			return true, nil
		}
	}
	return false, nil
}

func (m *memRelay) Listen(ctx context.Context, take func(Redirect) bool) error {
	m.mu.Lock()
	m.takes = append(m.takes, take)
	if len(m.takes) == m.n {
		close(m.ready)
	}
	m.mu.Unlock()
	<-ctx.Done()
	return ctx.Err()
}

// TestCallbackRelay: an authorization started on replica A whose redirect
// the load balancer brings to replica B completes on A, once; a redirect
// no replica waits for, or replayed, is refused on both.
func TestCallbackRelay(t *testing.T) {
	relay := newMemRelay(2)
	var cbs []*Callback
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		c, err := NewCallback("https://gw.example/oauth/callback", CallbackConfig{Relay: relay})
		mustNotErr(t, err)
		cbs = append(cbs, c)
		wg.Add(1)
		go func() { defer wg.Done(); c.ListenRelay(ctx) }()
	}
	defer func() { cancel(); wg.Wait() }()
	<-relay.ready
	a, b := cbs[0], cbs[1]
	e, err := a.Expect("jwt:alice", authURL("state-a"))
	mustNotErr(t, err)
	defer e.Close()
	if got := redirect(b, "GET", "/oauth/callback", "code=forged&state=state-x"); got != http.StatusBadRequest {
		t.Errorf("an unknown state on B: %d, want 400", got)
	}
	if got := redirect(b, "GET", "/oauth/callback", "code=code-a&state=state-a&iss=https%3A%2F%2Fas.example"); got != http.StatusOK {
		t.Fatalf("A's redirect on B: %d, want 200", got)
	}
	res, err := e.Wait(context.Background())
	if err != nil || res.Code != "code-a" || res.Iss != "https://as.example" {
		t.Fatalf("A's Wait = %+v, %v", res, err)
	}
	for _, c := range cbs {
		if got := redirect(c, "GET", "/oauth/callback", "code=code-a&state=state-a"); got != http.StatusBadRequest {
			t.Errorf("the redirect replayed: %d, want 400", got)
		}
	}
	// A refusal travels too.
	e2, err := a.Expect("jwt:bob", authURL("state-b"))
	mustNotErr(t, err)
	defer e2.Close()
	if got := redirect(b, "GET", "/oauth/callback", "error=access_denied&code=x&state=state-b"); got != http.StatusForbidden {
		t.Errorf("a refusal on B: %d, want 403", got)
	}
	if _, err := e2.Wait(context.Background()); err == nil || !strings.Contains(err.Error(), "access_denied") {
		t.Errorf("the refused authorization: %v", err)
	}
	noRelay, _ := NewCallback("https://gw.example/oauth/callback", CallbackConfig{})
	if err := noRelay.ListenRelay(ctx); !errors.Is(err, errs.ErrBadParameter) {
		t.Errorf("ListenRelay without a relay: %v", err)
	}
}

package mcp

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// fakeClock is a clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (f *fakeClock) Now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now }
func (f *fakeClock) add(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

// startPerClient runs a connector with per-client sessions (at most max)
// on an in-memory server, with the clock given; closed counts the
// client sessions closed.
func startPerClient(t *testing.T, max int, clock *fakeClock, closed chan<- struct{}, opts ...Option) *running {
	t.Helper()
	s := newServer(t, testserver.Options{})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	opts = append([]Option{OptDialer(m.Dial), OptPerClient(ClientSessionLimits{Max: max}), func(o *options) error {
		o.hooks.now = clock.Now
		o.hooks.clientClosed = func() { closed <- struct{}{} }
		return nil
	}}, opts...)
	return start(t, "memory://up", false, opts...)
}

// TestPerClientPrincipalShare: one principal cannot take every client
// session. At its share its next client takes the place of its own idle
// session, never another principal's; when none of its sessions is idle
// it is refused with an error naming its share, while another principal
// still opens one; at the connector's maximum the least recently used
// idle session of anyone makes room, and with none idle the refusal names
// the maximum.
func TestPerClientPrincipalShare(t *testing.T) {
	leakCheck(t)
	clock := &fakeClock{now: time.Unix(1_000_000, 0)}
	closed := make(chan struct{}, 16)
	r := startPerClient(t, 4, clock, closed, OptPerClient(ClientSessionLimits{PerPrincipal: 2}))
	ctx := context.Background()
	open := func(cl *principalClient) error {
		up, err := r.clientSessions().readyClient(ctx, cl)
		if err == nil && up.err != nil {
			err = up.err
		}
		return err
	}
	has := func(cl *principalClient) bool {
		pc := r.clientSessions()
		pc.mu.Lock()
		defer pc.mu.Unlock()
		return pc.by[cl] != nil
	}
	mallory1, mallory2, mallory3 := &principalClient{"mallory"}, &principalClient{"mallory"}, &principalClient{"mallory"}
	alice, bob, carol := &principalClient{"alice"}, &principalClient{"bob"}, &principalClient{"carol"}
	for _, cl := range []*principalClient{mallory1, mallory2} {
		mustNotErr(t, open(cl))
	}
	err := open(mallory3)
	if !errors.Is(err, ErrTooManyClientSessions) || !strings.Contains(err.Error(), `principal "mallory"`) || !strings.Contains(err.Error(), "max_upstream_sessions_per_principal") {
		t.Fatalf("mallory's third session: %v, want her share refused", err)
	}
	mustNotErr(t, open(alice))

	// A minute later mallory's sessions are idle: her third takes the
	// place of her first, the least recently used.
	clock.add(reclaimAfter)
	mustNotErr(t, open(mallory2)) // used again
	clock.add(time.Second)
	mustNotErr(t, open(mallory3))
	<-closed
	if has(mallory1) || !has(mallory2) {
		t.Error("mallory's third session did not take the place of her first")
	}
	if open, _ := r.ClientSessions(); open != 3 {
		t.Errorf("%d client sessions open, want 3", open)
	}

	// Four open: at the maximum, carol takes the place of alice's idle
	// session, the least recently used.
	mustNotErr(t, open(bob))
	clock.add(reclaimAfter)
	mustNotErr(t, open(mallory2))
	mustNotErr(t, open(mallory3))
	mustNotErr(t, open(bob))
	mustNotErr(t, open(carol))
	<-closed
	if has(alice) {
		t.Error("alice's idle session is still open")
	}
	err = open(alice)
	if !errors.Is(err, ErrTooManyClientSessions) || !strings.Contains(err.Error(), "the most allowed for all principals (OptPerClient, max_upstream_sessions)") {
		t.Fatalf("alice at the maximum: %v, want the maximum named", err)
	}
	mustNotErr(t, r.stop(t))
}

// TestPerClientSessionlessPerPrincipal: calls without a client session
// of two principals go on two upstream sessions, each principal's own;
// an anonymous remote call without a session is refused, and an
// in-process call goes on the connector's own session.
func TestPerClientSessionlessPerPrincipal(t *testing.T) {
	leakCheck(t)
	closed := make(chan struct{}, 16)
	r := startPerClient(t, 4, &fakeClock{now: time.Now()}, closed)
	ctx := context.Background()
	la, err := sessionOf(r.Connector, toolkit.WithPrincipal(ctx, "alice"))
	mustNotErr(t, err)
	lb, err := sessionOf(r.Connector, toolkit.WithPrincipal(ctx, "bob"))
	mustNotErr(t, err)
	la2, err := sessionOf(r.Connector, toolkit.WithPrincipal(ctx, "alice"))
	mustNotErr(t, err)
	own, err := sessionOf(r.Connector, ctx)
	mustNotErr(t, err)
	if la == lb || la != la2 || own == la || own == lb {
		t.Errorf("sessions: alice %p and %p, bob %p, in-process %p; want alice's, bob's and the connector's apart", la, la2, lb, own)
	}
	_, err = sessionOf(r.Connector, toolkit.ContextWithSession(ctx, newTestSession("anonymous")))
	if !errors.Is(err, ErrNoClientSession) || !errors.Is(err, toolkit.ErrDenied) {
		t.Errorf("anonymous call without a session: %v", err)
	}
	mustNotErr(t, r.stop(t))
	<-closed
	<-closed
}

// sessionOf returns the session c's upstream gives a request made in ctx.
func sessionOf(c *Connector, ctx context.Context) (*live, error) {
	_, l, err := c.up.session(ctx)
	return l, err
}

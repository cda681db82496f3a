package toolkit

import (
	"context"
	"testing"
)

// extraSession is a session with an optional method of its own.
type extraSession struct{ localSession }

func (*extraSession) Extra() string { return "extra" }

// TestSessionAsThroughHooks checks that an optional method of a session
// stays reachable through the sessions WithProgressFunc and
// WithSessionLogger wrap around it.
func TestSessionAsThroughHooks(t *testing.T) {
	type extra interface{ Extra() string }
	base := &extraSession{localSession{id: "client-1"}}
	ctx := ContextWithSession(context.Background(), base)
	ctx = WithProgressFunc(ctx, func(float64, float64, string) {})
	ctx = WithSessionLogger(ctx, nil)
	s := SessionFromContext(ctx)
	if _, ok := s.(extra); ok {
		t.Fatal("the hook session itself has the optional method; the test proves nothing")
	}
	got, ok := SessionAs[extra](s)
	if !ok || got.Extra() != "extra" {
		t.Fatalf("SessionAs = %v, %v; want the wrapped session", got, ok)
	}
	if s.ID() != "client-1" {
		t.Errorf("ID %q, want the wrapped session's", s.ID())
	}
	if _, ok := SessionAs[extra](&localSession{id: "x"}); ok {
		t.Error("SessionAs found a method that no session in the chain has")
	}
	if _, ok := SessionAs[extra](nil); ok {
		t.Error("SessionAs(nil) found something")
	}
}

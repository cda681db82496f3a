package policy

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
)

// fakeLimits is a LimitStore that records what it is asked and answers
// as told.
type fakeLimits struct {
	mu      sync.Mutex
	asked   [][]Budget
	refused int
	wait    time.Duration
	err     error
}

func (f *fakeLimits) Take(_ context.Context, budgets []Budget) (int, time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, append([]Budget(nil), budgets...))
	if f.err != nil {
		return -1, 0, f.err
	}
	return f.refused, f.wait, nil
}

func TestLimitStoreBudgets(t *testing.T) {
	store := &fakeLimits{refused: -1}
	cfg := Config{RateLimits: []Limit{
		{Name: "per-user", Per: "principal", Rate: Rate{2, time.Second}},
		{Name: "per-tool", Per: "tool", Rate: Rate{10, time.Minute}, Burst: 3},
		{Name: "other", Tools: []string{"other"}, Rate: Rate{1, time.Second}},
	}}
	e := mustEngine(t, cfg, WithLimitStore(store, false))
	tool := newFake("t", "")
	if d := call(e, "alice", tool); d.Effect != toolkit.Allow {
		t.Fatalf("admitted by the store: %+v", d)
	}
	if len(store.asked) != 1 || len(store.asked[0]) != 2 {
		t.Fatalf("the store was asked %v; want one call with the two matching budgets", store.asked)
	}
	user, perTool := store.asked[0][0], store.asked[0][1]
	if user.Every != 2 || user.Burst != 2 || !strings.Contains(user.Key, "alice") {
		t.Errorf("per-user budget %+v", user)
	}
	if perTool.Burst != 3 || strings.Contains(perTool.Key, "alice") || !strings.Contains(perTool.Key, "\x00ns\x00t") {
		t.Errorf("per-tool budget %+v", perTool)
	}
	// The same budget from another engine (a replica) has the same key.
	e2 := mustEngine(t, cfg, WithLimitStore(store, false))
	call(e2, "alice", tool)
	if got := store.asked[1][0].Key; got != user.Key {
		t.Errorf("another engine's key %q, want %q", got, user.Key)
	}
	// A refusal names the limit the store says.
	store.refused, store.wait = 1, 3*time.Second
	d := call(e, "alice", tool)
	if d.Effect != toolkit.Deny || d.Rule != "per-tool" || d.RetryAfter != 3*time.Second {
		t.Errorf("refused by the store: %+v", d)
	}
	// Listings never reach the store.
	n := len(store.asked)
	if d := e.Decide(context.Background(), toolkit.PolicyRequest{Principal: "alice", Namespace: "ns", Tool: tool, Listing: true}); d.Effect != toolkit.Allow {
		t.Errorf("listing: %+v", d)
	}
	if len(store.asked) != n {
		t.Errorf("a listing asked the store")
	}
}

func TestLimitStoreUnavailable(t *testing.T) {
	down := errors.New("connection refused")
	cfg := Config{RateLimits: []Limit{{Name: "per-user", Per: "principal", Rate: Rate{2, time.Second}}}}
	tool := newFake("t", "")
	open := mustEngine(t, cfg, WithLimitStore(&fakeLimits{err: down}, true))
	if d := call(open, "alice", tool); d.Effect != toolkit.Allow {
		t.Errorf("fail open: %+v", d)
	}
	closed := mustEngine(t, cfg, WithLimitStore(&fakeLimits{err: down}, false))
	d := call(closed, "alice", tool)
	if d.Effect != toolkit.Deny || d.Rule != "per-user" || !strings.Contains(d.Reason, "unavailable") || d.RetryAfter <= 0 {
		t.Errorf("fail closed: %+v", d)
	}
	if _, err := New(context.Background(), cfg, WithLimitStore(nil, true), WithLogger(slog.New(slog.DiscardHandler))); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("a nil store: %v", err)
	}
}

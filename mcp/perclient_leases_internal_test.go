package mcp

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
)

// memLeases is a SessionLeases in memory, shared by the connectors of a
// test as a store is by the processes of a fleet; down makes it fail.
type memLeases struct {
	mu   sync.Mutex
	by   map[string]map[string]bool
	down bool
}

func (m *memLeases) Lease(_ context.Context, key, id string, limit int, _ time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return false, toolkit.ErrUnavailable
	}
	if m.by == nil {
		m.by = map[string]map[string]bool{}
	}
	held := m.by[key]
	if held == nil {
		held = map[string]bool{}
		m.by[key] = held
	}
	if !held[id] && len(held) >= limit {
		return false, nil
	}
	held[id] = true
	return true, nil
}

func (m *memLeases) Release(_ context.Context, key, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.by[key], id)
	return nil
}

// TestPerClientShareAcrossProcesses: two connectors sharing leases (two
// replicas) hold a principal to one share of 2: the third session, on
// either, is refused naming the share across processes, another
// principal still opens one; while the leases cannot be reached a
// session is admitted by the process's own count.
func TestPerClientShareAcrossProcesses(t *testing.T) {
	leakCheck(t)
	clock := &fakeClock{now: time.Unix(1_000_000, 0)}
	closed := make(chan struct{}, 16)
	leases := &memLeases{}
	limits := OptPerClient(ClientSessionLimits{PerPrincipal: 2, Leases: leases})
	r1 := startPerClient(t, 4, clock, closed, limits)
	r2 := startPerClient(t, 4, clock, closed, limits)
	ctx := context.Background()
	open := func(r *running, cl *principalClient) error {
		up, err := r.clientSessions().readyClient(ctx, cl)
		if err == nil && up.err != nil {
			err = up.err
		}
		return err
	}
	mustNotErr(t, open(r1, &principalClient{"mallory"}))
	mustNotErr(t, open(r2, &principalClient{"mallory"}))
	for _, r := range []*running{r1, r2} {
		err := open(r, &principalClient{"mallory"})
		if !errors.Is(err, ErrTooManyClientSessions) || !strings.Contains(err.Error(), `principal "mallory"`) || !strings.Contains(err.Error(), "across the processes") {
			t.Fatalf("mallory's third session: %v, want her share across processes refused", err)
		}
		<-closed
	}
	mustNotErr(t, open(r2, &principalClient{"alice"}))

	leases.mu.Lock()
	leases.down = true
	leases.mu.Unlock()
	mustNotErr(t, open(r1, &principalClient{"bob"}))
	mustNotErr(t, r1.stop(t))
	mustNotErr(t, r2.stop(t))
}

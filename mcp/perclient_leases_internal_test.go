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

// TestPerClientOverShareClosed: sessions admitted while the leases could
// not be reached leave a principal over its share across processes once
// they can: the renewal that is refused closes the least recently used
// of the principal's sessions in its process, whose lease goes to the
// session refused, so that the fleet holds the share again.
func TestPerClientOverShareClosed(t *testing.T) {
	leakCheck(t)
	clock := &fakeClock{now: time.Unix(1_000_000, 0)}
	closed := make(chan struct{}, 16)
	leases := &memLeases{down: true}
	limits := OptPerClient(ClientSessionLimits{PerPrincipal: 2, Leases: leases})
	r1 := startPerClient(t, 4, clock, closed, limits)
	r2 := startPerClient(t, 4, clock, closed, limits)
	ctx := context.Background()
	open := func(r *running) *clientUpstream {
		t.Helper()
		up, err := r.clientSessions().readyClient(ctx, &principalClient{"mallory"})
		if err == nil {
			err = up.err
		}
		mustNotErr(t, err)
		clock.add(time.Second)
		return up
	}
	old, recent, other := open(r1), open(r1), open(r2) // three, for a share of two

	leases.mu.Lock()
	leases.down = false
	leases.mu.Unlock()
	p1, p2 := r1.clientSessions(), r2.clientSessions()
	p2.renewLease(ctx, other)
	p1.renewLease(ctx, old)
	p1.renewLease(ctx, recent) // refused: the share is full
	select {
	case <-closed:
	case <-time.After(waitLimit):
		t.Fatal("no session closed when the principal is over its share")
	}
	select {
	case <-old.stop:
	default:
		t.Fatal("the session closed is not the least recently used")
	}
	if !recent.lease.held || !other.lease.held {
		t.Errorf("leases held: recent %v, other %v; want both", recent.lease.held, other.lease.held)
	}
	leases.mu.Lock()
	n := len(leases.by[p1.c.label()+"\x00mallory"])
	leases.mu.Unlock()
	if n != 2 {
		t.Errorf("%d leases held, want the share of 2", n)
	}
	mustNotErr(t, r1.stop(t))
	mustNotErr(t, r2.stop(t))
}

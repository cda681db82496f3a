package scaleout

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFleetRedisDown: Redis killed under load, then started again. No
// replica crashes; every call is answered all along (the rate limit fails
// open, by default); each replica's /healthz says the state is unavailable,
// then ok once Redis is back, which each finds by itself; and the pins,
// with the approval made before, are all there after: the approved
// definition is listed and called on every replica.
func TestFleetRedisDown(t *testing.T) {
	const (
		clients = 16
		batch   = 200 // calls finished in each phase
	)
	f := startFleet(t, fleetOptions{shared: true, rateLimit: "{name: fleet, rate: 100000/m, burst: 100000}"})
	ctx := t.Context()
	hc := newHTTPClient(t)
	sessions := make([]*sdk.ClientSession, clients)
	for i := range sessions {
		cs, err := connect(ctx, hc, f.url, protocolSession)
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		t.Cleanup(func() { cs.Close() })
		sessions[i] = cs
	}
	// An approval made before Redis goes down.
	lists := f.watchLists(t, hc)
	lists.until(t, true)
	f.ups[0].setLookup(changedDescription)
	lists.until(t, false)
	f.approve(t, lists)
	pinsBefore, err := f.pins(t, "list", "--all")
	if err != nil {
		t.Fatalf("pins list: %v\n%s", err, pinsBefore)
	}

	var (
		calls  callCounter
		failed atomic.Int64
		stop   = make(chan struct{})
		wg     sync.WaitGroup
	)
	warm := calls.after(batch)
	for i, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := lookup(ctx, cs, fmt.Sprint(i, "-", n)); err != nil {
					if failed.Add(1) <= 5 {
						t.Errorf("client %d, call %d: %v", i, n, err)
					}
				}
				calls.add()
			}
		}()
	}
	halt := sync.OnceFunc(func() {
		close(stop)
		wg.Wait()
	})
	defer halt()

	<-warm
	f.redis.Kill()
	down := calls.after(batch)
	for _, r := range f.replicas {
		if code, state, err := healthState(ctx, r); err != nil || code != http.StatusServiceUnavailable || state != "unavailable" {
			t.Errorf("replica %s with Redis down: healthz %d, state %q, %v", r.name, code, state, err)
		}
	}
	<-down
	f.redis.Restart()
	for _, r := range f.replicas {
		err := waitState(ctx, r, http.StatusOK, "ok")
		if err != nil {
			t.Errorf("replica %s with Redis back: %v", r.name, err)
		}
	}
	<-calls.after(batch)
	halt()

	t.Logf("%d calls, %d failed, %d executed upstream", calls.load(), failed.Load(), f.executed.Load())
	if failed.Load() != 0 || f.executed.Load() != calls.load() {
		t.Errorf("%d calls, %d failed, %d executed upstream", calls.load(), failed.Load(), f.executed.Load())
	}
	pinsAfter, err := f.pins(t, "list", "--all")
	if err != nil || pinsAfter != pinsBefore || strings.Contains(pinsAfter, "quarantined") {
		t.Errorf("pins before Redis went down:\n%s\nafter (%v):\n%s", pinsBefore, err, pinsAfter)
	}
	lists.until(t, true)
	f.checkAlive(t)
}

// waitState polls a replica's /healthz until it answers code with state.
func waitState(ctx context.Context, r *replica, code int, state string) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	return poll(ctx, r.process, func() error {
		got, gotState, err := healthState(ctx, r)
		if err != nil {
			return err
		}
		if got != code || gotState != state {
			return fmt.Errorf("healthz %d, state %q", got, gotState)
		}
		return nil
	})
}

// callCounter counts finished calls and tells when a number of them have
// finished.
type callCounter struct {
	mu    sync.Mutex
	n     int64
	waits map[int64]chan struct{}
}

// add counts one call.
func (c *callCounter) add() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if ch, ok := c.waits[c.n]; ok {
		close(ch)
		delete(c.waits, c.n)
	}
}

// after returns a channel closed once k more calls have finished.
func (c *callCounter) after(k int64) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waits == nil {
		c.waits = map[int64]chan struct{}{}
	}
	target := c.n + k
	ch, ok := c.waits[target]
	if !ok {
		ch = make(chan struct{})
		c.waits[target] = ch
	}
	return ch
}

// load returns the number of calls finished.
func (c *callCounter) load() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

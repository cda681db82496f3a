package toolkit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// runState is the state of an active Run.
type runState struct {
	ctx context.Context
}

// Backoff bounds for restarting a connector whose Run returned.
const (
	minRestart = 100 * time.Millisecond
	maxRestart = 30 * time.Second
	// stableRun is how long a connector's Run must last for the backoff to
	// start again from minRestart.
	stableRun = 30 * time.Second
)

// Run starts every registered connector (including the user connector) and
// blocks until ctx is cancelled. Connectors added while it runs start at
// once. A connector whose Run returns early is restarted with exponential
// backoff and jitter. When ctx is cancelled Run stops every connector and
// waits for them (a bounded time each), then waits for the subscribers
// (the delegate included) to receive their pending events — at most 5
// seconds, after which it logs how many are left (they are still
// delivered) — and returns nil. The toolkit cannot be run again: a second
// Run, or a Run while another is active, wraps ErrConflict.
func (tk *Toolkit) Run(ctx context.Context) error {
	tk.mu.Lock()
	if tk.run != nil || tk.closed {
		tk.mu.Unlock()
		return fmt.Errorf("%w: the toolkit is already running or has run", ErrConflict)
	}
	rs := &runState{ctx: ctx}
	tk.run = rs
	for _, cn := range tk.conns {
		tk.startConn(cn)
	}
	if tk.user != nil {
		tk.startConn(tk.user)
	}
	tk.mu.Unlock()

	<-ctx.Done()

	tk.mu.Lock()
	tk.closed = true
	tk.signal()
	conns := append([]*conn(nil), tk.conns...)
	if tk.user != nil {
		conns = append(conns, tk.user)
	}
	tk.mu.Unlock()
	for _, cn := range conns {
		tk.mu.Lock()
		done := cn.done
		tk.mu.Unlock()
		if done != nil {
			tk.awaitStop(cn, done)
		}
	}
	if !tk.feed.wait(tk.drainTimeout) {
		tk.logger.Warn("toolkit: stopped with events not yet delivered", "pending", tk.feed.pending(), "waited", tk.drainTimeout)
	}
	return nil
}

// startConn starts the supervisor of cn, unless it has started or has no
// connector (being created, or a user connector the delegate could not
// make). tk.mu must be held and tk.run set.
func (tk *Toolkit) startConn(cn *conn) {
	if cn.done != nil || cn.c == nil {
		return
	}
	ctx, cancel := context.WithCancel(withConnectorNamespace(tk.run.ctx, cn.ns))
	cn.cancel, cn.done = cancel, make(chan struct{})
	if cn.state.Status == StatusStopped {
		st := cn.state
		st.Status = StatusConnecting
		tk.setState(cn, st)
	}
	go tk.supervise(ctx, cn, cn.c, cn.done)
}

// supervise runs a connector until ctx is cancelled, restarting its Run
// with backoff when it returns early.
func (tk *Toolkit) supervise(ctx context.Context, cn *conn, c Connector, done chan struct{}) {
	defer close(done)
	delay := minRestart
	for {
		started := time.Now()
		err := runConnector(ctx, c)
		if ctx.Err() != nil {
			break
		}
		if time.Since(started) >= stableRun {
			delay = minRestart
		}
		wait := jitter(delay)
		tk.logger.Warn("toolkit: connector stopped; restarting", "namespace", cn.ns, "url", RedactURL(cn.url), "err", err, "retry_in", wait)
		tk.mu.Lock()
		st := cn.state
		st.Status, st.ConnectedSince = StatusReconnecting, time.Time{}
		if err != nil {
			st.LastError = err.Error()
		}
		tk.setState(cn, st)
		tk.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		if ctx.Err() != nil {
			break
		}
		delay = min(delay*2, maxRestart)
	}
	tk.mu.Lock()
	st := cn.state
	st.Status, st.ConnectedSince = StatusStopped, time.Time{}
	tk.setState(cn, st)
	tk.mu.Unlock()
}

// runConnector runs c, turning a panic into an error.
func runConnector(ctx context.Context, c Connector) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: connector panicked: %v", ErrUnavailable, r)
		}
	}()
	return c.Run(ctx)
}

// jitter spreads d by ±20%.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()*0.4-0.2)*float64(d))
}

// awaitStop waits for a connector's supervisor to end, logging (and giving
// up) after stopTimeout if its Run ignores cancellation.
func (tk *Toolkit) awaitStop(cn *conn, done chan struct{}) {
	t := time.NewTimer(stopTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		tk.logger.Error("toolkit: connector did not stop after cancellation", "namespace", cn.ns, "url", RedactURL(cn.url), "waited", stopTimeout)
	}
}

package mcp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

var fastBackoff = OptReconnect(Reconnect{BackoffMin: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond})

func TestServerKilledMidCall(t *testing.T) {
	cases := []struct {
		mode     testserver.Mode
		protocol string
	}{
		{testserver.Stateful, StatefulProtocolVersion},
		{testserver.Stateless, StatefulProtocolVersion},
		{testserver.Stateful, StatelessProtocolVersion},
		{testserver.Stateless, StatelessProtocolVersion},
		{testserver.SSE, StatefulProtocolVersion},
	}
	for _, tc := range cases {
		t.Run(tc.mode.String()+"/"+tc.protocol, func(t *testing.T) {
			s := newServer(t, testserver.Options{})
			h := testserver.ServeHTTP(t, s.Server, tc.mode)
			r := start(t, h.URL, false, fastBackoff, OptProtocolVersion(tc.protocol))
			done := make(chan error, 1)
			go func() {
				_, err := call(t, context.Background(), r.Connector, "block", `{"tag":"k"}`)
				done <- err
			}()
			recvString(t, s.Started)
			h.Kill()
			select {
			case err := <-done:
				if !errors.Is(err, toolkit.ErrUnavailable) || !strings.Contains(err.Error(), "testserver") {
					t.Errorf("call on a killed server: %v", err)
				}
			case <-time.After(waitLimit):
				t.Fatal("the call hangs after the server was killed")
			}
			r.states.wait(t, toolkit.StatusReconnecting, 1)
			// Lists stay served from the cache meanwhile.
			if tools, _ := r.ListTools(context.Background()); len(tools) == 0 {
				t.Error("no tools while reconnecting")
			}
			mustNotErr(t, h.Start())
			r.states.wait(t, toolkit.StatusReady, 2)
			out, err := call(t, context.Background(), r.Connector, "echo", `{"text":"back"}`)
			mustNotErr(t, err)
			if read(t, out) != "back" {
				t.Error("echo after restart failed")
			}
		})
	}
}

func TestServerRestartedBetweenCalls(t *testing.T) {
	for _, mode := range []testserver.Mode{testserver.Stateful, testserver.Stateless, testserver.SSE} {
		t.Run(mode.String(), func(t *testing.T) {
			s := newServer(t, testserver.Options{})
			h := testserver.ServeHTTP(t, s.Server, mode)
			r := start(t, h.URL, false, fastBackoff)
			h.Kill()
			mustNotErr(t, h.Start())
			// The connector may not have noticed the restart yet (a
			// keep-alive connection of the old server may break under the
			// call). echo is read-only, so it is sent again on the next
			// session: the first call after the restart works.
			out, err := call(t, context.Background(), r.Connector, "echo", `{"text":"again"}`)
			mustNotErr(t, err)
			if read(t, out) != "again" {
				t.Error("echo after restart failed")
			}
			// A tool that may have side effects is never sent twice: after
			// another restart its first call works or fails as unavailable.
			h.Kill()
			mustNotErr(t, h.Start())
			if _, err := call(t, context.Background(), r.Connector, "structured", `{"a":1,"b":2}`); err != nil && !errors.Is(err, toolkit.ErrUnavailable) {
				t.Errorf("unannotated tool after restart: %v", err)
			}
		})
	}
}

func TestMemoryReconnect(t *testing.T) {
	leakCheck(t)
	r, _, m := memoryConnector(t, testserver.Options{}, fastBackoff)
	before := findTool(t, r.Connector, "echo")
	m.Drop()
	r.states.wait(t, toolkit.StatusReady, 2)
	if r.states.count(toolkit.StatusReconnecting) == 0 {
		t.Error("no reconnecting state")
	}
	if findTool(t, r.Connector, "echo") != before {
		t.Error("an unchanged tool was replaced on reconnection")
	}
	out, err := call(t, context.Background(), r.Connector, "echo", `{"text":"x"}`)
	mustNotErr(t, err)
	if read(t, out) != "x" {
		t.Error("echo after reconnection failed")
	}
	mustNotErr(t, r.stop(t))
	m.Close()
}

func TestFlappingServerBacksOff(t *testing.T) {
	// The server closes the session when the client says it is
	// initialized: a server of the initialize handshake.
	flapping := testserver.Flapping()
	flapping.SupportedProtocolVersions = []string{StatefulProtocolVersion}
	s := newServer(t, testserver.Options{Server: flapping})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	type step struct {
		attempt int
		d       time.Duration
	}
	const n = 8
	steps := make(chan step, 100)
	min, max := time.Millisecond, 16*time.Millisecond
	r := start(t, "memory://flap", true, OptDialer(m.Dial), OptReconnect(Reconnect{BackoffMin: min, BackoffMax: max}), OptReconnect(Reconnect{StableAfter: time.Hour}),
		withBeforeBackoff(func(a int, d time.Duration) { steps <- step{a, d} }))
	var got []step
	for len(got) < n {
		select {
		case st := <-steps:
			got = append(got, st)
		case <-time.After(waitLimit):
			t.Fatalf("only %d backoff steps: %v", len(got), got)
		}
	}
	r.stop(t)
	for i, st := range got {
		// The backoff never starts over: the server never stays up. A
		// session lost after the handshake is retried at once the first
		// time only; a failed handshake counts one more.
		if st.attempt < i || st.attempt > i+1 || (i > 0 && st.attempt < got[i-1].attempt) {
			t.Fatalf("attempts %v: want growing steps", got)
		}
		if st.attempt == 0 {
			if i != 0 || st.d != 0 {
				t.Fatalf("steps %v: only the first may be immediate", got)
			}
			continue
		}
		base := min << (st.attempt - 1)
		if base > max {
			base = max
		}
		if st.d < base/2 || st.d > base {
			t.Errorf("attempt %d waited %v, want between %v and %v", st.attempt, st.d, base/2, base)
		}
	}
	if d := r.link.dials.Load(); d < n || d > n+1 {
		t.Errorf("%d connection attempts for %d backoff steps", d, n)
	}
}

func TestBackoffDelays(t *testing.T) {
	c, err := New("memory://x", "c", "1", OptDialer(testserver.NewMemory(nil).Dial), OptReconnect(Reconnect{BackoffMin: 100 * time.Millisecond, BackoffMax: time.Second}))
	mustNotErr(t, err)
	if d := c.backoffDelay(0); d != 0 {
		t.Errorf("attempt 0 waits %v", d)
	}
	for a, base := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 60: time.Second} {
		for range 50 {
			if d := c.backoffDelay(a); d < base/2 || d > base {
				t.Fatalf("attempt %d waits %v, want [%v, %v]", a, d, base/2, base)
			}
		}
	}
}

func TestCallWhileDown(t *testing.T) {
	r, _, m := memoryConnector(t, testserver.Options{}, fastBackoff, OptReconnect(Reconnect{Wait: 30 * time.Millisecond}))
	m.Kill()
	r.states.wait(t, toolkit.StatusReconnecting, 1)
	_, err := call(t, context.Background(), r.Connector, "echo", `{"text":"x"}`)
	if !errors.Is(err, toolkit.ErrUnavailable) || !strings.Contains(err.Error(), "testserver") || !strings.Contains(err.Error(), `"echo"`) {
		t.Errorf("call while down: %v", err)
	}

	// A call that waits long enough sees the server come back.
	r2, _, m2 := memoryConnector(t, testserver.Options{}, fastBackoff, OptReconnect(Reconnect{Wait: waitLimit}))
	m2.Kill()
	r2.states.wait(t, toolkit.StatusReconnecting, 1)
	done := make(chan error, 1)
	go func() {
		_, err := call(t, context.Background(), r2.Connector, "echo", `{"text":"x"}`)
		done <- err
	}()
	m2.Start()
	mustNotErr(t, <-done)
	m.Start()
}

func TestSlowServerDoesNotBlockOthers(t *testing.T) {
	hang := &testserver.Raw{Handle: func(testserver.RawRequest) [][]byte { return nil }}
	t.Cleanup(hang.Close)
	slow := start(t, "memory://slow", true, OptDialer(hang.Dial))
	fast, _, _ := memoryConnector(t, testserver.Options{})
	out, err := call(t, context.Background(), fast.Connector, "echo", `{"text":"quick"}`)
	mustNotErr(t, err)
	if read(t, out) != "quick" {
		t.Error("echo failed")
	}
	if st := slow.State().Status; st != toolkit.StatusConnecting {
		t.Errorf("slow connector is %v", st)
	}
	mustNotErr(t, slow.stop(t))
}

func TestRunStates(t *testing.T) {
	r, _, m := memoryConnector(t, testserver.Options{})
	ctx := context.Background()
	if err := r.Run(ctx); !errors.Is(err, toolkit.ErrConflict) {
		t.Errorf("second Run: %v", err)
	}
	mustNotErr(t, r.stop(t))
	if _, err := call(t, ctx, r.Connector, "echo", `{"text":"x"}`); !errors.Is(err, toolkit.ErrClosed) {
		t.Errorf("call after stop: %v", err)
	}
	// Run can start again.
	ctx2, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx2) }()
	r.states.wait(t, toolkit.StatusReady, 2)
	out, err := call(t, ctx, r.Connector, "echo", `{"text":"x"}`)
	mustNotErr(t, err)
	read(t, out)
	cancel()
	mustNotErr(t, <-done)
	m.Close()
}

func TestGivesUp(t *testing.T) {
	m := testserver.NewMemory(newServer(t, testserver.Options{}).Server)
	m.Kill()
	r := start(t, "memory://down", true, OptDialer(m.Dial), fastBackoff, OptReconnect(Reconnect{MaxAttempts: 3}))
	var err error
	select {
	case err = <-r.done:
		close(r.done)
	case <-time.After(waitLimit):
		t.Fatal("Run did not give up")
	}
	if !errors.Is(err, toolkit.ErrUnavailable) {
		t.Errorf("Run: %v", err)
	}
	if st := r.states.last(); st.Status != toolkit.StatusFailed || st.LastError == "" {
		t.Errorf("final state %+v", st)
	}
	if m.Dials() != 3 {
		t.Errorf("%d attempts, want 3", m.Dials())
	}
}

// A call waiting for a server that is down fails as soon as the connector
// stops, not when its reconnect wait runs out.
func TestStopReleasesWaitingCalls(t *testing.T) {
	leakCheck(t)
	waiting := make(chan struct{}, 1)
	r, _, m := memoryConnector(t, testserver.Options{}, fastBackoff,
		OptReconnect(Reconnect{Wait: time.Hour}),
		func(o *options) error { o.hooks.waiting = func() { waiting <- struct{}{} }; return nil })
	m.Kill()
	r.states.wait(t, toolkit.StatusReconnecting, 1)
	done := make(chan error, 1)
	go func() {
		_, err := call(t, context.Background(), r.Connector, "echo", `{"text":"x"}`)
		done <- err
	}()
	select {
	case <-waiting:
	case <-time.After(waitLimit):
		t.Fatal("the call never waited for a session")
	}
	mustNotErr(t, r.stop(t))
	select {
	case err := <-done:
		if !errors.Is(err, toolkit.ErrClosed) {
			t.Errorf("waiting call after stop: %v, want ErrClosed", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the waiting call was not released when the connector stopped")
	}
}

// A server back after an outage is reached as soon as a call needs it,
// even when the backoff has grown long.
func TestWaitingCallShortensBackoff(t *testing.T) {
	leakCheck(t)
	backoffs := make(chan time.Duration, 16)
	r, _, m := memoryConnector(t, testserver.Options{},
		OptReconnect(Reconnect{BackoffMin: time.Hour, BackoffMax: time.Hour}),
		OptReconnect(Reconnect{Wait: waitLimit}),
		withBeforeBackoff(func(_ int, d time.Duration) { backoffs <- d }),
		func(o *options) error { o.hooks.kickFloor = time.Millisecond; return nil })
	m.Kill()
	r.states.wait(t, toolkit.StatusReconnecting, 1)
	if d := <-backoffs; d != 0 {
		t.Fatalf("first retry after the loss waited %v", d)
	}
	if d := <-backoffs; d < time.Hour/2 {
		t.Fatalf("backoff %v, want about an hour", d)
	}
	m.Start()
	out, err := call(t, context.Background(), r.Connector, "echo", `{"text":"back"}`)
	mustNotErr(t, err)
	if read(t, out) != "back" {
		t.Error("echo after the outage failed")
	}
	mustNotErr(t, r.stop(t))
}

// backoffSteps records the backoff steps of a connector (see
// withBeforeBackoff) and lets a test wait for them.
type backoffSteps struct {
	mu     sync.Mutex
	steps  []backoffStep
	notify chan struct{}
}

type backoffStep struct {
	attempt int
	d       time.Duration
}

func newBackoffSteps() *backoffSteps { return &backoffSteps{notify: make(chan struct{}, 1)} }

func (b *backoffSteps) option() Option {
	return withBeforeBackoff(func(a int, d time.Duration) {
		b.mu.Lock()
		b.steps = append(b.steps, backoffStep{a, d})
		b.mu.Unlock()
		select {
		case b.notify <- struct{}{}:
		default:
		}
	})
}

func (b *backoffSteps) all() []backoffStep {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.steps)
}

// wait waits until n steps were taken and returns them.
func (b *backoffSteps) wait(t testing.TB, n int) []backoffStep {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		if got := b.all(); len(got) >= n {
			return got
		}
		select {
		case <-b.notify:
		case <-deadline:
			t.Fatalf("only %d backoff steps, want %d: %v", len(b.all()), n, b.all())
		}
	}
}

// A call that waits for a server still down keeps the attempts coming
// (each one cut to kickFloor after the previous failure), not only the
// first: it succeeds soon after the server returns, although every
// backoff is an hour long.
func TestWaitingCallKeepsAttemptsComing(t *testing.T) {
	leakCheck(t)
	steps := newBackoffSteps()
	waiting := make(chan struct{}, 1)
	r, _, m := memoryConnector(t, testserver.Options{},
		OptReconnect(Reconnect{BackoffMin: time.Hour, BackoffMax: time.Hour}),
		OptReconnect(Reconnect{Wait: waitLimit}),
		steps.option(),
		func(o *options) error {
			o.hooks.kickFloor = time.Millisecond
			o.hooks.waiting = func() { waiting <- struct{}{} }
			return nil
		})
	m.Kill()
	r.states.wait(t, toolkit.StatusReconnecting, 1)
	// Wait for an attempt that failed and an hour's backoff after it.
	for n := 1; steps.wait(t, n)[n-1].d < time.Hour/2; n++ {
	}
	done := make(chan error, 1)
	go func() {
		out, err := call(t, context.Background(), r.Connector, "echo", `{"text":"back"}`)
		if err == nil && read(t, out) != "back" {
			err = errors.New("wrong echo")
		}
		done <- err
	}()
	select {
	case <-waiting:
	case <-time.After(waitLimit):
		t.Fatal("the call never waited")
	}
	// The call brings attempts forward as long as it waits, each one
	// failing while the server is down.
	from := len(steps.all())
	steps.wait(t, from+3)
	m.Start()
	select {
	case err := <-done:
		mustNotErr(t, err)
	case <-time.After(waitLimit):
		t.Fatal("the call did not see the server come back")
	}
	mustNotErr(t, r.stop(t))
}

// The first attempt after a session is lost is made at once, even when the
// session was not up for Reconnect.StableAfter: a crashed server that is back is
// reached without any backoff. Only one loss a kickFloor is retried so.
func TestFirstAttemptAfterLossImmediate(t *testing.T) {
	leakCheck(t)
	steps := newBackoffSteps()
	r, _, m := memoryConnector(t, testserver.Options{},
		OptReconnect(Reconnect{BackoffMin: time.Hour, BackoffMax: time.Hour}), OptReconnect(Reconnect{StableAfter: time.Hour}), steps.option(),
		func(o *options) error { o.hooks.kickFloor = time.Hour; return nil })
	m.Drop()
	r.states.wait(t, toolkit.StatusReady, 2)
	if got := steps.all(); len(got) != 1 || got[0] != (backoffStep{0, 0}) {
		t.Errorf("backoff steps %v, want one of zero", got)
	}
	out, err := call(t, context.Background(), r.Connector, "echo", `{"text":"x"}`)
	mustNotErr(t, err)
	read(t, out)
	// A second loss within kickFloor of the first waits.
	m.Drop()
	got := steps.wait(t, 2)
	if got[1].attempt != 1 || got[1].d < time.Hour/2 {
		t.Errorf("backoff steps %v, want the second loss to back off", got)
	}
	mustNotErr(t, r.stop(t))
}

// A failed connection attempt makes the state "reconnecting", with why,
// at once, not when the backoff ends.
func TestFailedAttemptIsReconnectingAtOnce(t *testing.T) {
	leakCheck(t)
	refused := OptDialer(func(context.Context) (sdk.Transport, error) { return nil, errors.New("connection refused") })
	// The backoff outlasts the test: the state cannot wait for it.
	r := start(t, "memory://refused", true, refused, OptReconnect(Reconnect{BackoffMin: time.Hour, BackoffMax: time.Hour}))
	st := r.states.wait(t, toolkit.StatusReconnecting, 1)
	if st.LastError != "connection refused" {
		t.Errorf("reconnecting state %+v, want the attempt's error", st)
	}
	mustNotErr(t, r.stop(t))
	if got := r.states.statuses(); got != "connecting reconnecting stopped" {
		t.Errorf("states %s", got)
	}
}

// A connector that gave up and is run again (as the toolkit's Run does)
// starts as "reconnecting", still saying why it gave up.
func TestRunAfterFailingIsReconnecting(t *testing.T) {
	leakCheck(t)
	missing := OptDialer(func(context.Context) (sdk.Transport, error) {
		return nil, fmt.Errorf("no server program: %w", fs.ErrNotExist) // permanent
	})
	r := start(t, "memory://missing", true, missing)
	if err := <-r.done; !errors.Is(err, toolkit.ErrUnavailable) {
		t.Fatalf("Run: %v", err)
	}
	close(r.done)
	failed := r.states.last()
	if failed.Status != toolkit.StatusFailed || !strings.Contains(failed.LastError, "no server program") {
		t.Fatalf("state %+v, want failed", failed)
	}
	n := len(r.states.snapshot())
	if err := r.Run(context.Background()); !errors.Is(err, toolkit.ErrUnavailable) {
		t.Fatalf("Run again: %v", err)
	}
	again := r.states.snapshot()[n:]
	if len(again) != 2 || again[0].Status != toolkit.StatusReconnecting || again[0].LastError != failed.LastError || again[1].Status != toolkit.StatusFailed {
		t.Errorf("states of the second run %+v, want reconnecting with the last error, then failed", again)
	}
}

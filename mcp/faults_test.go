package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A stateful server that forgets its session while it keeps running
// answers the next request of the connector 404 (sdk.ErrSessionMissing):
// the connector reconnects, and a read-only call made after the expiry
// works (it is sent again on the new session).
func TestSessionExpiredOnLiveServer(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	h := testserver.ServeHTTP(t, s.Server, testserver.Stateful)
	r := start(t, h.URL, false, fastBackoff, OptReconnect(Reconnect{Wait: waitLimit}))
	if n := h.Expire(); n != 1 {
		t.Fatalf("%d sessions forgotten, want 1", n)
	}
	out, err := call(t, context.Background(), r.Connector, "echo", `{"text":"fresh"}`)
	mustNotErr(t, err)
	if read(t, out) != "fresh" {
		t.Error("echo after the session expired failed")
	}
	if h.Expired.Load() == 0 {
		t.Error("the server never answered 404 for the forgotten session: the expiry path was not taken")
	}
	st := r.states.wait(t, toolkit.StatusReconnecting, 1)
	if !strings.Contains(st.LastError, "session not found") {
		t.Errorf("reconnecting state = %+v, want the session-missing error", st)
	}
	r.states.wait(t, toolkit.StatusReady, 2)
	// The new session is used from now on: no more 404s, no more
	// reconnections.
	before := h.Expired.Load()
	for i := range 3 {
		out, err := call(t, context.Background(), r.Connector, "echo", fmt.Sprintf(`{"text":"%d"}`, i))
		mustNotErr(t, err)
		read(t, out)
	}
	if h.Expired.Load() != before {
		t.Error("the connector kept using the forgotten session")
	}
	if n := r.states.count(toolkit.StatusReady); n != 2 {
		t.Errorf("%d ready states, want 2 (one reconnection)", n)
	}
	mustNotErr(t, r.stop(t))
}

// A 404 for the session proves that the server did not run the request,
// so even a tool that is not safe to repeat should be sent again on the
// next session (client.go: notDelivered).
func TestSessionExpiredUnsafeCallRepeated(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	h := testserver.ServeHTTP(t, s.Server, testserver.Stateful)
	r := start(t, h.URL, false, fastBackoff, OptReconnect(Reconnect{Wait: waitLimit}))
	for i := range 50 {
		if n := h.Expire(); n == 0 {
			t.Fatal("no session to forget")
		}
		// "structured" has no annotations.
		out, err := call(t, context.Background(), r.Connector, "structured", `{"a":1,"b":2}`)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if got := read(t, out); !jsonEqual(got, `{"sum":3}`) {
			t.Fatalf("structured = %s", got)
		}
		r.states.wait(t, toolkit.StatusReady, i+2)
	}
}

// procStat returns the state letter and parent id of process pid, ok false
// when there is no such process.
func procStat(pid int) (state string, ppid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return f[0], ppid, err == nil
}

// childPids returns the processes whose parent is the test binary, zombies
// (children not reaped yet) included.
func childPids(t testing.TB) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	me := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid, ok := procStat(pid); ok && ppid == me {
			out = append(out, pid)
		}
	}
	return out
}

// reaped reports whether pid, a child of the test binary, is gone and
// waited for: no process of that id is our child any more (not even a
// zombie).
func reaped(pid int) bool {
	_, ppid, ok := procStat(pid)
	return !ok || ppid != os.Getpid()
}

// childCheck fails the test if a child process started during the test is
// still running, or was never reaped, when the test ends. Call it after
// leakCheck and before starting anything: its check runs after the
// connectors' Run returned.
func childCheck(t *testing.T) {
	t.Helper()
	requireUnix(t)
	before := childPids(t)
	t.Cleanup(func() {
		for _, pid := range childPids(t) {
			if !slices.Contains(before, pid) {
				state, _, _ := procStat(pid)
				t.Errorf("child process %d (state %s) outlived the test", pid, state)
			}
		}
	})
}

// A connected stdio server killed with SIGKILL is reaped and replaced by a
// new child; the connector is usable again.
func TestStdioChildKilled(t *testing.T) {
	leakCheck(t)
	childCheck(t)
	r := start(t, stdioURL(t, testserver.StdioServe), false, fastBackoff)
	old := serverPids(t, r)[0]
	if kids := childPids(t); !slices.Contains(kids, old) {
		t.Fatalf("server %d is not a child of the test (children %v)", old, kids)
	}
	mustNotErr(t, syscall.Kill(old, syscall.SIGKILL))
	if st := r.states.wait(t, toolkit.StatusReconnecting, 1); st.LastError == "" {
		t.Errorf("reconnecting state without an error: %+v", st)
	}
	// The supervisor noticed the exit by waiting for the child: it is
	// reaped before any new attempt.
	if !reaped(old) {
		t.Errorf("killed server %d was not reaped", old)
	}
	r.states.wait(t, toolkit.StatusReady, 2)
	pid := serverPids(t, r)[0]
	if pid == old {
		t.Fatalf("same server pid %d after the kill", pid)
	}
	if kids := childPids(t); !slices.Equal(kids, []int{pid}) {
		t.Errorf("children %v, want only the new server %d", kids, pid)
	}
	out, err := call(t, context.Background(), r.Connector, "echo", `{"text":"second child"}`)
	mustNotErr(t, err)
	if read(t, out) != "second child" {
		t.Error("echo on the new child failed")
	}
	mustNotErr(t, r.stop(t))
	if !reaped(pid) {
		t.Errorf("server %d outlived Run", pid)
	}
}

// A stdio server killed while a call runs: the call, which is not safe to
// repeat, fails with ErrUnavailable at once (not after waiting for the
// next child, which would make it succeed), and a new child is started.
func TestStdioServerKilledMidCall(t *testing.T) {
	leakCheck(t)
	childCheck(t)
	r := start(t, stdioURL(t, testserver.StdioServe), false, fastBackoff, OptReconnect(Reconnect{Wait: time.Hour}))
	pid := serverPids(t, r)[0]
	sess := newTestSession("caller")
	ctx := toolkit.ContextWithSession(context.Background(), sess)
	done := make(chan error, 1)
	go func() {
		// "progress" reports one step, then holds until released (never,
		// in a child process).
		_, err := call(t, ctx, r.Connector, "progress", `{"tag":"k","steps":1,"hold":true}`)
		done <- err
	}()
	select {
	case <-sess.note: // the call runs on the server
	case <-time.After(waitLimit):
		t.Fatal("the call never reported progress")
	}
	mustNotErr(t, syscall.Kill(pid, syscall.SIGKILL))
	select {
	case err := <-done:
		if !errors.Is(err, toolkit.ErrUnavailable) || !strings.Contains(err.Error(), `"progress"`) || !strings.Contains(err.Error(), "stdio-testserver") {
			t.Errorf("call on a killed server: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the call hangs after its server was killed")
	}
	r.states.wait(t, toolkit.StatusReady, 2)
	if again := serverPids(t, r)[0]; again == pid || !reaped(pid) {
		t.Errorf("server pid %d after the kill of %d (reaped: %v)", again, pid, reaped(pid))
	}
	mustNotErr(t, r.stop(t))
}

// An in-memory server killed while a call runs: the call fails with
// ErrUnavailable while the server is still down (so it did not wait for a
// reconnection), and the connector comes back with the server.
func TestMemoryServerKilledMidCall(t *testing.T) {
	leakCheck(t)
	r, s, m := memoryConnector(t, testserver.Options{}, fastBackoff, OptReconnect(Reconnect{Wait: time.Hour}))
	done := make(chan error, 1)
	go func() {
		_, err := call(t, context.Background(), r.Connector, "block", `{"tag":"m"}`)
		done <- err
	}()
	if tag := recvString(t, s.Started); tag != "m" {
		t.Fatalf("started %q", tag)
	}
	m.Kill()
	select {
	case err := <-done:
		if !errors.Is(err, toolkit.ErrUnavailable) || !strings.Contains(err.Error(), `"block"`) || !strings.Contains(err.Error(), "testserver") {
			t.Errorf("call on a killed server: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the call hangs after its server was killed")
	}
	// The server side of the call ended with its session.
	if tag := recvString(t, s.Cancelled); tag != "m" {
		t.Errorf("cancelled %q", tag)
	}
	r.states.wait(t, toolkit.StatusReconnecting, 1)
	if got := r.State().Status; got == toolkit.StatusReady {
		t.Fatal("ready while the server is down")
	}
	m.Start()
	r.states.wait(t, toolkit.StatusReady, 2)
	out, err := call(t, context.Background(), r.Connector, "echo", `{"text":"back"}`)
	mustNotErr(t, err)
	if read(t, out) != "back" {
		t.Error("echo after the restart failed")
	}
	mustNotErr(t, r.stop(t))
}

// A server that completes the handshake and the listing (the connector
// reaches Ready) and then drops the session at once is retried at once
// the first time, then with growing delays: the backoff never starts over,
// and every connection attempt is preceded by a step.
func TestReadyThenDropBacksOff(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	type step struct {
		attempt int
		d       time.Duration
	}
	const n = 6
	steps := make(chan step, 100)
	drops := make(chan struct{}, 100)
	st := newStates()
	minD, maxD := time.Millisecond, 8*time.Millisecond
	c, err := New("memory://flap", "test-client", "0.1",
		OptLogger(quietLogger()), OptDialer(m.Dial), OptReconnect(Reconnect{BackoffMin: minD, BackoffMax: maxD}), OptReconnect(Reconnect{StableAfter: time.Hour}),
		withBeforeBackoff(func(a int, d time.Duration) { steps <- step{a, d} }),
		OptOnStateChange(func(ctx context.Context, s *toolkit.ConnectorState) {
			st.record(ctx, s)
			if s.Status == toolkit.StatusReady {
				go func() { m.Drop(); drops <- struct{}{} }()
			}
		}))
	mustNotErr(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- c.Run(ctx) }()
	var got []step
	for len(got) < n {
		select {
		case s := <-steps:
			got = append(got, s)
		case <-time.After(waitLimit):
			t.Fatalf("only %d backoff steps: %v (last state %+v)", len(got), got, st.last())
		}
	}
	cancel()
	select {
	case err := <-runDone:
		mustNotErr(t, err)
	case <-time.After(waitLimit):
		t.Fatal("Run did not return")
	}
	ready := st.count(toolkit.StatusReady)
	for range ready {
		<-drops
	}
	for i, s := range got {
		// The first retry after a loss is immediate; the next losses
		// back off, the delays growing (never starting over).
		if s.attempt != i {
			t.Fatalf("attempts %v: want 0, 1, 2, ... (the backoff must not start over)", got)
		}
		if i == 0 {
			if s.d != 0 {
				t.Errorf("first retry after a loss waited %v", s.d)
			}
			continue
		}
		base := min(minD<<(i-1), maxD)
		if s.d < base/2 || s.d > base {
			t.Errorf("attempt %d waited %v, want between %v and %v", s.attempt, s.d, base/2, base)
		}
	}
	// Every attempt reached Ready: the losses came from serving, not from
	// failed handshakes.
	dials := c.link.dials.Load()
	if dials < n || dials > n+1 {
		t.Errorf("%d connection attempts for %d backoff steps", dials, n)
	}
	if int64(ready) != dials {
		t.Errorf("%d ready states for %d connection attempts", ready, dials)
	}
	if lost := st.count(toolkit.StatusReconnecting); lost < n {
		t.Errorf("%d reconnecting states for %d losses", lost, n)
	}
}

// A server that accepts the connection and never answers the handshake:
// each attempt ends at Timeouts.Connect, its connection is closed, and
// the connector gives up after Reconnect.MaxAttempts.
func TestHungHandshakeTimesOut(t *testing.T) {
	leakCheck(t)
	hang := &testserver.Raw{Handle: func(testserver.RawRequest) [][]byte { return nil }, Ended: make(chan struct{}, 10)}
	t.Cleanup(hang.Close)
	r := start(t, "memory://hang", true, OptDialer(hang.Dial), OptTimeouts(Timeouts{Connect: 50 * time.Millisecond}), fastBackoff, OptReconnect(Reconnect{MaxAttempts: 2}))
	var err error
	select {
	case err = <-r.done:
		close(r.done)
	case <-time.After(waitLimit):
		t.Fatal("Run did not give up on a server that never answers")
	}
	if !errors.Is(err, toolkit.ErrUnavailable) || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Errorf("Run: %v", err)
	}
	if st := r.states.last(); st.Status != toolkit.StatusFailed || !strings.Contains(st.LastError, "deadline exceeded") {
		t.Errorf("final state %+v", st)
	}
	if r.link.dials.Load() != 2 {
		t.Errorf("%d attempts, want 2", r.link.dials.Load())
	}
	if r.states.count(toolkit.StatusReady) != 0 {
		t.Error("ready without a handshake")
	}
	// Each timed-out attempt closed its connection.
	for i := range 2 {
		select {
		case <-hang.Ended:
		case <-time.After(waitLimit):
			t.Fatalf("only %d of 2 hung connections were closed", i)
		}
	}
}

// A stdio server that never answers (and, once started, ignores stdin and
// SIGTERM): each attempt times out, and its child is killed and reaped
// before the next one.
func TestStdioHungHandshakeKilled(t *testing.T) {
	leakCheck(t)
	childCheck(t)
	r := start(t, stdioURL(t, testserver.StdioSleep), true,
		OptTimeouts(Timeouts{Connect: 100 * time.Millisecond}), OptTimeouts(Timeouts{Terminate: 20 * time.Millisecond}), fastBackoff, OptReconnect(Reconnect{MaxAttempts: 2}))
	var err error
	select {
	case err = <-r.done:
		close(r.done)
	case <-time.After(waitLimit):
		t.Fatal("Run did not give up on a server that never answers")
	}
	// How the child ended depends on how far it got in 100ms (a slow
	// start dies of SIGTERM, a started one of SIGKILL); that it ended is
	// what matters.
	if !errors.Is(err, toolkit.ErrUnavailable) || !strings.Contains(err.Error(), "deadline exceeded") || !strings.Contains(err.Error(), "server process exited") {
		t.Errorf("Run: %v", err)
	}
	if r.link.dials.Load() != 2 {
		t.Errorf("%d attempts, want 2", r.link.dials.Load())
	}
	if kids := childPids(t); len(kids) != 0 {
		t.Errorf("children %v left after Run gave up", kids)
	}
}

// A server restarted while a tool runs may have run it: whichever way the
// connector learns of the restart (the broken stream, a failed ping, or a
// 404 for the resumed stream after the POST was answered), the call fails
// as unavailable and the tool is not sent again.
func TestRestartMidCallNeverRepeatsUnsafeTool(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	h := testserver.ServeHTTP(t, s.Server, testserver.Stateful)
	r := start(t, h.URL, false, fastBackoff, OptReconnect(Reconnect{Wait: waitLimit}))
	done := make(chan error, 1)
	go func() {
		_, err := call(t, context.Background(), r.Connector, "block", `{"tag":"once"}`)
		done <- err
	}()
	recvString(t, s.Started)
	h.Kill()
	mustNotErr(t, h.Start())
	select {
	case err := <-done:
		if !errors.Is(err, toolkit.ErrUnavailable) {
			t.Errorf("call across a restart: %v, want ErrUnavailable", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the call hangs: was the tool sent again?")
	}
	select {
	case tag := <-s.Started:
		t.Errorf("the tool ran again (%q)", tag)
	default:
	}
	mustNotErr(t, r.stop(t))
}

// A request whose POST the server answered is never sent again when its
// stream breaks, even though the resumed stream is answered 404 (session
// missing): the tool may have run. (With go-sdk v1.8 the session is closed
// before the call sees the 404, so the errSessionClosed path decides; the
// deliveryReceived guard in Connector.do covers the other order.)
func TestReceivedRequestNotRepeated(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	h := testserver.ServeHTTP(t, s.Server, testserver.Stateful)
	r := start(t, h.URL, false, fastBackoff, OptReconnect(Reconnect{Wait: waitLimit}))
	var posts atomic.Int32
	h.Intercept(func(w http.ResponseWriter, req *http.Request) bool {
		if req.Method == http.MethodGet && req.Header.Get("Last-Event-ID") != "" {
			http.Error(w, "session not found", http.StatusNotFound)
			return true
		}
		if req.Method != http.MethodPost {
			return false
		}
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		if !bytes.Contains(body, []byte(`"tools/call"`)) || !bytes.Contains(body, []byte(`"structured"`)) {
			return false
		}
		if posts.Add(1) > 1 {
			return false // sent again: let it run, the test fails below
		}
		// Received: the stream starts, then breaks before the answer.
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "id: 1\nretry: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"working\"}}\n\n")
		w.(http.Flusher).Flush()
		return true
	})
	_, err := call(t, context.Background(), r.Connector, "structured", `{"a":1,"b":2}`)
	if !errors.Is(err, toolkit.ErrUnavailable) {
		t.Errorf("call whose stream broke: %v, want ErrUnavailable", err)
	}
	if n := posts.Load(); n != 1 {
		t.Errorf("the tool call was posted %d times, want once", n)
	}
	h.Intercept(nil)
	mustNotErr(t, r.stop(t))
}

// A request that reached the server, which then crashed before answering
// and came back without the session, may have run: it is never sent again
// on the next session. (TestWrittenRequestNotRepeated pins the rule for an
// error that would otherwise prove non-delivery; the kill/restart soak,
// TestSoakHTTPKillRestart, covers the timing of a POST broken under way.)
func TestRequestThatReachedServerNotRepeated(t *testing.T) {
	leakCheck(t)
	s := chargeServer(t)
	h := testserver.ServeHTTP(t, s.Server, testserver.Stateful)
	r := start(t, h.URL, false, fastBackoff, OptReconnect(Reconnect{Wait: waitLimit}))
	var charges atomic.Int32
	h.Intercept(func(w http.ResponseWriter, req *http.Request) bool {
		if req.Method != http.MethodPost {
			return false
		}
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		if !bytes.Contains(body, []byte(`"tools/call"`)) {
			return false
		}
		if charges.Add(1) > 1 {
			return false // sent again: let it run, the count tells
		}
		// The server ran the request, then crashed before answering and
		// came back without its sessions.
		h.Expire()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return true
	})
	_, err := call(t, context.Background(), r.Connector, "charge", `{}`)
	if !errors.Is(err, toolkit.ErrUnavailable) {
		t.Errorf("call across the crash: %v, want ErrUnavailable", err)
	}
	if n := charges.Load(); n != 1 {
		t.Errorf("the tool call reached the server %d times, want 1", n)
	}
	mustNotErr(t, r.stop(t))
}

// chargeServer returns a test server with a tool "charge" that must not
// run twice for one call.
func chargeServer(t *testing.T) *testserver.Server {
	t.Helper()
	s := newServer(t, testserver.Options{})
	s.AddTool(mustTool("charge"), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "charged"}}}, nil
	})
	return s
}

// TestWrittenRequestNotRepeated pins the rule that a request written to the
// server is never taken for undelivered, whatever error follows: the
// connection answers the written call with the SDK's ErrConnectionClosed,
// which proves non-delivery only for a request never written.
func TestWrittenRequestNotRepeated(t *testing.T) {
	leakCheck(t)
	s := chargeServer(t)
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	var writes atomic.Int32
	dial := func(ctx context.Context) (sdk.Transport, error) {
		tr, err := m.Dial(ctx)
		return &lostAnswerTransport{Transport: tr, method: "tools/call", writes: &writes}, err
	}
	r := start(t, "memory://charge", false, OptDialer(dial), fastBackoff, OptReconnect(Reconnect{Wait: waitLimit}))
	_, err := call(t, context.Background(), r.Connector, "charge", `{}`)
	if err == nil {
		t.Error("call whose answer was lost succeeded")
	}
	if n := writes.Load(); n != 1 {
		t.Errorf("the tool call was written %d times, want 1", n)
	}
	mustNotErr(t, r.stop(t))
}

// lostAnswerTransport makes connections that write requests of one method
// to the server and then answer them themselves with the SDK's
// ErrConnectionClosed, dropping the server's answer: a request written and
// then lost with the connection.
type lostAnswerTransport struct {
	sdk.Transport
	method string
	writes *atomic.Int32
}

func (t *lostAnswerTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	lc := &lostAnswerConn{
		Connection: c,
		t:          t,
		answers:    make(chan jsonrpc.Message, 1),
		reads:      make(chan readResult),
		closed:     make(chan struct{}),
		lost:       map[jsonrpc.ID]bool{},
	}
	go lc.pump()
	return lc, nil
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

type lostAnswerConn struct {
	sdk.Connection
	t         *lostAnswerTransport
	answers   chan jsonrpc.Message
	reads     chan readResult
	closed    chan struct{}
	closeOnce sync.Once
	mu        sync.Mutex
	lost      map[jsonrpc.ID]bool
}

// pump reads the server's messages, dropping the answers to lost requests.
func (c *lostAnswerConn) pump() {
	for {
		msg, err := c.Connection.Read(context.Background())
		if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
			c.mu.Lock()
			drop := c.lost[resp.ID]
			c.mu.Unlock()
			if drop {
				continue
			}
		}
		select {
		case c.reads <- readResult{msg, err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

func (c *lostAnswerConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.answers:
		return msg, nil
	case r := <-c.reads:
		return r.msg, r.err
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *lostAnswerConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != c.t.method {
		return c.Connection.Write(ctx, msg)
	}
	c.mu.Lock()
	c.lost[req.ID] = true
	c.mu.Unlock()
	if err := c.Connection.Write(ctx, msg); err != nil {
		return err
	}
	c.t.writes.Add(1)
	c.answers <- &jsonrpc.Response{ID: req.ID, Error: fmt.Errorf("%w: the answer was lost", sdk.ErrConnectionClosed)}
	return nil
}

func (c *lostAnswerConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

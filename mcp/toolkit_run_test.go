package mcp

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// hookDelegate is a Delegate whose CreateConnector runs a hook, per URL,
// after making the connector and before returning it: the hook can fail
// the creation or make it slow. It keeps every connector it made.
type hookDelegate struct {
	*Delegate
	mu    sync.Mutex
	hooks map[string]func(*Connector) error
	made  map[string][]*Connector
}

func newHookDelegate(events *eventLog, opts ...Option) *hookDelegate {
	d := &hookDelegate{
		Delegate: &Delegate{ClientName: "app", ClientVersion: "1.0", Options: append([]Option{OptLogger(quietLogger())}, opts...)},
		hooks:    map[string]func(*Connector) error{},
		made:     map[string][]*Connector{},
	}
	d.Events = events.add
	return d
}

func (d *hookDelegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	c, err := d.Delegate.CreateConnector(url, onEvent)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.made[url] = append(d.made[url], c.(*Connector))
	hook := d.hooks[url]
	d.mu.Unlock()
	if hook != nil {
		if err := hook(c.(*Connector)); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (d *hookDelegate) setHook(url string, f func(*Connector) error) {
	d.mu.Lock()
	d.hooks[url] = f
	d.mu.Unlock()
}

func (d *hookDelegate) connectors(url string) []*Connector {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]*Connector(nil), d.made[url]...)
}

func newEventLog() *eventLog { return &eventLog{notify: make(chan struct{}, 1)} }

// runToolkit runs tk until the test ends (or the returned stop is called)
// and checks that Run returns.
func runToolkit(t *testing.T, tk *toolkit.Toolkit) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tk.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(waitLimit):
				t.Error("the toolkit's Run did not return")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// echoVia calls ns.echo through the toolkit and checks its answer.
func echoVia(t *testing.T, ctx context.Context, tk *toolkit.Toolkit, ns, text string) {
	t.Helper()
	out, err := tk.Call(ctx, ns+".echo", jsonInput(`{"text":"`+text+`"}`))
	if err != nil {
		t.Fatalf("%s.echo: %v", ns, err)
	}
	if got := read(t, out); got != text {
		t.Errorf("%s.echo = %q, want %q", ns, got, text)
	}
}

func hasNamespace(tk *toolkit.Toolkit, ns string) bool {
	for _, st := range tk.Connectors() {
		if st.Namespace == ns {
			return true
		}
	}
	return false
}

// A CreateConnector that fails while Run is active leaves nothing behind
// (the connector made is never run), and the namespace can be used again
// at once by a connector that works.
func TestToolkitFailingCreateWhileRunning(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	h := testserver.ServeHTTP(t, s.Server, testserver.Stateful)
	events := newEventLog()
	d := newHookDelegate(events)
	boom := errors.New("the delegate cannot make it")
	d.setHook(h.URL, func(*Connector) error { return boom })
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	mustNotErr(t, err)
	stop := runToolkit(t, tk)

	if err := tk.AddConnectorNS("remote", h.URL); !errors.Is(err, boom) {
		t.Fatalf("AddConnectorNS with a failing delegate: %v", err)
	}
	if hasNamespace(tk, "remote") {
		t.Errorf("a failed connector is registered: %+v", tk.Connectors())
	}
	failed := d.connectors(h.URL)
	if len(failed) != 1 || failed[0].life.running.Load() || failed[0].link.dials.Load() != 0 || h.Requests.Load() != 0 {
		t.Errorf("the discarded connector ran (%d requests)", h.Requests.Load())
	}

	d.setHook(h.URL, nil)
	mustNotErr(t, tk.AddConnectorNS("remote", h.URL))
	events.wait(t, toolkit.ConnectorEventToolListChanged, "remote")
	echoVia(t, context.Background(), tk, "remote", "after a failure")
	stop()
	if c := d.connectors(h.URL)[1]; c.life.running.Load() || c.State().Status != toolkit.StatusStopped {
		t.Errorf("connector after the toolkit stopped: %+v", c.State())
	}
}

// A connector removed while the delegate is still creating it, with Run
// active: the toolkit goes on meanwhile, the late connector is dropped
// without ever being run, and the namespace is free again.
func TestToolkitRemoveDuringSlowCreateWhileRunning(t *testing.T) {
	leakCheck(t)
	slow := newServer(t, testserver.Options{Name: "slow"})
	hs := testserver.ServeHTTP(t, slow.Server, testserver.Stateful)
	other := newServer(t, testserver.Options{Name: "other"})
	ho := testserver.ServeHTTP(t, other.Server, testserver.Stateful)
	events := newEventLog()
	d := newHookDelegate(events)
	entered, release := make(chan struct{}), make(chan struct{})
	d.setHook(hs.URL, func(*Connector) error {
		close(entered)
		<-release
		return nil
	})
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	mustNotErr(t, err)
	runToolkit(t, tk)

	added := make(chan error, 1)
	go func() { added <- tk.AddConnectorNS("slow", hs.URL) }()
	select {
	case <-entered:
	case <-time.After(waitLimit):
		t.Fatal("CreateConnector was not called")
	}
	// The toolkit works while the delegate is stuck.
	mustNotErr(t, tk.AddConnectorNS("other", ho.URL))
	events.wait(t, toolkit.ConnectorEventToolListChanged, "other")
	echoVia(t, context.Background(), tk, "other", "meanwhile")

	mustNotErr(t, tk.RemoveConnector(hs.URL))
	close(release)
	select {
	case err := <-added:
		if !errors.Is(err, toolkit.ErrConflict) {
			t.Errorf("AddConnectorNS of a connector removed meanwhile: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("AddConnectorNS did not return")
	}
	if hasNamespace(tk, "slow") {
		t.Errorf("the removed connector is registered: %+v", tk.Connectors())
	}
	if c := d.connectors(hs.URL)[0]; c.life.running.Load() || c.link.dials.Load() != 0 || hs.Requests.Load() != 0 {
		t.Errorf("the dropped connector ran (%d requests)", hs.Requests.Load())
	}
	if _, err := tk.Lookup(context.Background(), "slow.echo"); !errors.Is(err, toolkit.ErrNotFound) {
		t.Errorf("lookup in the removed namespace: %v", err)
	}

	// The namespace is free again.
	d.setHook(hs.URL, nil)
	mustNotErr(t, tk.AddConnectorNS("slow", hs.URL))
	events.wait(t, toolkit.ConnectorEventToolListChanged, "slow")
	echoVia(t, context.Background(), tk, "slow", "now")
}

// A stdio connector added while Run is active starts at once; removing it
// stops it and reaps its child before RemoveConnector returns.
func TestToolkitStdioConnectorAddedDuringRun(t *testing.T) {
	leakCheck(t)
	childCheck(t)
	events := newEventLog()
	d := newHookDelegate(events)
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	mustNotErr(t, err)
	runToolkit(t, tk)
	url := stdioURL(t, testserver.StdioServe)
	mustNotErr(t, tk.AddConnectorNS("kid", url))
	events.wait(t, toolkit.ConnectorEventToolListChanged, "kid")
	ctx := context.Background()
	echoVia(t, ctx, tk, "kid", "from a child")
	out, err := tk.Call(ctx, "kid.pid", jsonInput(`{}`))
	mustNotErr(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(read(t, out)))
	mustNotErr(t, err)
	if reaped(pid) {
		t.Fatalf("server %d is not a child of the test", pid)
	}
	var st toolkit.ConnectorState
	for _, s := range tk.Connectors() {
		if s.Namespace == "kid" {
			st = s
		}
	}
	if st.Status != toolkit.StatusReady || st.Name != "stdio-testserver" {
		t.Errorf("state %+v", st)
	}

	mustNotErr(t, tk.RemoveConnector(url))
	if !reaped(pid) {
		t.Errorf("server %d outlived RemoveConnector", pid)
	}
	if c := d.connectors(url)[0]; c.life.running.Load() {
		t.Error("the removed connector still runs")
	}
	if _, err := tk.Lookup(ctx, "kid.echo"); !errors.Is(err, toolkit.ErrNotFound) {
		t.Errorf("lookup after removal: %v", err)
	}
}

// A call blocked on server A holds up nothing else: List, Lookup and
// calls to server B, and other calls to A, complete meanwhile; when A dies
// its items stay listed and B goes on working.
func TestToolkitOtherServerNotBlocked(t *testing.T) {
	leakCheck(t)
	sa := newServer(t, testserver.Options{Name: "server-a"})
	ha := testserver.ServeHTTP(t, sa.Server, testserver.Stateful)
	sb := newServer(t, testserver.Options{Name: "server-b"})
	hb := testserver.ServeHTTP(t, sb.Server, testserver.Stateful)
	events := newEventLog()
	d := newHookDelegate(events, OptReconnect(Reconnect{Wait: 50 * time.Millisecond}), fastBackoff)
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	mustNotErr(t, err)
	mustNotErr(t, tk.AddConnectorNS("a", ha.URL))
	runToolkit(t, tk)
	mustNotErr(t, tk.AddConnectorNS("b", hb.URL))
	events.wait(t, toolkit.ConnectorEventToolListChanged, "a")
	events.wait(t, toolkit.ConnectorEventToolListChanged, "b")

	// Every operation below is bounded: a hang is a failure.
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	callCtx, cancelCall := context.WithCancel(ctx)
	blocked := make(chan error, 1)
	go func() {
		_, err := tk.Call(callCtx, "a.block", jsonInput(`{"tag":"held"}`))
		blocked <- err
	}()
	if tag := recvString(t, sa.Started); tag != "held" {
		t.Fatalf("started %q", tag)
	}

	resp, err := tk.List(ctx, toolkit.ListRequest{Namespace: "b"})
	mustNotErr(t, err)
	if len(resp.Tools) == 0 {
		t.Error("no tools listed for b")
	}
	for _, key := range []string{"b.echo", "a.echo"} {
		if _, err := tk.Lookup(ctx, key); err != nil {
			t.Errorf("lookup %s while a call to a blocks: %v", key, err)
		}
	}
	echoVia(t, ctx, tk, "b", "b answers")
	echoVia(t, ctx, tk, "a", "a answers too")
	select {
	case err := <-blocked:
		t.Fatalf("the blocked call returned: %v", err)
	default:
	}

	cancelCall()
	if err := <-blocked; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	if tag := recvString(t, sa.Cancelled); tag != "held" {
		t.Errorf("server a cancelled %q", tag)
	}

	// Server a dies: its items are still listed, calls to it fail after
	// the (short) reconnect wait, and b is unaffected.
	ha.Kill()
	if _, err := tk.Call(ctx, "a.echo", jsonInput(`{"text":"x"}`)); !errors.Is(err, toolkit.ErrUnavailable) {
		t.Errorf("call to a dead server: %v", err)
	}
	if _, err := tk.Lookup(ctx, "a.echo"); err != nil {
		t.Errorf("lookup of a dead server's tool: %v", err)
	}
	echoVia(t, ctx, tk, "b", "still here")
}

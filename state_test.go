package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/llmkit/toolkit/resource"
)

// blockingConn is a fakeConn whose ListTools waits for release once armed.
type blockingConn struct {
	*fakeConn
	armed   chan struct{} // closed to arm
	listing chan struct{} // receives when an armed ListTools starts
	release chan struct{}
}

func (b *blockingConn) ListTools(ctx context.Context) ([]Tool, error) {
	select {
	case <-b.armed:
		b.listing <- struct{}{}
		<-b.release
	default:
	}
	return b.fakeConn.ListTools(ctx)
}

type blockingDelegate struct {
	*fakeDelegate
	b *blockingConn
}

func (d *blockingDelegate) CreateConnector(url string, onEvent func(ConnectorEvent)) (Connector, error) {
	if url == UserConnectorURI {
		return nil, ErrNotImplemented
	}
	c, _ := d.fakeDelegate.CreateConnector(url, onEvent)
	d.b = &blockingConn{fakeConn: c.(*fakeConn), armed: make(chan struct{}), listing: make(chan struct{}), release: make(chan struct{})}
	return d.b, nil
}

// A connector counts as ready, for WaitConnectors, Connectors and the
// state event alike, only once the lists re-read after its ready report
// are published.
func TestWaitConnectorsReadyMeansPublished(t *testing.T) {
	d := &blockingDelegate{fakeDelegate: newDelegate()}
	tk := mustNew(t, WithDelegate(d))
	running(t, tk)
	if err := tk.AddConnectorNS("srv", "http://srv/mcp"); err != nil {
		t.Fatal(err)
	}
	b := d.b
	<-b.started
	b.mu.Lock()
	b.tools = []Tool{newTool("a")}
	b.mu.Unlock()
	close(b.armed)

	type result struct {
		states []ConnectorState
		err    error
	}
	waited := make(chan result, 1)
	go func() {
		st, err := tk.WaitConnectors(context.Background(), "srv")
		waited <- result{st, err}
	}()
	reported := make(chan struct{})
	go func() {
		b.onEvent(StateChangeEvent(ConnectorState{Status: StatusReady, Name: "s"}))
		close(reported)
	}()
	<-b.listing
	// The ready report is being handled: the items are not published yet,
	// so nothing says ready.
	if st := tk.Connectors(); st[0].Status == StatusReady {
		t.Fatal("Connectors says ready before the items are published")
	}
	select {
	case r := <-waited:
		t.Fatalf("WaitConnectors returned before the items were published: %+v %v", r.states, r.err)
	default:
	}
	close(b.release)
	r := <-waited
	if r.err != nil || len(r.states) != 1 || r.states[0].Status != StatusReady || r.states[0].Name != "s" || r.states[0].Namespace != "srv" {
		t.Fatalf("WaitConnectors = %+v, %v", r.states, r.err)
	}
	if _, err := tk.Lookup(t.Context(), "srv.a"); err != nil {
		t.Fatalf("ready but not published: %v", err)
	}
	<-reported
}

func TestWaitConnectors(t *testing.T) {
	d := newDelegate()
	tk := mustNew(t, WithDelegate(d), WithLogger(discardLogger()))
	stop := running(t, tk)
	for _, ns := range []string{"one", "two"} {
		if err := tk.AddConnectorNS(ns, "http://"+ns+"/mcp"); err != nil {
			t.Fatal(err)
		}
	}
	one, two, user := d.conn("http://one/mcp"), d.conn("http://two/mcp"), d.conn(UserConnectorURI)
	// Run starts the connectors on its own goroutine: their reports come
	// after that, as a real connector's do (a report that came before
	// would be overtaken by the toolkit's own "connecting").
	for _, c := range []*fakeConn{one, two, user} {
		<-c.started
	}

	if _, err := tk.WaitConnectors(t.Context(), "one", "nope"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("unknown namespace: %v", err)
	}

	// The context ends first: the states so far, and ctx's error.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	st, err := tk.WaitConnectors(ctx, "one")
	if !errors.Is(err, context.Canceled) || len(st) != 1 || st[0].Namespace != "one" || st[0].Status == StatusReady {
		t.Fatalf("cancelled wait: %+v, %v", st, err)
	}

	// All of them, user included, in registration order. "two" fails and
	// is restarted at once; the failure still ends the wait.
	waited := make(chan error, 1)
	var got []ConnectorState
	go func() {
		var err error
		got, err = tk.WaitConnectors(context.Background())
		waited <- err
	}()
	one.onEvent(StateChangeEvent(ConnectorState{Status: StatusReady}))
	two.onEvent(StateChangeEvent(ConnectorState{Status: StatusFailed, LastError: "refused"}))
	two.onEvent(StateChangeEvent(ConnectorState{Status: StatusReconnecting}))
	user.onEvent(StateChangeEvent(ConnectorState{Status: StatusReady}))
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	var desc []string
	for _, s := range got {
		desc = append(desc, s.Namespace+":"+s.Status.String())
	}
	if strings.Join(desc, " ") != "one:ready two:failed user:ready" {
		t.Fatalf("states %v", desc)
	}

	// A connector removed while waited for ("two" failed, which ends a
	// wait at once: a new one that never reports is waited for).
	if err := tk.AddConnectorNS("four", "http://four/mcp"); err != nil {
		t.Fatal(err)
	}
	<-d.conn("http://four/mcp").started
	waited2 := make(chan error, 1)
	go func() {
		_, err := tk.WaitConnectors(context.Background(), "four")
		waited2 <- err
	}()
	if err := tk.RemoveConnector("http://four/mcp"); err != nil {
		t.Fatal(err)
	}
	if err := <-waited2; !errors.Is(err, ErrNotFound) {
		t.Fatalf("removed while waited for: %v", err)
	}

	// Once Run has stopped, nothing will become ready.
	if err := tk.AddConnectorNS("three", "http://three/mcp"); err != nil {
		t.Fatal(err)
	}
	stop()
	if _, err := tk.WaitConnectors(context.Background(), "three"); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Run: %v", err)
	}
}

// The reference's delegates hand every URL to their connector constructor,
// which refuses "connector:user": that means no user namespace, not a
// failed New. The failure is logged once and shown by Connectors.
func TestUserConnectorErrorMeansNoUserNamespace(t *testing.T) {
	d := newDelegate()
	bad := errors.New(`connector URL "connector:user": want an http, https or stdio URL`)
	d.prepare = func(url string, c *fakeConn) error {
		if url == UserConnectorURI {
			return bad
		}
		return nil
	}
	logs := &logRecords{}
	tk, err := New(WithDelegate(d), WithLogger(slog.New(logs)))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if recs := logs.matching("no user namespace"); len(recs) != 1 || recs[0].Level != slog.LevelInfo || !strings.Contains(attr(recs[0], "err").String(), "want an http") {
		t.Fatalf("log lines %v", recs)
	}
	st := tk.Connectors()
	if len(st) != 1 || st[0].Namespace != UserNamespace || st[0].URL != UserConnectorURI || st[0].Status != StatusFailed || st[0].LastError != bad.Error() {
		t.Fatalf("Connectors() = %+v", st)
	}
	if _, err := tk.List(t.Context(), ListRequest{Namespace: UserNamespace}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("user namespace: %v", err)
	}
	stop := running(t, tk)
	if err := tk.AddConnectorNS("srv", "http://srv/mcp"); err != nil {
		t.Fatal(err)
	}
	// Run may start the connector after AddConnectorNS returned: the
	// connector says it is ready from its Run, as a real one does.
	srv := d.conn("http://srv/mcp")
	<-srv.started
	srv.onEvent(StateChangeEvent(ConnectorState{Status: StatusReady}))
	got, err := tk.WaitConnectors(t.Context())
	if err != nil || len(got) != 2 || got[0].Status != StatusReady || got[1].Status != StatusFailed {
		t.Fatalf("WaitConnectors = %+v, %v", got, err)
	}
	stop()
	if st := tk.Connectors(); st[1].Status != StatusFailed {
		t.Fatalf("after Run the user connector is %v", st[1].Status)
	}

	// ErrNotImplemented stays silent and lists nothing.
	logs2 := &logRecords{}
	tk2 := mustNew(t, WithDelegate(&noUserDelegate{newDelegate()}), WithLogger(slog.New(logs2)))
	if n := len(tk2.Connectors()); n != 0 {
		t.Fatalf("%d connectors without a user connector", n)
	}
	if len(logs2.matching("")) != 0 {
		t.Fatal("ErrNotImplemented was logged")
	}
}

// weakDelegate makes connectors with many tools and keeps only weak
// pointers to them.
type weakDelegate struct {
	tools int
	conns map[string]weak.Pointer[fakeConn]
	tool  map[string]weak.Pointer[testTool]
}

func (d *weakDelegate) OnEvent(ConnectorEvent) {}
func (d *weakDelegate) Call(context.Context, Prompt, ...Resource) (Resource, error) {
	return nil, ErrNotImplemented
}

func (d *weakDelegate) CreateConnector(url string, onEvent func(ConnectorEvent)) (Connector, error) {
	if url == UserConnectorURI {
		return nil, ErrNotImplemented
	}
	c := &fakeConn{url: url, onEvent: onEvent, started: make(chan struct{})}
	for i := range d.tools {
		c.tools = append(c.tools, newTool(fmt.Sprintf("t%d", i)))
	}
	d.conns[url] = weak.Make(c)
	d.tool[url] = weak.Make(c.tools[0].(*testTool))
	return c, nil
}

// A removed connector and its items become garbage, whatever its place in
// the registration order.
func TestRemovedConnectorIsCollected(t *testing.T) {
	for _, remove := range []string{"http://b/mcp", "http://a/mcp"} { // last, first
		t.Run(remove, func(t *testing.T) {
			d := &weakDelegate{tools: 1000, conns: map[string]weak.Pointer[fakeConn]{}, tool: map[string]weak.Pointer[testTool]{}}
			tk := mustNew(t, WithDelegate(d))
			stop := running(t, tk)
			for _, u := range []string{"http://a/mcp", "http://b/mcp"} {
				if err := tk.AddConnector(u); err != nil {
					t.Fatal(err)
				}
			}
			// Call a tool of it, so that every cache sees it.
			ns, _ := InferNamespace(remove)
			if _, err := tk.Call(t.Context(), ns+".t0", resource.Must("in", json.RawMessage(`{}`))); err != nil {
				t.Fatal(err)
			}
			if err := tk.RemoveConnector(remove); err != nil {
				t.Fatal(err)
			}
			tk.WaitEvents()
			wc, wt := d.conns[remove], d.tool[remove]
			for i := 0; i < 10 && (wc.Value() != nil || wt.Value() != nil); i++ {
				runtime.GC()
			}
			if wc.Value() != nil || wt.Value() != nil {
				t.Fatalf("the removed connector is still reachable (connector %v, tool %v)", wc.Value() != nil, wt.Value() != nil)
			}
			other := "http://a/mcp"
			if remove == other {
				other = "http://b/mcp"
			}
			if d.conns[other].Value() == nil {
				t.Fatal("the connector kept was collected")
			}
			stop()
			runtime.KeepAlive(tk)
		})
	}
}

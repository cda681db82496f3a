package toolkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"
)

// logRecords is a slog handler that keeps every record.
type logRecords struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.recs = append(l.recs, r.Clone())
	l.mu.Unlock()
	return nil
}
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }

// matching returns the records whose message contains msg.
func (l *logRecords) matching(msg string) []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []slog.Record
	for _, r := range l.recs {
		if containsStr(r.Message, msg) {
			out = append(out, r)
		}
	}
	return out
}

func containsStr(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && (s[:len(sub)] == sub || containsStr(s[1:], sub))
}

func attr(r slog.Record, key string) slog.Value {
	var v slog.Value
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value
			return false
		}
		return true
	})
	return v
}

// eventSink collects a subscriber's events.
type eventSink struct {
	ch chan ConnectorEvent
}

func newSink() *eventSink { return &eventSink{ch: make(chan ConnectorEvent, 1024)} }

func (s *eventSink) fn(ev ConnectorEvent) { s.ch <- ev }

// next returns the next event, failing the test if none comes.
func (s *eventSink) next(t *testing.T) ConnectorEvent {
	t.Helper()
	select {
	case ev := <-s.ch:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event delivered")
		return ConnectorEvent{}
	}
}

// until returns the next event satisfying ok, skipping others.
func (s *eventSink) until(t *testing.T, ok func(ConnectorEvent) bool) ConnectorEvent {
	t.Helper()
	for {
		if ev := s.next(t); ok(ev) {
			return ev
		}
	}
}

// drained returns the events pending once the toolkit's deliveries ended.
func (s *eventSink) drained(tk *Toolkit) []ConnectorEvent {
	tk.WaitEvents()
	var out []ConnectorEvent
	for {
		select {
		case ev := <-s.ch:
			out = append(out, ev)
		default:
			return out
		}
	}
}

func isState(ns string, st ConnectorStatus) func(ConnectorEvent) bool {
	return func(ev ConnectorEvent) bool {
		return ev.Kind == ConnectorEventStateChange && ev.Namespace == ns && ev.State.Status == st
	}
}

// gate blocks a subscriber on its first event until released.
type gate struct {
	entered chan ConnectorEvent
	release chan struct{}
	once    sync.Once
}

func newGate() *gate {
	return &gate{entered: make(chan ConnectorEvent, 1), release: make(chan struct{})}
}

// hold blocks the first call only.
func (g *gate) hold(ev ConnectorEvent) {
	first := false
	g.once.Do(func() { first = true })
	if first {
		g.entered <- ev
		<-g.release
	}
}

// subscriberOf returns the feed's record of the last subscriber added.
func lastSubscriber(tk *Toolkit) *subscriber {
	tk.feed.mu.Lock()
	defer tk.feed.mu.Unlock()
	return tk.feed.subs[len(tk.feed.subs)-1]
}

func queueLen(tk *Toolkit, s *subscriber) int {
	tk.feed.mu.Lock()
	defer tk.feed.mu.Unlock()
	return len(s.queue)
}

// Subscribers receive state changes (with URL and namespace) besides the
// delegate's events; the delegate does not. A ready state reaches them
// only once the items it announces are published.
func TestSubscribeStatesAndOrder(t *testing.T) {
	d := &noUserDelegate{newDelegate()}
	tk := mustNew(t, WithDelegate(d))
	sink := newSink()
	var tkRef = tk
	readySeen := make(chan error, 1)
	cancel := tk.Subscribe(func(ev ConnectorEvent) {
		if isState("srv", StatusReady)(ev) {
			_, err := tkRef.Lookup(context.Background(), "srv.a")
			readySeen <- err
		}
		sink.fn(ev)
	})
	defer cancel()
	stop := running(t, tk)
	if err := tk.AddConnectorNS("srv", "http://srv/mcp"); err != nil {
		t.Fatal(err)
	}
	c := d.conn("http://srv/mcp")
	<-c.started
	ev := sink.until(t, isState("srv", StatusConnecting))
	if ev.State.URL != "http://srv/mcp" || ev.State.Namespace != "srv" || ev.Connector != Connector(c) {
		t.Fatalf("connecting event %+v", ev)
	}

	c.mu.Lock()
	c.tools = []Tool{newTool("a")}
	c.mu.Unlock()
	c.onEvent(StateChangeEvent(ConnectorState{Name: "srv-server", Status: StatusReady}))
	if ev := sink.next(t); ev.Kind != ConnectorEventToolListChanged || ev.Namespace != "srv" {
		t.Fatalf("first event after ready: %v %q", ev.Kind, ev.Namespace)
	}
	if ev := sink.next(t); !isState("srv", StatusReady)(ev) || ev.State.Name != "srv-server" || ev.State.URL != "http://srv/mcp" {
		t.Fatalf("ready event %+v", ev)
	}
	if err := <-readySeen; err != nil {
		t.Fatalf("a subscriber told of ready does not find the items: %v", err)
	}
	if ev := d.next(t); ev.Kind != ConnectorEventToolListChanged || ev.Namespace != "srv" {
		t.Fatalf("delegate: %+v", ev)
	}

	// Builtins are announced under "builtin" with no connector.
	if err := tk.AddTool(newTool("b")); err != nil {
		t.Fatal(err)
	}
	if ev := sink.next(t); ev.Kind != ConnectorEventToolListChanged || ev.Namespace != BuiltinNamespace || ev.Connector != nil {
		t.Fatalf("builtin event %+v", ev)
	}
	if ev := d.next(t); ev.Kind != ConnectorEventToolListChanged || ev.Namespace != BuiltinNamespace {
		t.Fatalf("delegate: %+v", ev)
	}

	// Removal: stopped, then the items go.
	if err := tk.RemoveConnector("http://srv/mcp"); err != nil {
		t.Fatal(err)
	}
	if ev := sink.next(t); !isState("srv", StatusStopped)(ev) {
		t.Fatalf("removal: %+v", ev)
	}
	if ev := sink.next(t); ev.Kind != ConnectorEventToolListChanged || ev.Namespace != "srv" {
		t.Fatalf("removal: %+v", ev)
	}
	if ev := d.next(t); ev.Kind != ConnectorEventToolListChanged || ev.Namespace != "srv" {
		t.Fatalf("delegate: %+v", ev)
	}
	stop()
	// The delegate saw the list changes, never a state change.
	d.noEvent(t, tk)
}

// A subscriber stuck in its function delays nobody else, and after cancel
// returns its function is not called again.
func TestSubscriberSlowAndCancelled(t *testing.T) {
	tk := mustNew(t)
	g := newGate()
	var calls []ConnectorEvent
	var mu sync.Mutex
	cancel := tk.Subscribe(func(ev ConnectorEvent) {
		mu.Lock()
		calls = append(calls, ev)
		mu.Unlock()
		g.hold(ev)
	})
	fast := newSink()
	defer tk.Subscribe(fast.fn)()

	if err := tk.AddTool(newTool("t1")); err != nil {
		t.Fatal(err)
	}
	<-g.entered
	// The slow one is stuck; the toolkit and the fast one go on.
	if err := tk.AddPrompt(&testPrompt{name: "p1"}); err != nil {
		t.Fatal(err)
	}
	if err := tk.AddResource(&testResource{uri: "file:///r", name: "r"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []ConnectorEventKind{ConnectorEventToolListChanged, ConnectorEventPromptListChanged, ConnectorEventResourceListChanged} {
		if ev := fast.next(t); ev.Kind != want {
			t.Fatalf("fast subscriber got %v, want %v", ev.Kind, want)
		}
	}
	cancel()
	cancel() // twice is fine
	close(g.release)
	tk.WaitEvents()
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 1 {
		t.Fatalf("the cancelled subscriber was called %d times", len(calls))
	}
}

// A subscriber may call back into the toolkit, remove the connector that
// fired, and cancel itself; a panicking one is logged and goes on.
func TestSubscriberCallsBack(t *testing.T) {
	d := newDelegate()
	logs := &logRecords{}
	tk := mustNew(t, WithDelegate(d), WithLogger(slog.New(logs)))
	removed := make(chan error, 1)
	var cancel func()
	cancel = tk.Subscribe(func(ev ConnectorEvent) {
		if ev.Namespace == "srv" && ev.Kind == ConnectorEventToolListChanged {
			removed <- tk.RemoveConnector("http://srv/mcp")
			cancel()
		}
	})
	panicky := 0
	defer tk.Subscribe(func(ev ConnectorEvent) {
		panicky++
		panic("boom")
	})()
	if err := tk.AddConnectorNS("srv", "http://srv/mcp"); err != nil {
		t.Fatal(err)
	}
	d.conn("http://srv/mcp").setTools(newTool("x"))
	if err := <-removed; err != nil {
		t.Fatal(err)
	}
	tk.WaitEvents()
	if _, err := tk.Lookup(t.Context(), "srv.x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("lookup after removal: %v", err)
	}
	// The panicking subscriber still gets the next event.
	before := panicky
	if err := tk.AddTool(newTool("t")); err != nil {
		t.Fatal(err)
	}
	tk.WaitEvents()
	if n := len(logs.matching("event receiver panicked")); n != panicky || before < 1 || panicky != before+1 {
		t.Fatalf("%d panics logged for %d calls (%d before the last event)", n, panicky, before)
	}
}

// Undelivered events absorb later ones of the same sort in their place:
// list changes by namespace and kind, resource updates by URI, states by
// namespace (the newest state wins).
func TestSubscriberQueueCoalesces(t *testing.T) {
	d := newDelegate()
	tk := mustNew(t, WithDelegate(d), WithLogger(discardLogger()))
	go func() {
		for range d.events {
		}
	}()
	defer func() { tk.WaitEvents(); close(d.events) }()
	if err := tk.AddConnectorNS("srv", "http://srv/mcp"); err != nil {
		t.Fatal(err)
	}
	c := d.conn("http://srv/mcp")
	g := newGate()
	sink := newSink()
	defer tk.Subscribe(func(ev ConnectorEvent) { g.hold(ev); sink.fn(ev) })()

	c.onEvent(StateChangeEvent(ConnectorState{Status: StatusConnecting}))
	<-g.entered
	c.onEvent(StateChangeEvent(ConnectorState{Status: StatusReconnecting, LastError: "one"}))
	c.onEvent(ResourceUpdatedEvent("file:///a"))
	if err := tk.AddTool(newTool("t1")); err != nil {
		t.Fatal(err)
	}
	c.onEvent(ResourceUpdatedEvent("file:///b"))
	c.onEvent(StateChangeEvent(ConnectorState{Status: StatusFailed, LastError: "two"}))
	c.onEvent(ResourceUpdatedEvent("file:///a"))
	if err := tk.AddTool(newTool("t2")); err != nil {
		t.Fatal(err)
	}
	close(g.release)
	got := sink.drained(tk)
	var desc []string
	for _, ev := range got {
		s := ev.Namespace + ":" + ev.Kind.String()
		switch ev.Kind {
		case ConnectorEventStateChange:
			s += ":" + ev.State.Status.String() + ":" + ev.State.LastError
		case ConnectorEventResourceUpdated:
			s += ":" + ev.URI
		}
		desc = append(desc, s)
	}
	want := []string{
		"srv:state_change:connecting:",
		"srv:state_change:failed:two",
		"srv:resource_updated:file:///a",
		"builtin:tool_list_changed",
		"srv:resource_updated:file:///b",
	}
	if !slices.Equal(desc, want) {
		t.Fatalf("delivered\n%v\nwant\n%v", desc, want)
	}
}

// A flood of list changes for a subscriber that cannot keep up stays a
// handful of queued events; each kind's last change still arrives (and
// shows the final lists), and Run returns promptly after cancel.
func TestSlowSubscriberFlood(t *testing.T) {
	d := newDelegate()
	tk := mustNew(t, WithDelegate(d), WithLogger(discardLogger()))
	g := newGate()
	type seen struct {
		kind  ConnectorEventKind
		names []string
	}
	var mu sync.Mutex
	var after []seen // events delivered after the gate opened
	defer tk.Subscribe(func(ev ConnectorEvent) {
		g.hold(ev)
		if ev.Namespace != "srv" || ev.Kind == ConnectorEventStateChange {
			return
		}
		resp, err := tk.List(context.Background(), ListRequest{Namespace: "srv"})
		if err != nil {
			t.Error(err)
			return
		}
		var names []string
		for _, it := range resp.Items {
			names = append(names, it.Name)
		}
		mu.Lock()
		after = append(after, seen{ev.Kind, names})
		mu.Unlock()
	})()
	delegateGate := newGate()
	d.onEvent = delegateGate.hold // the delegate is as slow
	delegate := tk.feed.subs[0]

	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tk.Run(ctx) }()
	if err := tk.AddConnectorNS("srv", "http://srv/mcp"); err != nil {
		t.Fatal(err)
	}
	c := d.conn("http://srv/mcp")
	c.onEvent(StateChangeEvent(ConnectorState{Status: StatusReady}))
	<-g.entered
	sub := lastSubscriber(tk)
	const n = 2000
	maxLen := 0
	for i := range n {
		c.mu.Lock()
		c.tools = []Tool{newTool(fmt.Sprintf("t%d", i))}
		c.prompts = []Prompt{&testPrompt{name: fmt.Sprintf("p%d", i)}}
		c.mu.Unlock()
		c.onEvent(ToolListChangeEvent())
		c.onEvent(PromptListChangeEvent())
		maxLen = max(maxLen, queueLen(tk, sub), queueLen(tk, delegate))
	}
	if maxLen > 4 {
		t.Errorf("queue grew to %d events", maxLen)
	}
	cancel()
	close(g.release)
	close(delegateGate.release)
	if err := <-runDone; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	last := map[ConnectorEventKind][]string{}
	for _, s := range after {
		last[s.kind] = s.names
	}
	final := []string{fmt.Sprintf("p%d", n-1), fmt.Sprintf("t%d", n-1)}
	for _, k := range []ConnectorEventKind{ConnectorEventToolListChanged, ConnectorEventPromptListChanged} {
		names := last[k]
		slices.Sort(names)
		if !slices.Equal(names, final) {
			t.Errorf("last %v delivered saw %v, want %v", k, names, final)
		}
	}
	if len(after) > 8 {
		t.Errorf("%d events delivered after the flood", len(after))
	}
}

// Past the queue limit the oldest events are dropped and one warning counts
// them.
func TestSubscriberQueueLimit(t *testing.T) {
	logs := &logRecords{}
	d := &noUserDelegate{newDelegate()}
	d.events = make(chan ConnectorEvent, 1000)
	tk := mustNew(t, WithDelegate(d), WithLogger(slog.New(logs)))
	if err := tk.AddConnectorNS("srv", "http://srv/mcp"); err != nil {
		t.Fatal(err)
	}
	c := d.conn("http://srv/mcp")
	g := newGate()
	sink := newSink()
	defer tk.Subscribe(func(ev ConnectorEvent) { g.hold(ev); sink.fn(ev) })()
	sub := lastSubscriber(tk)
	tk.feed.mu.Lock()
	sub.max = 8
	tk.feed.mu.Unlock()

	if err := tk.AddTool(newTool("blocker")); err != nil {
		t.Fatal(err)
	}
	<-g.entered
	const n = 100
	for i := range n {
		c.onEvent(ResourceUpdatedEvent(fmt.Sprintf("file:///r%d", i)))
		if l := queueLen(tk, sub); l > 8 {
			t.Fatalf("queue length %d", l)
		}
	}
	close(g.release)
	got := sink.drained(tk)
	if len(got) != 1+8 {
		t.Fatalf("%d events delivered", len(got))
	}
	// The newest survive.
	if last := got[len(got)-1]; last.Kind != ConnectorEventResourceUpdated || last.URI != fmt.Sprintf("file:///r%d", n-1) {
		t.Fatalf("last event %+v", last)
	}
	warns := logs.matching("oldest events dropped")
	if len(warns) != 1 {
		t.Fatalf("%d warnings", len(warns))
	}
	if dropped := attr(warns[0], "dropped").Int64(); dropped != n-8 {
		t.Fatalf("warning counts %d dropped events, want %d", dropped, n-8)
	}
}

// Run does not wait past its bound for a subscriber that never returns.
func TestRunDoesNotWaitForStuckSubscriber(t *testing.T) {
	logs := &logRecords{}
	d := newDelegate()
	tk := mustNew(t, WithDelegate(d), WithLogger(slog.New(logs)))
	tk.drainTimeout = time.Millisecond
	g := newGate()
	defer close(g.release) // let the goroutine end for the leak check
	defer tk.Subscribe(g.hold)()
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tk.Run(ctx) }()
	if err := tk.AddTool(newTool("t")); err != nil {
		t.Fatal(err)
	}
	<-g.entered
	cancel()
	if err := <-runDone; err != nil {
		t.Fatal(err)
	}
	if len(logs.matching("events not yet delivered")) != 1 {
		t.Fatal("no warning about undelivered events")
	}
	<-d.events
}

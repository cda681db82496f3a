package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/prompt"
)

// capturingDelegate keeps the connectors it creates.
type capturingDelegate struct {
	*Delegate
	mu    sync.Mutex
	conns map[string]*Connector
}

func (d *capturingDelegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	c, err := d.Delegate.CreateConnector(url, onEvent)
	if err == nil {
		d.mu.Lock()
		d.conns[url] = c.(*Connector)
		d.mu.Unlock()
	}
	return c, err
}

// eventLog records delegate events.
type eventLog struct {
	mu     sync.Mutex
	events []toolkit.ConnectorEvent
	notify chan struct{}
}

func (l *eventLog) add(e toolkit.ConnectorEvent) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
	select {
	case l.notify <- struct{}{}:
	default:
	}
}

// wait waits for an event of kind about namespace ns.
func (l *eventLog) wait(t testing.TB, kind toolkit.ConnectorEventKind, ns string) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		l.mu.Lock()
		for _, e := range l.events {
			if e.Kind == kind && e.Namespace == ns {
				l.mu.Unlock()
				return
			}
		}
		l.mu.Unlock()
		select {
		case <-l.notify:
		case <-deadline:
			t.Fatalf("no %v event for %q", kind, ns)
		}
	}
}

func jsonInput(s string) toolkit.Resource {
	return &contentRes{uri: "data:application/json," + s, name: "input", mime: typeJSON, data: []byte(s)}
}

func TestToolkitWithDelegate(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	s.AddTool(mustTool("a.b-c"), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return nil, nil })
	h := testserver.ServeHTTP(t, s.Server, testserver.Stateful)

	events := &eventLog{notify: make(chan struct{}, 1)}
	d := &capturingDelegate{Delegate: mustDelegate(t, "app", "1.0", OptLogger(quietLogger())), conns: map[string]*Connector{}}
	d.Events = events.add
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	mustNotErr(t, err)
	mustNotErr(t, tk.AddConnectorNS("remote", h.URL))
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tk.Run(ctx) }()
	defer func() {
		cancel()
		mustNotErr(t, <-runDone)
	}()
	events.wait(t, toolkit.ConnectorEventToolListChanged, "remote")

	resp, err := tk.List(ctx, toolkit.ListRequest{Namespace: "remote"})
	mustNotErr(t, err)
	if len(resp.Tools) < 15 || len(resp.Prompts) != 1 || len(resp.Resources) != 2 {
		t.Errorf("listed %d tools, %d prompts, %d resources", len(resp.Tools), len(resp.Prompts), len(resp.Resources))
	}
	if st := tk.Connectors(); len(st) != 1 || st[0].Status != toolkit.StatusReady || st[0].Name != "testserver" {
		t.Errorf("connector states = %+v", st)
	}

	echo, err := tk.Lookup(ctx, "remote.echo")
	mustNotErr(t, err)
	out, err := tk.Call(ctx, echo, jsonInput(`{"text":"through the toolkit"}`))
	mustNotErr(t, err)
	if read(t, out) != "through the toolkit" {
		t.Error("toolkit call of a remote tool failed")
	}
	// The toolkit validates input against the remote schema.
	if _, err := tk.Call(ctx, echo, jsonInput(`{"text":5}`)); !errors.Is(err, toolkit.ErrSchema) {
		t.Errorf("bad input: %v", err)
	}
	if _, err := tk.Call(ctx, "remote.fail", jsonInput(`{}`)); !errors.Is(err, toolkit.ErrToolFailed) {
		t.Errorf("failing tool: %v", err)
	}
	if _, err := tk.Lookup(ctx, "remote.a.b-c"); err != nil {
		t.Errorf("dotted name: %v", err)
	}
	p, err := tk.Lookup(ctx, "remote.greet")
	mustNotErr(t, err)
	r, err := p.(prompt.Renderer).Render(ctx, []byte(`{"name":"Bo"}`))
	mustNotErr(t, err)
	if read(t, r.Messages[0].Content) != "Hello Bo" {
		t.Error("render through the toolkit failed")
	}
	if _, err := tk.Call(ctx, p, jsonInput(`{"name":"Bo"}`)); !errors.Is(err, toolkit.ErrNotImplemented) {
		t.Errorf("prompt call with the default delegate: %v", err)
	}
	res, err := tk.Lookup(ctx, testserver.BlobURI+"#remote")
	mustNotErr(t, err)
	if read(t, res.(toolkit.Resource)) != string(testserver.Blob) {
		t.Error("resource read through the toolkit failed")
	}

	// A list change on the server reaches the delegate.
	s.RemoveTools("a.b-c")
	for {
		if _, err := tk.Lookup(ctx, "remote.a.b-c"); errors.Is(err, toolkit.ErrNotFound) {
			break
		}
		events.wait(t, toolkit.ConnectorEventToolListChanged, "remote")
		events.mu.Lock()
		events.events = nil
		events.mu.Unlock()
	}

	c := d.conns[h.URL]
	mustNotErr(t, tk.RemoveConnector(h.URL))
	if _, err := tk.Lookup(ctx, "remote.echo"); !errors.Is(err, toolkit.ErrNotFound) {
		t.Errorf("lookup after removal: %v", err)
	}
	if c.life.running.Load() || c.State().Status != toolkit.StatusStopped {
		t.Errorf("removed connector: running %v, state %+v", c.life.running.Load(), c.State())
	}
}

func TestDelegate(t *testing.T) {
	d := mustDelegate(t, "app", "1.0")
	if c, err := d.CreateConnector(toolkit.UserConnectorURI, nil); !errors.Is(err, toolkit.ErrNotImplemented) || c != nil {
		t.Errorf("user connector: %v, %v", c, err)
	}
	if _, err := d.CreateConnector("gopher://x", nil); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("bad URL: %v", err)
	}
	p := findPrompt(t)
	if _, err := d.Call(context.Background(), p); !errors.Is(err, toolkit.ErrNotImplemented) {
		t.Errorf("Call: %v", err)
	}
	d.OnEvent(toolkit.ToolListChangeEvent()) // no Events: nothing happens
}

func findPrompt(t *testing.T) toolkit.Prompt {
	r, _, _ := memoryConnector(t, testserver.Options{})
	return mustList(r.ListPrompts(context.Background()))[0]
}

// NewDelegate checks the connector options it is given, so an invalid one
// is reported where it is given and not by every later AddConnector.
func TestNewDelegateReportsInvalidOptions(t *testing.T) {
	for name, o := range map[string]Option{
		"OptLimits: MaxConcurrency": OptLimits(Limits{MaxConcurrency: -1}),
		"OptTimeouts: Connect":      OptTimeouts(Timeouts{Connect: -1}),
		"OptReconnect: BackoffMax":  OptReconnect(Reconnect{BackoffMin: time.Second, BackoffMax: time.Millisecond}),
		"OptDialer":                 OptDialer(nil),
	} {
		d, err := NewDelegate("app", "1.0", OptLogger(quietLogger()), o)
		if d != nil || !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: NewDelegate = %v, %v; want ErrBadParameter naming the option", name, d, err)
		}
	}
	// Every invalid option is named, not only the first.
	_, err := NewDelegate("app", "1.0", OptLimits(Limits{MaxConcurrency: -1}), OptReconnect(Reconnect{StableAfter: -1}))
	if !strings.Contains(err.Error(), "OptLimits: MaxConcurrency") || !strings.Contains(err.Error(), "OptReconnect: StableAfter") {
		t.Errorf("two invalid options: %v", err)
	}

	// With valid options, AddConnector reports only what is wrong with the
	// URL.
	d := mustDelegate(t, "app", "1.0", OptLimits(Limits{MaxConcurrency: 2}), OptLogger(quietLogger()))
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	mustNotErr(t, err)
	if err := tk.AddConnectorNS("ftp", "ftp://files.example.com/mcp"); !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "want an http, https or stdio URL") {
		t.Errorf("ftp URL: %v", err)
	}
}

// New reports a URL it cannot use before invalid options, and names both:
// an option's fault never hides the URL's.
func TestNewReportsTheURLFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		new  func() error
	}{
		{"New", func() error {
			_, err := New("ftp://files.example.com/mcp", "app", "1", OptLimits(Limits{MaxConcurrency: -1}))
			return err
		}},
		{"a Delegate made without NewDelegate", func() error {
			d := &Delegate{ClientName: "app", Options: []Option{OptLimits(Limits{MaxConcurrency: -1})}}
			_, err := d.CreateConnector("ftp://files.example.com/mcp", nil)
			return err
		}},
	} {
		err := tc.new()
		first, rest, _ := strings.Cut(fmt.Sprint(err), "\n")
		if !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(first, "want an http, https or stdio URL") || !strings.Contains(rest, "OptLimits: MaxConcurrency") {
			t.Errorf("%s: %v; want the URL's fault, then the option's", tc.name, err)
		}
	}
}

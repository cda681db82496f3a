package mcp

import (
	"context"
	"errors"
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
	d := &capturingDelegate{Delegate: NewDelegate("app", "1.0", OptLogger(quietLogger())), conns: map[string]*Connector{}}
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
	if c.running.Load() || c.State().Status != toolkit.StatusStopped {
		t.Errorf("removed connector: running %v, state %+v", c.running.Load(), c.State())
	}
}

func TestDelegate(t *testing.T) {
	d := NewDelegate("app", "1.0")
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

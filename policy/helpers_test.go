package policy

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit"
)

// fakeTool is a tool whose definition the test sets.
type fakeTool struct {
	name, desc string
	meta       toolkit.ToolMeta
	in, out    *jsonschema.Schema
	data       map[string]any // _meta
	runs       atomic.Int64
}

func newFake(name, desc string) *fakeTool { return &fakeTool{name: name, desc: desc} }

func (t *fakeTool) Name() string                              { return t.name }
func (t *fakeTool) Description() string                       { return t.desc }
func (t *fakeTool) InputSchema() (*jsonschema.Schema, error)  { return t.in, nil }
func (t *fakeTool) OutputSchema() (*jsonschema.Schema, error) { return t.out, nil }
func (t *fakeTool) Meta() toolkit.ToolMeta                    { return t.meta }
func (t *fakeTool) MetaData() map[string]any                  { return t.data }
func (t *fakeTool) Run(context.Context, json.RawMessage) (any, error) {
	t.runs.Add(1)
	return "ok", nil
}

// fakeConn is a connector whose tool list the test sets.
type fakeConn struct {
	mu      sync.Mutex
	tools   []toolkit.Tool
	onEvent func(toolkit.ConnectorEvent)
}

func (c *fakeConn) Run(ctx context.Context) error {
	c.mu.Lock()
	onEvent := c.onEvent
	c.mu.Unlock()
	onEvent(toolkit.StateChangeEvent(toolkit.ConnectorState{Status: toolkit.StatusReady}))
	<-ctx.Done()
	return nil
}
func (c *fakeConn) ListTools(context.Context) ([]toolkit.Tool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]toolkit.Tool(nil), c.tools...), nil
}
func (c *fakeConn) ListPrompts(context.Context) ([]toolkit.Prompt, error)     { return nil, nil }
func (c *fakeConn) ListResources(context.Context) ([]toolkit.Resource, error) { return nil, nil }

// set replaces the connector's tools and announces it, as a connector
// does on a list_changed notification.
func (c *fakeConn) set(tools ...toolkit.Tool) {
	c.mu.Lock()
	c.tools = tools
	onEvent := c.onEvent
	c.mu.Unlock()
	onEvent(toolkit.ToolListChangeEvent())
}

// fakeDelegate creates fakeConns.
type fakeDelegate struct {
	mu    sync.Mutex
	conns map[string]*fakeConn
}

func (d *fakeDelegate) OnEvent(toolkit.ConnectorEvent) {}
func (d *fakeDelegate) Call(context.Context, toolkit.Prompt, ...toolkit.Resource) (toolkit.Resource, error) {
	return nil, toolkit.ErrNotImplemented
}
func (d *fakeDelegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	if url == toolkit.UserConnectorURI {
		return nil, toolkit.ErrNotImplemented
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.conns[url]
	if c == nil {
		c = &fakeConn{}
		d.conns[url] = c
	}
	c.mu.Lock()
	c.onEvent = onEvent
	c.mu.Unlock()
	return c, nil
}

// running is a toolkit with one connector "srv" whose tools the test
// sets, running until the test ends.
type running struct {
	tk   *toolkit.Toolkit
	conn *fakeConn
}

// startToolkit starts a toolkit with opts and a connector "srv" serving
// tools.
func startToolkit(t *testing.T, tools []toolkit.Tool, opts ...toolkit.Option) *running {
	t.Helper()
	d := &fakeDelegate{conns: map[string]*fakeConn{"test://srv": {tools: tools}}}
	tk, err := toolkit.New(append([]toolkit.Option{toolkit.WithDelegate(d)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tk.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	if err := tk.AddConnectorNS("srv", "test://srv"); err != nil {
		t.Fatal(err)
	}
	if _, err := tk.WaitConnectors(context.Background(), "srv"); err != nil {
		t.Fatal(err)
	}
	tk.WaitEvents()
	d.mu.Lock()
	c := d.conns["test://srv"]
	d.mu.Unlock()
	return &running{tk: tk, conn: c}
}

// names lists the tool names ctx's principal sees.
func (r *running) names(t *testing.T, ctx context.Context) []string {
	t.Helper()
	resp, err := r.tk.List(ctx, toolkit.ListRequest{Type: toolkit.ListTypeTools, Namespace: "srv"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range resp.Items {
		out = append(out, it.Name)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func timeNow() time.Time { return time.Now() }

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

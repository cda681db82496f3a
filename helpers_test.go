package toolkit

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"go.uber.org/goleak"

	"github.com/llmkit/toolkit/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testTool is a configurable tool.
type testTool struct {
	tool.Base
	name   string
	desc   string
	in     *jsonschema.Schema
	inErr  error
	out    *jsonschema.Schema
	run    func(ctx context.Context, in json.RawMessage) (any, error)
	called int
}

func (t *testTool) Name() string        { return t.name }
func (t *testTool) Description() string { return t.desc }
func (t *testTool) InputSchema() (*jsonschema.Schema, error) {
	return t.in, t.inErr
}
func (t *testTool) OutputSchema() (*jsonschema.Schema, error) { return t.out, nil }
func (t *testTool) Run(ctx context.Context, in json.RawMessage) (any, error) {
	if t.run != nil {
		return t.run(ctx, in)
	}
	return string(in), nil
}

func newTool(name string) *testTool { return &testTool{name: name, desc: "tool " + name} }

// testPrompt is a minimal prompt.
type testPrompt struct{ name string }

func (p *testPrompt) Name() string                             { return p.name }
func (p *testPrompt) Title() string                            { return "Prompt " + p.name }
func (p *testPrompt) Description() string                      { return "" }
func (p *testPrompt) InputSchema() (*jsonschema.Schema, error) { return nil, nil }

// testResource is a static resource.
type testResource struct{ uri, name, data string }

func (r *testResource) URI() string         { return r.uri }
func (r *testResource) Name() string        { return r.name }
func (r *testResource) Description() string { return "" }
func (r *testResource) Type() string        { return "text/plain" }
func (r *testResource) Read(context.Context) ([]byte, error) {
	return []byte(r.data), nil
}

// fakeConn is a connector whose lists the test sets.
type fakeConn struct {
	mu        sync.Mutex
	url       string
	tools     []Tool
	prompts   []Prompt
	resources []Resource
	templates []ResourceTemplate
	onEvent   func(ConnectorEvent)
	run       func(ctx context.Context) error
	started   chan struct{}
	startOnce sync.Once
}

func (f *fakeConn) Run(ctx context.Context) error {
	f.startOnce.Do(func() { close(f.started) })
	if f.run != nil {
		return f.run(ctx)
	}
	<-ctx.Done()
	return nil
}

func (f *fakeConn) ListTools(context.Context) ([]Tool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Tool(nil), f.tools...), nil
}

func (f *fakeConn) ListPrompts(context.Context) ([]Prompt, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Prompt(nil), f.prompts...), nil
}

func (f *fakeConn) ListResources(context.Context) ([]Resource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Resource(nil), f.resources...), nil
}

// ListResourceTemplates makes every fakeConn a TemplateLister.
func (f *fakeConn) ListResourceTemplates(context.Context) ([]ResourceTemplate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ResourceTemplate(nil), f.templates...), nil
}

func (f *fakeConn) setTools(tools ...Tool) {
	f.mu.Lock()
	f.tools = tools
	f.mu.Unlock()
	f.onEvent(ToolListChangeEvent())
}

// fakeDelegate creates fakeConns and records events.
type fakeDelegate struct {
	mu      sync.Mutex
	conns   map[string]*fakeConn
	prepare func(url string, c *fakeConn) error // optional, runs in CreateConnector
	events  chan ConnectorEvent
	onEvent func(ConnectorEvent) // optional, runs in OnEvent
	call    func(ctx context.Context, p Prompt, res ...Resource) (Resource, error)
}

func newDelegate() *fakeDelegate {
	return &fakeDelegate{conns: map[string]*fakeConn{}, events: make(chan ConnectorEvent, 1024)}
}

func (d *fakeDelegate) OnEvent(ev ConnectorEvent) {
	if d.onEvent != nil {
		d.onEvent(ev)
	}
	d.events <- ev
}

func (d *fakeDelegate) Call(ctx context.Context, p Prompt, res ...Resource) (Resource, error) {
	if d.call != nil {
		return d.call(ctx, p, res...)
	}
	return nil, ErrNotImplemented
}

func (d *fakeDelegate) CreateConnector(url string, onEvent func(ConnectorEvent)) (Connector, error) {
	c := &fakeConn{url: url, onEvent: onEvent, started: make(chan struct{})}
	if d.prepare != nil {
		if err := d.prepare(url, c); err != nil {
			return nil, err
		}
	}
	d.mu.Lock()
	d.conns[url] = c
	d.mu.Unlock()
	return c, nil
}

func (d *fakeDelegate) conn(url string) *fakeConn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.conns[url]
}

// next returns the next event, failing the test if none comes.
func (d *fakeDelegate) next(t *testing.T) ConnectorEvent {
	t.Helper()
	select {
	case ev := <-d.events:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event delivered")
		return ConnectorEvent{}
	}
}

// noEvent checks that no event is pending once the toolkit's queue drained.
func (d *fakeDelegate) noEvent(t *testing.T, tk *Toolkit) {
	t.Helper()
	tk.WaitEvents()
	select {
	case ev := <-d.events:
		t.Fatalf("unexpected event %v ns=%q", ev.Kind, ev.Namespace)
	default:
	}
}

func objSchema(props map[string]*jsonschema.Schema, required ...string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: props, Required: required}
}

func mustNew(t testing.TB, opts ...Option) *Toolkit {
	t.Helper()
	tk, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// running starts tk.Run and returns a function that stops it and waits.
func running(t testing.TB, tk *Toolkit) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tk.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

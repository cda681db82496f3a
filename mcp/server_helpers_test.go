package mcp

import (
	"context"
	"encoding/json"
	"net"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/tool"
)

// srvLeakCheck fails the test if goroutines it started outlive it. Call it
// first so that its cleanup runs last.
func srvLeakCheck(t *testing.T) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}

// srvTestTool is a tool with explicit schemas and a function body.
type srvTestTool struct {
	tool.Base
	name, desc string
	in, out    *jsonschema.Schema
	run        func(ctx context.Context, in json.RawMessage) (any, error)
}

func (t *srvTestTool) Name() string        { return t.name }
func (t *srvTestTool) Description() string { return t.desc }
func (t *srvTestTool) InputSchema() (*jsonschema.Schema, error) {
	if t.in == nil {
		return &jsonschema.Schema{Type: "object"}, nil
	}
	return t.in, nil
}
func (t *srvTestTool) OutputSchema() (*jsonschema.Schema, error) { return t.out, nil }
func (t *srvTestTool) Run(ctx context.Context, in json.RawMessage) (any, error) {
	return t.run(ctx, in)
}

func srvFuncTool(name string, run func(ctx context.Context, in json.RawMessage) (any, error)) *srvTestTool {
	return &srvTestTool{name: name, desc: "test tool " + name, run: run}
}

// srvTestPrompt renders one user message from its "topic" argument.
type srvTestPrompt struct {
	name   string
	schema *jsonschema.Schema
}

func (p *srvTestPrompt) Name() string                             { return p.name }
func (p *srvTestPrompt) Title() string                            { return "Title of " + p.name }
func (p *srvTestPrompt) Description() string                      { return "prompt " + p.name }
func (p *srvTestPrompt) InputSchema() (*jsonschema.Schema, error) { return p.schema, nil }

// srvRenderPrompt is a srvTestPrompt that can render.
type srvRenderPrompt struct {
	srvTestPrompt
	render func(ctx context.Context, input json.RawMessage) (*prompt.Rendered, error)
}

func (p *srvRenderPrompt) Render(ctx context.Context, input json.RawMessage) (*prompt.Rendered, error) {
	return p.render(ctx, input)
}

// srvStaticRes is a resource with fixed content.
type srvStaticRes struct {
	uri, name, typ string
	data           []byte
}

func (r *srvStaticRes) URI() string                          { return r.uri }
func (r *srvStaticRes) Name() string                         { return r.name }
func (r *srvStaticRes) Description() string                  { return "resource " + r.name }
func (r *srvStaticRes) Type() string                         { return r.typ }
func (r *srvStaticRes) Read(context.Context) ([]byte, error) { return r.data, nil }

// srvFixture is a toolkit served by a Server, wired through a relay.
type srvFixture struct {
	tk    *toolkit.Toolkit
	relay *EventRelay
	srv   *Server
}

func newSrvFixture(t *testing.T, tkOpts []toolkit.Option, opts ...ServerOption) *srvFixture {
	t.Helper()
	relay := ServerDelegate(nil)
	tk, err := toolkit.New(append([]toolkit.Option{toolkit.WithDelegate(relay)}, tkOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(tk, &sdk.Implementation{Name: "test-server", Version: "1"}, append([]ServerOption{WithEventRelay(relay)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &srvFixture{tk: tk, relay: relay, srv: srv}
}

// srvNotes collects client-side notifications.
type srvNotes struct {
	mu          sync.Mutex
	logs        []*sdk.LoggingMessageParams
	progress    []*sdk.ProgressNotificationParams
	toolChanges chan struct{}
	updates     chan string
	logCh       chan struct{}
	progCh      chan struct{}
}

func newSrvNotes() *srvNotes {
	return &srvNotes{toolChanges: make(chan struct{}, 16), updates: make(chan string, 16), logCh: make(chan struct{}, 64), progCh: make(chan struct{}, 64)}
}

func (n *srvNotes) options() *sdk.ClientOptions {
	return &sdk.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			n.mu.Lock()
			n.logs = append(n.logs, r.Params)
			n.mu.Unlock()
			n.logCh <- struct{}{}
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			n.mu.Lock()
			n.progress = append(n.progress, r.Params)
			n.mu.Unlock()
			n.progCh <- struct{}{}
		},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			n.toolChanges <- struct{}{}
		},
		ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
			n.updates <- r.Params.URI
		},
	}
}

// connect connects a go-sdk client to the fixture's server in memory,
// speaking the SDK's default protocol version.
func (f *srvFixture) connect(t *testing.T, copts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	return f.connectVersion(t, copts, "")
}

// connectVersion connects with the given protocol version ("" for the SDK's
// default).
func (f *srvFixture) connectVersion(t *testing.T, copts *sdk.ClientOptions, version string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ct, st := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- f.srv.Run(ctx, st) }()
	c := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "2"}, copts)
	cs, err := c.Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return cs
}

func srvText(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content block, got %d: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("want text content, got %T", res.Content[0])
	}
	return tc.Text
}

func srvListen(t *testing.T) (net.Listener, error) {
	t.Helper()
	return net.Listen("tcp", "127.0.0.1:0")
}

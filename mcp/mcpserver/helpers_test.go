package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/tool"
)

// leakCheck fails the test if goroutines it started outlive it. Call it
// first so that its cleanup runs last.
func leakCheck(t *testing.T) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}

// testTool is a tool with explicit schemas and a function body.
type testTool struct {
	tool.Base
	name, desc string
	in, out    *jsonschema.Schema
	run        func(ctx context.Context, in json.RawMessage) (any, error)
}

func (t *testTool) Name() string        { return t.name }
func (t *testTool) Description() string { return t.desc }
func (t *testTool) InputSchema() (*jsonschema.Schema, error) {
	if t.in == nil {
		return &jsonschema.Schema{Type: "object"}, nil
	}
	return t.in, nil
}
func (t *testTool) OutputSchema() (*jsonschema.Schema, error) { return t.out, nil }
func (t *testTool) Run(ctx context.Context, in json.RawMessage) (any, error) {
	return t.run(ctx, in)
}

func funcTool(name string, run func(ctx context.Context, in json.RawMessage) (any, error)) *testTool {
	return &testTool{name: name, desc: "test tool " + name, run: run}
}

// testPrompt renders one user message from its "topic" argument.
type testPrompt struct {
	name   string
	schema *jsonschema.Schema
}

func (p *testPrompt) Name() string                             { return p.name }
func (p *testPrompt) Title() string                            { return "Title of " + p.name }
func (p *testPrompt) Description() string                      { return "prompt " + p.name }
func (p *testPrompt) InputSchema() (*jsonschema.Schema, error) { return p.schema, nil }

// renderPrompt is a testPrompt that can render.
type renderPrompt struct {
	testPrompt
	render func(ctx context.Context, input json.RawMessage) (*prompt.Rendered, error)
}

func (p *renderPrompt) Render(ctx context.Context, input json.RawMessage) (*prompt.Rendered, error) {
	return p.render(ctx, input)
}

// staticResource is a resource with fixed content.
type staticResource struct {
	uri, name, typ string
	data           []byte
}

func (r *staticResource) URI() string                          { return r.uri }
func (r *staticResource) Name() string                         { return r.name }
func (r *staticResource) Description() string                  { return "resource " + r.name }
func (r *staticResource) Type() string                         { return r.typ }
func (r *staticResource) Read(context.Context) ([]byte, error) { return r.data, nil }

// fixture is a toolkit served by a Server.
type fixture struct {
	tk  *toolkit.Toolkit
	srv *Server
}

func newFixture(t *testing.T, tkOpts []toolkit.Option, opts ...Option) *fixture {
	t.Helper()
	tk, err := toolkit.New(tkOpts...)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(tk, &sdk.Implementation{Name: "test-server", Version: "1"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &fixture{tk: tk, srv: srv}
}

// noteLog collects client-side notifications.
type noteLog struct {
	mu          sync.Mutex
	logs        []*sdk.LoggingMessageParams
	progress    []*sdk.ProgressNotificationParams
	toolChanges chan struct{}
	updates     chan string
	logCh       chan struct{}
	progCh      chan struct{}
}

func newNoteLog() *noteLog {
	return &noteLog{toolChanges: make(chan struct{}, 16), updates: make(chan string, 16), logCh: make(chan struct{}, 64), progCh: make(chan struct{}, 64)}
}

func (n *noteLog) options() *sdk.ClientOptions {
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
func (f *fixture) connect(t *testing.T, copts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	return f.connectVersion(t, copts, "")
}

// connectVersion connects with the given protocol version ("" for the SDK's
// default).
func (f *fixture) connectVersion(t *testing.T, copts *sdk.ClientOptions, version string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ct, st := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- f.srv.Run(ctx, st) }()
	c := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "2"}, copts)
	listening, acked := awaitListen(c)
	cs, err := c.Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if listening.Load() {
		// A 2026-07-28 client's Connect returns once its
		// subscriptions/listen is sent, not once the server has it: the
		// list changes made before the server's acknowledgement are not
		// the client's to hear.
		select {
		case <-acked:
		case <-time.After(waitLimit):
			cancel()
			t.Fatal("the server never acknowledged subscriptions/listen")
		}
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return cs
}

// awaitListen watches c: listening is set once it has sent
// subscriptions/listen, acked receives once the server acknowledged it.
func awaitListen(c *sdk.Client) (listening *atomic.Bool, acked <-chan struct{}) {
	listening = new(atomic.Bool)
	ack := make(chan struct{}, 1)
	c.AddSendingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "subscriptions/listen" {
				listening.Store(true)
			}
			return next(ctx, method, req)
		}
	})
	c.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				select {
				case ack <- struct{}{}:
				default:
				}
			}
			return next(ctx, method, req)
		}
	})
	return listening, ack
}

func resultText(t *testing.T, res *sdk.CallToolResult) string {
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

func listenLoopback(t *testing.T) (net.Listener, error) {
	t.Helper()
	return net.Listen("tcp", "127.0.0.1:0")
}

// quietLogger discards logs unless MCP_TEST_LOG is set.
func quietLogger() *slog.Logger {
	if os.Getenv("MCP_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// newServer returns an upstream test server closed when the test ends.
func newServer(t testing.TB, o testserver.Options) *testserver.Server {
	s := testserver.New(o)
	t.Cleanup(s.Close)
	return s
}

func mustNotErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fastBackoff makes upstream connectors reconnect quickly.
var fastBackoff = mcp.OptReconnect(mcp.Reconnect{BackoffMin: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond})

// waitLimit bounds every wait of a test for an event that should come.
const waitLimit = 20 * time.Second

// mustTool returns a tool definition with an empty object schema.
func mustTool(name string) *sdk.Tool {
	return &sdk.Tool{Name: name, InputSchema: testserver.ObjectSchema()}
}

// recvString receives from ch, failing the test after waitLimit.
func recvString(t testing.TB, ch <-chan string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(waitLimit):
		t.Fatal("nothing received")
		return ""
	}
}

// mustDelegate returns the delegate of a gateway ("gateway", version "1")
// with opts, failing the test on an error.
func mustDelegate(t testing.TB, opts ...mcp.Option) *mcp.Delegate {
	t.Helper()
	d, err := mcp.NewDelegate("gateway", "1", opts...)
	mustNotErr(t, err)
	return d
}

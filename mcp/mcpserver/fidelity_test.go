package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/oteltest"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp"
)

// TestGatewayFidelity checks that a toolkit served over MCP passes an
// upstream server's results on unchanged: a client sees the same content
// blocks and structured content through the gateway as from the upstream
// server directly.
func TestGatewayFidelity(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)

	// Direct: a plain go-sdk client of the upstream server.
	tr, err := m.Dial(context.Background())
	mustNotErr(t, err)
	direct, err := sdk.NewClient(&sdk.Implementation{Name: "direct", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	mustNotErr(t, err)
	defer direct.Close()

	gw, ctx := newGateway(t, m, nil, nil)

	for _, c := range []struct{ tool, args string }{
		{"echo", `{"text":"hi"}`},
		{"structured", `{"a":1,"b":2}`},
		{"image", `{}`},
		{"audio", `{}`},
		{"embedded_text", `{}`},
		{"embedded_blob", `{}`},
		{"link", `{}`},
		{"multi_text", `{}`},
		{"mixed", `{}`},
	} {
		t.Run(c.tool, func(t *testing.T) {
			want, err := direct.CallTool(ctx, &sdk.CallToolParams{Name: c.tool, Arguments: json.RawMessage(c.args)})
			mustNotErr(t, err)
			got, err := gw.CallTool(ctx, &sdk.CallToolParams{Name: c.tool, Arguments: json.RawMessage(c.args)})
			mustNotErr(t, err)
			if got.IsError {
				t.Fatalf("through the gateway: error result %+v", got.Content)
			}
			if !reflect.DeepEqual(jsonOf(t, got.Content), jsonOf(t, want.Content)) {
				t.Errorf("content through the gateway\n%s\nwant\n%s", jsonOf(t, got.Content), jsonOf(t, want.Content))
			}
			if !reflect.DeepEqual(jsonOf(t, got.StructuredContent), jsonOf(t, want.StructuredContent)) {
				t.Errorf("structured content through the gateway %s, want %s", jsonOf(t, got.StructuredContent), jsonOf(t, want.StructuredContent))
			}
		})
	}
}

// newGateway serves, over an in-memory connection, a toolkit whose only
// source is the upstream m behind a connector in namespace "up". copts
// configure the client, conn the connector; opts are added to the
// toolkit's. It returns a client of that server and a context
// that lives as long as the test.
func newGateway(t *testing.T, m *testserver.Memory, copts *sdk.ClientOptions, conn []mcp.Option, opts ...toolkit.Option) (*sdk.ClientSession, context.Context) {
	t.Helper()
	f, ctx := newGatewayFixture(t, m, conn, opts...)
	return f.connect(t, copts), ctx
}

// newGatewayFixture is newGateway without the client.
func newGatewayFixture(t *testing.T, m *testserver.Memory, conn []mcp.Option, opts ...toolkit.Option) (*fixture, context.Context) {
	t.Helper()
	events := make(chan toolkit.ConnectorEvent, 16)
	d := mustDelegate(t, append([]mcp.Option{mcp.OptLogger(quietLogger()), mcp.OptDialer(m.Dial)}, conn...)...)
	d.Events = func(e toolkit.ConnectorEvent) {
		select {
		case events <- e:
		default:
		}
	}
	tk, err := toolkit.New(append([]toolkit.Option{toolkit.WithDelegate(d)}, opts...)...)
	mustNotErr(t, err)
	srv, err := New(tk, nil)
	mustNotErr(t, err)
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tk.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		mustNotErr(t, <-runDone)
	})
	mustNotErr(t, tk.AddConnectorNS("up", "memory://up"))
	for e := range events {
		if e.Kind == toolkit.ConnectorEventToolListChanged {
			break
		}
	}
	tk.WaitEvents()
	return &fixture{tk: tk, srv: srv}, ctx
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGatewayTraceContext checks that a trace crosses the gateway: the
// downstream client's traceparent becomes the parent of the toolkit's span,
// and the upstream server receives that span as its parent.
func TestGatewayTraceContext(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	s.AddTool(mustTool("meta"), func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		b, _ := json.Marshal(req.Params.Meta)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}, nil
	})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	rec := oteltest.NewTracerProvider()
	gw, ctx := newGateway(t, m, nil, nil, toolkit.WithTracer(rec.Tracer("gateway")))

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	res, err := gw.CallTool(ctx, &sdk.CallToolParams{Name: "meta", Meta: sdk.Meta{
		"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01",
	}})
	mustNotErr(t, err)
	var meta map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &meta); err != nil {
		t.Fatal(err)
	}
	tp2, _ := meta["traceparent"].(string)
	parts := strings.Split(tp2, "-")
	if len(parts) != 4 || parts[1] != traceID {
		t.Fatalf("upstream _meta %v: want traceparent in trace %s", meta, traceID)
	}
	var spans []string
	for _, sp := range rec.Spans() {
		if !sp.Ended {
			continue
		}
		spans = append(spans, sp.Name)
		if sp.SpanContext.TraceID().String() == traceID && sp.SpanContext.SpanID().String() == parts[2] {
			if sp.Parent.SpanID().String() != "00f067aa0ba902b7" {
				t.Errorf("gateway span's parent %s, want the client's span", sp.Parent.SpanID())
			}
			return
		}
	}
	t.Errorf("the upstream's parent span %s is none of the gateway's spans %v", parts[2], spans)
}

// TestGatewayProgressTokenOnlyWhenAsked: the connector asks the upstream
// for progress only for a call whose client asked for it.
func TestGatewayProgressTokenOnlyWhenAsked(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	s.AddTool(mustTool("meta"), func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		b, _ := json.Marshal(req.Params.Meta)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}, nil
	})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	gw, ctx := newGateway(t, m, nil, nil)
	upstreamToken := func(params *sdk.CallToolParams) any {
		t.Helper()
		res, err := gw.CallTool(ctx, params)
		mustNotErr(t, err)
		var meta map[string]any
		if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &meta); err != nil {
			t.Fatal(err)
		}
		return meta["progressToken"]
	}
	if tok := upstreamToken(&sdk.CallToolParams{Name: "meta"}); tok != nil {
		t.Errorf("a call without a progress token asked the upstream for progress (token %v)", tok)
	}
	asked := &sdk.CallToolParams{Name: "meta"}
	asked.SetProgressToken("down-1")
	if tok := upstreamToken(asked); tok == nil {
		t.Error("a call with a progress token did not ask the upstream for progress")
	}
}

// TestGatewayCancel checks that a downstream cancellation cancels the
// upstream call.
func TestGatewayCancel(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	gw, ctx := newGateway(t, m, nil, nil)
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := gw.CallTool(cctx, &sdk.CallToolParams{Name: "block", Arguments: map[string]any{"tag": "g"}})
		errc <- err
	}()
	recvString(t, s.Started)
	cancel()
	if tag := recvString(t, s.Cancelled); tag != "g" {
		t.Errorf("upstream cancelled %q", tag)
	}
	if err := <-errc; err == nil {
		t.Error("the cancelled call returned no error")
	}
}

// TestGatewayNotifications checks that upstream progress and log
// notifications reach the downstream client while its call runs.
func TestGatewayNotifications(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	progress := make(chan *sdk.ProgressNotificationParams, 8)
	logs := make(chan *sdk.LoggingMessageParams, 8)
	gw, ctx := newGateway(t, m, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) { progress <- req.Params },
		LoggingMessageHandler:       func(_ context.Context, req *sdk.LoggingMessageRequest) { logs <- req.Params },
	}, nil)
	t.Cleanup(s.Close) // a failed test must not leave a held call behind

	// The upstream holds its result until the client has seen every
	// notification: they must arrive while the call runs.
	done := make(chan error, 1)
	go func() {
		params := &sdk.CallToolParams{Name: "progress", Arguments: map[string]any{"tag": "p", "steps": 3, "hold": true}}
		params.SetProgressToken("down-1")
		_, err := gw.CallTool(ctx, params)
		done <- err
	}()
	for i := 1; i <= 3; i++ {
		select {
		case p := <-progress:
			if p.ProgressToken != "down-1" || p.Progress != float64(i) || p.Total != 3 || p.Message != fmt.Sprintf("p %d", i) {
				t.Errorf("progress %d: %+v", i, p)
			}
		case <-time.After(waitLimit):
			t.Fatalf("progress %d never reached the client", i)
		}
	}
	s.Release <- struct{}{}
	mustNotErr(t, <-done)

	go func() {
		// The 2026-07-28 protocol the client speaks carries the log level
		// in each request.
		params := &sdk.CallToolParams{Name: "log", Arguments: map[string]any{"text": "careful", "hold": true},
			Meta: sdk.Meta{sdk.MetaKeyLogLevel: "debug"}}
		_, err := gw.CallTool(ctx, params)
		done <- err
	}()
	select {
	case l := <-logs:
		if l.Level != "warning" || !strings.Contains(fmt.Sprint(l.Data), "careful") {
			t.Errorf("log %+v", l)
		}
	case <-time.After(waitLimit):
		t.Fatal("the upstream log never reached the client")
	}
	s.Release <- struct{}{}
	mustNotErr(t, <-done)
}

// TestGatewayServerRequests checks that sampling and elicitation requests
// an upstream tool makes reach the downstream client whose call runs it,
// and that its answers go back up.
func TestGatewayServerRequests(t *testing.T) {
	leakCheck(t)
	// The upstream's tool sends server requests: it speaks the initialize
	// handshake only (its SDK refuses them on 2026-07-28).
	s := newServer(t, testserver.Options{Server: &sdk.ServerOptions{SupportedProtocolVersions: []string{mcp.StatefulProtocolVersion}}})
	s.AddTool(mustTool("ask"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		msg, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10,
			Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "name a colour"}}}})
		if err != nil {
			return nil, err
		}
		el, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "your name?", RequestedSchema: &jsonschema.Schema{
			Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}})
		if err != nil {
			return nil, err
		}
		text := fmt.Sprintf("%s/%s/%v", msg.Content.(*sdk.TextContent).Text, el.Action, el.Content["name"])
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
	})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	f, ctx := newGatewayFixture(t, m, []mcp.Option{mcp.OptServerRequests(mcp.ServerRequests{Forward: true})})
	// A client of protocol 2025-11-25 is sent the upstream's requests; one
	// of 2026-07-28 (which forbids server requests during a request) gets
	// them as input-required results, and its retries carry the answers.
	handlers := &sdk.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			if q := req.Params.Messages[0].Content.(*sdk.TextContent).Text; q != "name a colour" {
				return nil, fmt.Errorf("asked %q", q)
			}
			return &sdk.CreateMessageResult{Model: "m", Role: "assistant", Content: &sdk.TextContent{Text: "teal"}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		gw := f.connectVersion(t, handlers, version)
		if got := gw.InitializeResult().ProtocolVersion; got != version {
			t.Errorf("negotiated %s, want %s", got, version)
		}
		res, err := gw.CallTool(ctx, &sdk.CallToolParams{Name: "ask"})
		mustNotErr(t, err)
		if res.IsError || resultText(t, res) != "teal/accept/Ada" {
			t.Errorf("%s: result %s", version, jsonOf(t, res.Content))
		}
	}
	// A 2026-07-28 client without sampling gets a tool error that says
	// why, not a hang.
	res, err := f.connect(t, &sdk.ClientOptions{}).CallTool(ctx, &sdk.CallToolParams{Name: "ask"})
	mustNotErr(t, err)
	if !res.IsError || !strings.Contains(resultText(t, res), "does not offer sampling") {
		t.Errorf("result for a 2026-07-28 client without sampling %s", jsonOf(t, res.Content))
	}
}

// TestGatewaySubscriptions checks that a client's subscription to an
// upstream resource is passed upstream (and renewed when the upstream
// reconnects), that the upstream's updates reach the client, and that the
// last unsubscription is passed on too.
func TestGatewaySubscriptions(t *testing.T) {
	leakCheck(t)
	subs := make(chan string, 8)
	unsubs := make(chan string, 8)
	s := newServer(t, testserver.Options{Server: &sdk.ServerOptions{
		SubscribeHandler:   func(_ context.Context, req *sdk.SubscribeRequest) error { subs <- req.Params.URI; return nil },
		UnsubscribeHandler: func(_ context.Context, req *sdk.UnsubscribeRequest) error { unsubs <- req.Params.URI; return nil },
	}})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	f, ctx := newGatewayFixture(t, m, []mcp.Option{fastBackoff})
	updates := make(chan string, 8)
	gw := f.connectVersion(t, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) { updates <- req.Params.URI },
	}, "2025-11-25")
	recv := func(ch chan string, what string) string {
		t.Helper()
		select {
		case v := <-ch:
			return v
		case <-time.After(waitLimit):
			t.Fatalf("no %s", what)
		}
		return ""
	}

	mustNotErr(t, gw.Subscribe(ctx, &sdk.SubscribeParams{URI: testserver.TextURI}))
	if got := recv(subs, "upstream subscription"); got != testserver.TextURI {
		t.Errorf("upstream subscribed to %q", got)
	}
	mustNotErr(t, s.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: testserver.TextURI}))
	if got := recv(updates, "update at the client"); got != testserver.TextURI {
		t.Errorf("client told of %q", got)
	}

	// The upstream drops the connection: the subscription is renewed.
	m.Drop()
	if got := recv(subs, "renewed upstream subscription"); got != testserver.TextURI {
		t.Errorf("upstream subscribed again to %q", got)
	}

	mustNotErr(t, gw.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: testserver.TextURI}))
	if got := recv(unsubs, "upstream unsubscription"); got != testserver.TextURI {
		t.Errorf("upstream unsubscribed from %q", got)
	}
}

package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/oteltest"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/resource"
)

var pngBytes = []byte("\x89PNG\r\n\x1a\nfake")

func TestServerToolCall(t *testing.T) {
	leakCheck(t)
	outSchema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"sum": {Type: "integer"}}}
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(
		funcTool("echo", func(_ context.Context, in json.RawMessage) (any, error) { return "got " + string(in), nil }),
		funcTool("fail", func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("disk on fire") }),
		funcTool("image", func(context.Context, json.RawMessage) (any, error) {
			return resource.Blob("img", "image/png", pngBytes)
		}),
		funcTool("audio", func(context.Context, json.RawMessage) (any, error) {
			return resource.Blob("snd", "audio/wav", []byte("RIFF"))
		}),
		funcTool("binary", func(context.Context, json.RawMessage) (any, error) {
			return resource.Blob("zip", "application/zip", []byte{0x50, 0x4b, 0xff})
		}),
		funcTool("json", func(context.Context, json.RawMessage) (any, error) { return map[string]int{"a": 1}, nil }),
		&testTool{name: "structured", desc: "has an output schema", out: outSchema, run: func(context.Context, json.RawMessage) (any, error) {
			return map[string]int{"sum": 3}, nil
		}},
		funcTool("blocks", func(context.Context, json.RawMessage) (any, error) {
			return bridge.NewToolContent(&sdk.TextContent{Text: "a"}, &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "x:y", MIMEType: "text/plain", Text: "b"}}), nil
		}),
		funcTool("nothing", func(context.Context, json.RawMessage) (any, error) { return nil, nil }),
	)})
	cs := f.connect(t, nil)
	ctx := context.Background()

	call := func(name string, args any) *sdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}

	if got := resultText(t, call("echo", map[string]any{"x": 1})); got != `got {"x":1}` {
		t.Errorf("echo: %q", got)
	}
	if got := resultText(t, call("echo", nil)); got != "got {}" {
		t.Errorf("echo without arguments: %q", got)
	}
	res := call("fail", nil)
	if !res.IsError || !strings.Contains(resultText(t, res), "disk on fire") {
		t.Errorf("fail: want isError with the message, got %+v", res)
	}
	if img, ok := call("image", nil).Content[0].(*sdk.ImageContent); !ok || img.MIMEType != "image/png" || !bytes.Equal(img.Data, pngBytes) {
		t.Errorf("image: got %+v", img)
	}
	if a, ok := call("audio", nil).Content[0].(*sdk.AudioContent); !ok || a.MIMEType != "audio/wav" {
		t.Errorf("audio: got %+v", a)
	}
	if e, ok := call("binary", nil).Content[0].(*sdk.EmbeddedResource); !ok || e.Resource.MIMEType != "application/zip" || len(e.Resource.Blob) != 3 {
		t.Errorf("binary: got %+v", call("binary", nil).Content[0])
	}
	res = call("json", nil)
	if resultText(t, res) != `{"a":1}` || res.StructuredContent != nil {
		t.Errorf("json without output schema: %q, structured %v", resultText(t, res), res.StructuredContent)
	}
	res = call("structured", nil)
	if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"sum":3}` {
		t.Errorf("structured: structuredContent %s", sc)
	}
	if res := call("blocks", nil); len(res.Content) != 2 {
		t.Errorf("blocks: got %d blocks", len(res.Content))
	}
	if res := call("nothing", nil); len(res.Content) != 0 || res.IsError {
		t.Errorf("nothing: got %+v", res)
	}

	// Protocol errors: unknown tool, arguments that are not an object.
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "missing"}); err == nil {
		t.Error("unknown tool: want a protocol error")
	}
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: []int{1}}); err == nil {
		t.Error("array arguments: want a protocol error")
	}
}

func TestServerListsAndSchemas(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, []toolkit.Option{
		toolkit.WithTool(funcTool("b_tool", nil), funcTool("a_tool", nil)),
		toolkit.WithResource(
			&staticResource{uri: "file:///notes.txt", name: "notes", typ: "text/plain", data: []byte("hello")},
			&staticResource{uri: "file:///pixel.png", name: "pixel", typ: "image/png", data: pngBytes},
		),
	})
	cs := f.connect(t, nil)
	ctx := context.Background()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"a_tool", "b_tool"}) {
		t.Errorf("tools: %v", names)
	}
	lr, err := cs.ListResources(ctx, nil)
	if err != nil || len(lr.Resources) != 2 {
		t.Fatalf("resources: %v %+v", err, lr)
	}
	rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "file:///notes.txt"})
	if err != nil || rr.Contents[0].Text != "hello" || rr.Contents[0].MIMEType != "text/plain" {
		t.Errorf("read text: %v %+v", err, rr)
	}
	rr, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "file:///pixel.png"})
	if err != nil || !bytes.Equal(rr.Contents[0].Blob, pngBytes) {
		t.Errorf("read binary: %v %+v", err, rr)
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "file:///missing"}); err == nil {
		t.Error("read missing: want an error")
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Error(err)
	}
	if err := cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Error(err)
	}
}

func TestServerPrompts(t *testing.T) {
	leakCheck(t)
	schema := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"topic": {Type: "string", Description: "what about", Enum: []any{"go", "gophers", "rust"}},
			"count": {Type: "integer"},
		},
		PropertyOrder: []string{"topic", "count"},
		Required:      []string{"topic"},
	}
	render := &renderPrompt{testPrompt: testPrompt{name: "summarise", schema: schema},
		render: func(_ context.Context, in json.RawMessage) (*prompt.Rendered, error) {
			var args struct {
				Topic string `json:"topic"`
				Count int    `json:"count"`
			}
			if err := json.Unmarshal(in, &args); err != nil {
				return nil, fmt.Errorf("%w: %v", toolkit.ErrBadParameter, err)
			}
			img, _ := resource.Blob("img", "image/png", pngBytes)
			return &prompt.Rendered{Description: "rendered", Messages: []prompt.Message{
				{Role: prompt.RoleUser, Content: resource.Must("m", fmt.Sprintf("%d words on %s", args.Count, args.Topic))},
				{Role: prompt.RoleAssistant, Content: img},
			}}, nil
		}}
	f := newFixture(t, []toolkit.Option{toolkit.WithPrompt(render, &testPrompt{name: "opaque"})})
	cs := f.connect(t, nil)
	ctx := context.Background()

	lp, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(lp.Prompts) != 2 {
		t.Fatalf("list: %v %+v", err, lp)
	}
	p := lp.Prompts[1]
	if p.Name != "summarise" || len(p.Arguments) != 2 || p.Arguments[0].Name != "topic" || !p.Arguments[0].Required || p.Arguments[1].Required {
		t.Errorf("prompt description: %+v %+v", p, p.Arguments)
	}
	gp, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "summarise", Arguments: map[string]string{"topic": "go", "count": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(gp.Messages) != 2 || gp.Messages[0].Content.(*sdk.TextContent).Text != "3 words on go" || gp.Messages[1].Role != "assistant" {
		t.Errorf("get: %+v", gp.Messages)
	}
	if _, ok := gp.Messages[1].Content.(*sdk.ImageContent); !ok {
		t.Errorf("image message: %T", gp.Messages[1].Content)
	}
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "opaque"}); err == nil {
		t.Error("prompt without Renderer: want an error")
	}
	comp, err := cs.Complete(ctx, &sdk.CompleteParams{
		Ref:      &sdk.CompleteReference{Type: "ref/prompt", Name: "summarise"},
		Argument: sdk.CompleteParamsArgument{Name: "topic", Value: "go"},
	})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"go", "gophers"}) {
		t.Errorf("complete: %v %+v", err, comp)
	}
}

func TestServerSession(t *testing.T) {
	leakCheck(t)
	type seen struct {
		id, client string
		sampling   bool
		meta       map[string]any
	}
	got := make(chan seen, 1)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(
		funcTool("inspect", func(ctx context.Context, _ json.RawMessage) (any, error) {
			s := toolkit.SessionFromContext(ctx)
			v := seen{id: s.ID(), meta: s.Meta()}
			if ci := s.ClientInfo(); ci != nil {
				v.client = ci.Name
			}
			if c := s.Capabilities(); c != nil {
				v.sampling = c.Sampling != nil
			}
			got <- v
			return nil, nil
		}),
		funcTool("chatty", func(ctx context.Context, _ json.RawMessage) (any, error) {
			s := toolkit.SessionFromContext(ctx)
			s.Logger().Info("working", "step", 1, slog.Group("grp", "k", "v"))
			s.Logger().Debug("too fine")
			if err := s.Progress(1, 2, "half"); err != nil {
				return nil, err
			}
			if err := s.Progress(1, 2, "a", "b"); !errors.Is(err, toolkit.ErrBadParameter) {
				return nil, fmt.Errorf("two messages: %v", err)
			}
			return "ok", nil
		}),
	)}, WithLoggerName("tools"))
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			notes := newNoteLog()
			opts := notes.options()
			opts.CreateMessageHandler = func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
				return nil, errors.New("unused")
			}
			cs := f.connectVersion(t, opts, version)
			ctx := context.Background()

			if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "inspect", Meta: sdk.Meta{"k": "v"}}); err != nil {
				t.Fatal(err)
			}
			v := <-got
			if v.client != "test-client" || !v.sampling || v.meta["k"] != "v" {
				t.Errorf("session: %+v", v)
			}

			params := &sdk.CallToolParams{Name: "chatty", Meta: sdk.Meta{}}
			if version < "2026" {
				if err := cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
					t.Fatal(err)
				}
			} else {
				// Newer protocols carry the log level in each request.
				params.Meta[sdk.MetaKeyLogLevel] = "info"
			}
			params.SetProgressToken("tok-1")
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				t.Fatalf("chatty: %v %+v", err, res)
			}
			<-notes.logCh
			<-notes.progCh
			notes.mu.Lock()
			defer notes.mu.Unlock()
			if len(notes.logs) != 1 || notes.logs[0].Logger != "tools" || notes.logs[0].Level != "info" {
				t.Fatalf("logs: %+v", notes.logs)
			}
			data, _ := json.Marshal(notes.logs[0].Data)
			if string(data) != `{"grp":{"k":"v"},"msg":"working","step":1}` {
				t.Errorf("log data: %s", data)
			}
			if len(notes.progress) != 1 || notes.progress[0].ProgressToken != "tok-1" || notes.progress[0].Message != "half" || notes.progress[0].Total != 2 {
				t.Errorf("progress: %+v", notes.progress)
			}
		})
	}
}

func TestServerProgressWithoutToken(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(
		funcTool("p", func(ctx context.Context, _ json.RawMessage) (any, error) {
			return nil, toolkit.SessionFromContext(ctx).Progress(1, 0)
		}),
	)})
	cs := f.connect(t, nil)
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "p"})
	if err != nil || res.IsError {
		t.Fatalf("progress without token must be a no-op: %v %+v", err, res)
	}
}

func TestServerListChangedFanOut(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(funcTool("first", nil))})
	var clients []*sdk.ClientSession
	var notes []*noteLog
	for range 3 {
		n := newNoteLog()
		notes = append(notes, n)
		clients = append(clients, f.connect(t, n.options()))
	}
	if err := f.tk.AddTool(funcTool("second", func(context.Context, json.RawMessage) (any, error) { return "2", nil })); err != nil {
		t.Fatal(err)
	}
	for i, n := range notes {
		<-n.toolChanges
		lt, err := clients[i].ListTools(context.Background(), nil)
		if err != nil || len(lt.Tools) != 2 {
			t.Fatalf("client %d: %v %+v", i, err, lt)
		}
	}
	if err := f.tk.RemoveBuiltin("first"); err != nil {
		t.Fatal(err)
	}
	for i, n := range notes {
		<-n.toolChanges
		lt, err := clients[i].ListTools(context.Background(), nil)
		if err != nil || len(lt.Tools) != 1 || lt.Tools[0].Name != "second" {
			t.Fatalf("client %d after remove: %v %+v", i, err, lt)
		}
	}
}

func TestServerResourceUpdated(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, []toolkit.Option{toolkit.WithResource(&staticResource{uri: "file:///w", name: "w", typ: "text/plain"})})
	n := newNoteLog()
	cs := f.connectVersion(t, n.options(), "2025-11-25")
	if err := cs.Subscribe(context.Background(), &sdk.SubscribeParams{URI: "file:///w"}); err != nil {
		t.Fatal(err)
	}
	ev := toolkit.ResourceUpdatedEvent("file:///w")
	ev.Namespace = toolkit.BuiltinNamespace
	f.srv.onEvent(ev) // as the toolkit would deliver it
	if uri := <-n.updates; uri != "file:///w" {
		t.Errorf("updated %q", uri)
	}
}

// TestServerSubscriptionsBounded checks that a client may follow only
// resources the server can read (a resource's URI, one a toolkit template
// or a WithResourceTemplate matches), and at most maxSubscriptions of
// them a session; an unsubscription makes room again. The goroutine that
// forgets a session's subscriptions ends with the session (leakCheck).
func TestServerSubscriptionsBounded(t *testing.T) {
	leakCheck(t)
	static := &sdk.ResourceTemplate{URITemplate: "static://{x}", Name: "static"}
	f := newFixture(t, []toolkit.Option{
		toolkit.WithResource(&staticResource{uri: "file:///w", name: "w", typ: "text/plain"}),
		toolkit.WithResourceTemplate(testTemplate(t, "items://item/{id}", "items")),
	}, WithResourceTemplate(static, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return nil, errors.New("unused")
	}))
	cs := f.connectVersion(t, nil, "2025-11-25")
	ctx := context.Background()
	for _, uri := range []string{"file:///w", "items://item/7", "static://x"} {
		if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
			t.Errorf("subscribe to %s: %v", uri, err)
		}
	}
	var we *jsonrpc.Error
	for _, uri := range []string{"file:///nowhere", "items://other/7", ""} {
		err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri})
		if !errors.As(err, &we) || we.Code != sdk.CodeResourceNotFound {
			t.Errorf("subscribe to %q: %v, want resource not found", uri, err)
		}
	}
	for i := 3; i < maxSubscriptions; i++ {
		if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: fmt.Sprintf("items://item/n%d", i)}); err != nil {
			t.Fatalf("subscription %d: %v", i+1, err)
		}
	}
	err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "items://item/one-too-many"})
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("subscription past the limit: %v", err)
	}
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "file:///w"}); err != nil {
		t.Errorf("subscribing again to a followed resource at the limit: %v", err)
	}
	if err := cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: "items://item/7"}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "items://item/one-too-many"}); err != nil {
		t.Errorf("subscription after an unsubscription: %v", err)
	}
}

func TestServerTraceContext(t *testing.T) {
	leakCheck(t)
	tp := oteltest.NewTracerProvider()
	parent := make(chan oteltrace.SpanContext, 1)
	f := newFixture(t, []toolkit.Option{
		toolkit.WithTracer(tp.Tracer("test")),
		toolkit.WithTool(funcTool("traced", func(ctx context.Context, _ json.RawMessage) (any, error) {
			parent <- oteltrace.SpanContextFromContext(ctx)
			return nil, nil
		})),
	})
	cs := f.connect(t, nil)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "traced", Meta: sdk.Meta{
		"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if sc := <-parent; sc.TraceID().String() != traceID {
		t.Errorf("tool ran in trace %s, want %s", sc.TraceID(), traceID)
	}
}

func TestServerCancel(t *testing.T) {
	leakCheck(t)
	started := make(chan struct{})
	stopped := make(chan error, 1)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(
		funcTool("slow", func(ctx context.Context, _ json.RawMessage) (any, error) {
			close(started)
			<-ctx.Done()
			stopped <- ctx.Err()
			return nil, ctx.Err()
		}),
	)})
	cs := f.connect(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "slow"})
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; err == nil {
		t.Error("cancelled call returned no error")
	}
	if err := <-stopped; !errors.Is(err, context.Canceled) {
		t.Errorf("tool saw %v", err)
	}
}

func TestServerOptionsErrors(t *testing.T) {
	tk, err := toolkit.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Option{WithNameSeparator("/"), WithPageSize(-1), WithResourceTemplate(nil, nil), WithHTTP(WithMaxBodyBytes(0)), WithHTTP(WithPath("mcp"))} {
		if _, err := New(tk, nil, o); !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "With") {
			t.Errorf("want ErrBadParameter naming the option, got %v", err)
		}
	}
	if _, err := New(nil, nil); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("nil toolkit: %v", err)
	}
}

// TestServerSameNameToolAndPrompt checks that a tool and a prompt of the
// same name (separate in MCP) are both served: listed, called, fetched and
// completed, each as itself.
func TestServerSameNameToolAndPrompt(t *testing.T) {
	leakCheck(t)
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"topic": {Type: "string", Enum: []any{"go", "gophers"}},
	}}
	p := &renderPrompt{testPrompt: testPrompt{name: "x", schema: schema},
		render: func(context.Context, json.RawMessage) (*prompt.Rendered, error) {
			return &prompt.Rendered{Messages: []prompt.Message{{Role: prompt.RoleUser, Content: resource.Must("m", "the prompt")}}}, nil
		}}
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(namedTool("x", "the tool")), toolkit.WithPrompt(p)})
	cs := f.connect(t, nil)
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "x"})
	if err != nil || resultText(t, res) != "the tool" {
		t.Errorf("tools/call x: %v %+v", err, res)
	}
	gp, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "x"})
	if err != nil || len(gp.Messages) != 1 || gp.Messages[0].Content.(*sdk.TextContent).Text != "the prompt" {
		t.Fatalf("prompts/get x: %v %+v", err, gp)
	}
	cr, err := cs.Complete(ctx, &sdk.CompleteParams{
		Ref:      &sdk.CompleteReference{Type: "ref/prompt", Name: "x"},
		Argument: sdk.CompleteParamsArgument{Name: "topic", Value: "go"},
	})
	if err != nil || len(cr.Completion.Values) != 2 {
		t.Errorf("completion of prompt x: %v %+v", err, cr)
	}
}

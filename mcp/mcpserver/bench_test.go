package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/benchpair"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

type benchIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

// benchAdd is the Go function every variant exposes.
func benchAdd(_ context.Context, in benchIn) (string, error) {
	return fmt.Sprint(in.A + in.B), nil
}

// benchSDKServer is a plain go-sdk server exposing benchAdd.
func benchSDKServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "plain", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "adds"}, func(ctx context.Context, _ *sdk.CallToolRequest, in benchIn) (*sdk.CallToolResult, any, error) {
		out, err := benchAdd(ctx, in)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: out}}}, nil, err
	})
	return s
}

// benchConnect runs s over in-memory transports and returns a client
// session; everything stops when b ends.
func benchConnect(b *testing.B, run func(context.Context, sdk.Transport) error) *sdk.ClientSession {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ct, st := sdk.NewInMemoryTransports()
	done := make(chan struct{})
	go func() { _ = run(ctx, st); close(done) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close(); cancel(); <-done })
	return cs
}

func benchCalls(b *testing.B, cs *sdk.ClientSession) {
	b.Helper()
	ctx := context.Background()
	params := &sdk.CallToolParams{Name: "add", Arguments: map[string]int{"a": 2, "b": 3}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkServerCall compares tools/call through a Server with the same Go
// function behind a plain go-sdk server, and with a direct toolkit call.
func BenchmarkServerCall(b *testing.B) {
	b.Run("sdk", func(b *testing.B) {
		s := benchSDKServer()
		benchCalls(b, benchConnect(b, s.Run))
	})
	b.Run("toolkit", func(b *testing.B) {
		tk, err := toolkit.New(toolkit.WithTool(tool.Must("add", "adds", benchAdd)))
		if err != nil {
			b.Fatal(err)
		}
		s, err := New(tk, nil)
		if err != nil {
			b.Fatal(err)
		}
		benchCalls(b, benchConnect(b, s.Run))
	})
	b.Run("direct", func(b *testing.B) {
		tk, err := toolkit.New(toolkit.WithTool(tool.Must("add", "adds", benchAdd)))
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		in := resource.Must("input", []byte(`{"a":2,"b":3}`))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tk.Call(ctx, "add", in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkServerGateway compares a call to a plain go-sdk server made
// directly with the same call made through a gateway: a toolkit whose
// connector reaches that server, served by a Server. The difference is the
// latency one gateway hop adds.
func BenchmarkServerGateway(b *testing.B) {
	upstream := benchSDKServer()
	b.Run("direct", func(b *testing.B) {
		benchCalls(b, benchConnect(b, upstream.Run))
	})
	b.Run("gateway", func(b *testing.B) {
		ctx, cancel := context.WithCancel(context.Background())
		var (
			mu      sync.Mutex // running grows on the connector's goroutine
			running []chan struct{}
		)
		track := func(c chan struct{}) {
			mu.Lock()
			running = append(running, c)
			mu.Unlock()
		}
		b.Cleanup(func() {
			cancel()
			for {
				mu.Lock()
				waits := running
				running = nil
				mu.Unlock()
				if len(waits) == 0 {
					return
				}
				for _, c := range waits {
					<-c
				}
			}
		})
		dial := func(context.Context) (sdk.Transport, error) {
			ct, st := sdk.NewInMemoryTransports()
			done := make(chan struct{})
			track(done)
			go func() { _ = upstream.Run(ctx, st); close(done) }()
			return ct, nil
		}
		inner, err := mcp.NewDelegate("gateway", "1", mcp.OptDialer(dial), mcp.OptLogger(quietLogger()))
		if err != nil {
			b.Fatal(err)
		}
		tk, err := toolkit.New(toolkit.WithDelegate(inner))
		if err != nil {
			b.Fatal(err)
		}
		srv, err := New(tk, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := tk.AddConnectorNS("up", "http://upstream.invalid/mcp"); err != nil {
			b.Fatal(err)
		}
		tkDone := make(chan struct{})
		track(tkDone)
		go func() { _ = tk.Run(ctx); close(tkDone) }()
		// Ready means listed; once the events are delivered the server
		// (a subscriber of its own) has registered the tool.
		if _, err := tk.WaitConnectors(ctx, "up"); err != nil {
			b.Fatal(err)
		}
		tk.WaitEvents()
		if _, ok := srv.ExposedName(toolkit.ListTypeTools, "up.add"); !ok {
			b.Fatal(`tool "add" not exposed`)
		}
		benchCalls(b, benchConnect(b, srv.Run))
	})
}

// BenchmarkGatewayHTTP compares, over loopback HTTP, a call made through
// one gateway hop (a toolkit whose connector reaches a plain go-sdk server,
// served by a Server) with the same call made through a hand-written
// go-sdk proxy (a go-sdk server whose tool calls the upstream's with a
// go-sdk client, passing its request's context on), and with the upstream
// called directly: all three in turn in one loop (benchpair), which
// reports each one's median and its ratio to the proxy's. Every client
// speaks 2025-11-25, so every hop keeps a session.
func BenchmarkGatewayHTTP(b *testing.B) {
	upstream := serveBenchHTTP(b, benchSDKServer())
	proxy := serveBenchHTTP(b, benchProxy(b, upstream))
	gw := startGateway(b, upstream, nil, nil, nil)
	name, ok := gw.srv.ExposedName(toolkit.ListTypeTools, "up.add")
	if !ok {
		b.Fatal(`tool "add" not exposed`)
	}
	benchpair.Run(b,
		benchpair.Variant{Name: "proxy", Run: benchHTTPCall(b, proxy, "add")},
		benchpair.Variant{Name: "gateway", Run: benchHTTPCall(b, gw.url, name)},
		benchpair.Variant{Name: "direct", Run: benchHTTPCall(b, upstream, "add")})
}

// serveBenchHTTP serves s over streamable HTTP (stateful) until b ends,
// and returns its URL.
func serveBenchHTTP(b testing.TB, s *sdk.Server) string {
	b.Helper()
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	b.Cleanup(ts.Close)
	return ts.URL
}

// benchProxy returns a go-sdk server whose tool "add" calls the one of the
// server at upstream, as a proxy written with the go-sdk alone would.
func benchProxy(b testing.TB, upstream string) *sdk.Server {
	b.Helper()
	cs := benchHTTPSession(b, upstream)
	s := sdk.NewServer(&sdk.Implementation{Name: "proxy", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "add", Description: "adds", InputSchema: testserver.ObjectSchema()}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return cs.CallTool(ctx, &sdk.CallToolParams{Name: "add", Arguments: req.Params.Arguments})
	})
	return s
}

// benchHTTPSession returns a go-sdk client session (2025-11-25) with the
// server at url, closed when b ends.
func benchHTTPSession(b testing.TB, url string) *sdk.ClientSession {
	b.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: url}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	mustNotErr(b, err)
	b.Cleanup(func() { cs.Close() })
	return cs
}

// benchHTTPCall returns a call of the tool name, adding 2 and 3, by a
// go-sdk client of the server at url.
func benchHTTPCall(b testing.TB, url, name string) func() error {
	cs := benchHTTPSession(b, url)
	params := &sdk.CallToolParams{Name: name, Arguments: map[string]int{"a": 2, "b": 3}}
	return func() error {
		res, err := cs.CallTool(context.Background(), params)
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error: %v", res.Content)
		}
		return err
	}
}

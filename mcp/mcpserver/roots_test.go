package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp"
)

// meeting lets n calls wait for one another.
type meeting struct {
	mu  sync.Mutex
	n   int
	all chan struct{}
}

func newMeeting(n int) *meeting { return &meeting{n: n, all: make(chan struct{})} }

func (m *meeting) arrive(ctx context.Context) error {
	m.mu.Lock()
	if m.n--; m.n == 0 {
		close(m.all)
	}
	m.mu.Unlock()
	select {
	case <-m.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// requestingServer is an upstream server with a tool "ask" that, before
// anything else, asks its client for roots and to sample, and returns
// what it got: "roots:URI,...|sample:TEXT". With meet, every call waits
// for the others before it asks and after it got its answers.
func requestingServer(t *testing.T, meet, after *meeting) *testserver.Server {
	s := newServer(t, testserver.Options{})
	s.AddTool(mustTool("ask"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if meet != nil {
			if err := meet.arrive(ctx); err != nil {
				return nil, err
			}
		}
		roots, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("roots: %w", err)
		}
		var uris []string
		for _, r := range roots.Roots {
			uris = append(uris, r.URI)
		}
		msg, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 5,
			Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "who?"}}}})
		if err != nil {
			return nil, fmt.Errorf("sampling: %w", err)
		}
		if after != nil {
			if err := after.arrive(ctx); err != nil {
				return nil, err
			}
		}
		text := "roots:" + strings.Join(uris, ",") + "|sample:" + msg.Content.(*sdk.TextContent).Text
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
	})
	return s
}

// httpGateway serves a toolkit whose only source is the upstream at url,
// behind a connector (namespace "up") made with conn.
func httpGateway(t *testing.T, url string, conn ...mcp.Option) *fixture {
	t.Helper()
	events := make(chan toolkit.ConnectorEvent, 16)
	d := mustDelegate(t, append([]mcp.Option{mcp.OptLogger(quietLogger())}, conn...)...)
	d.Events = func(e toolkit.ConnectorEvent) {
		select {
		case events <- e:
		default:
		}
	}
	tk, err := toolkit.New(toolkit.WithDelegate(d))
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
	mustNotErr(t, tk.AddConnectorNS("up", url))
	for e := range events {
		if e.Kind == toolkit.ConnectorEventToolListChanged {
			break
		}
	}
	tk.WaitEvents()
	return &fixture{tk: tk, srv: srv}
}

// connectClient connects c to the fixture's server in memory with
// protocol 2025-11-25 (one that lets a server ask its client during a
// request).
func (f *fixture) connectClient(t *testing.T, c *sdk.Client) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ct, st := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- f.srv.Run(ctx, st) }()
	cs, err := c.Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
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

// samplingClient returns a client that answers sampling with name and
// offers roots (none when roots is nil: it then has no roots capability).
func samplingClient(name string, roots ...*sdk.Root) *sdk.Client {
	opts := &sdk.ClientOptions{
		CreateMessageHandler: func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return &sdk.CreateMessageResult{Model: "m", Role: "assistant", Content: &sdk.TextContent{Text: name}}, nil
		},
	}
	if roots == nil {
		opts.Capabilities = &sdk.ClientCapabilities{}
	}
	c := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, opts)
	c.AddRoots(roots...)
	return c
}

// TestGatewayRoots checks that a gateway passes each client's roots and
// sampling to the upstream calls it makes for that client, with several
// clients calling at once over one streamable HTTP connection upstream,
// and that the connector's own roots answer for a client without roots.
func TestGatewayRoots(t *testing.T) {
	leakCheck(t)
	const n = 3
	up := requestingServer(t, newMeeting(n), newMeeting(n))
	h := testserver.ServeHTTP(t, up.Server, testserver.Stateful)
	f := httpGateway(t, h.URL, mcp.OptServerRequests(mcp.ServerRequests{Forward: true}), mcp.OptRoots(&sdk.Root{URI: "file:///gateway"}))
	clients := make([]*sdk.ClientSession, n)
	for i := range clients {
		name := fmt.Sprint("client", i)
		var roots []*sdk.Root
		if i > 0 { // client0 has no roots
			roots = []*sdk.Root{{URI: "file:///" + name}}
		}
		clients[i] = f.connectClient(t, samplingClient(name, roots...))
	}
	type answer struct {
		i    int
		text string
		err  error
	}
	answers := make(chan answer, n)
	for i, cs := range clients {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ask"})
			a := answer{i: i, err: err}
			if err == nil {
				a.text = jsonOf(t, res.Content)
				if !res.IsError && len(res.Content) == 1 {
					a.text = res.Content[0].(*sdk.TextContent).Text
				}
			}
			answers <- a
		}()
	}
	for range n {
		a := <-answers
		want := fmt.Sprintf("roots:file:///client%d|sample:client%d", a.i, a.i)
		if a.i == 0 {
			want = "roots:file:///gateway|sample:client0"
		}
		if a.err != nil || a.text != want {
			t.Errorf("client %d: %v %s, want %s", a.i, a.err, a.text, want)
		}
	}
}

package mcp_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/mcp/mcpserver"
)

// rootsServer is an upstream that, like the reference filesystem server,
// asks its client for roots once initialized and again on
// notifications/roots/list_changed, and serves "roots" (what it was told,
// per session) and "sample" (a sampling request to its client).
type rootsServer struct {
	*sdk.Server
	seen  chan []string // roots learned, in order
	ended chan struct{} // one value per session that ended

	mu    sync.Mutex
	roots map[*sdk.ServerSession][]string
}

func newRootsServer() *rootsServer {
	s := &rootsServer{seen: make(chan []string, 64), ended: make(chan struct{}, 64), roots: map[*sdk.ServerSession][]string{}}
	learn := func(ss *sdk.ServerSession) {
		res, err := ss.ListRoots(context.Background(), nil)
		if err != nil || len(res.Roots) == 0 {
			return // the connector's own session has no roots to give
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		slices.Sort(uris)
		s.mu.Lock()
		s.roots[ss] = uris
		s.mu.Unlock()
		s.seen <- uris
	}
	s.Server = sdk.NewServer(&sdk.Implementation{Name: "roots", Version: "1"}, &sdk.ServerOptions{
		InitializedHandler: func(_ context.Context, req *sdk.InitializedRequest) {
			ss := req.Session
			go learn(ss)
			go func() { _ = ss.Wait(); s.ended <- struct{}{} }()
		},
		RootsListChangedHandler: func(_ context.Context, req *sdk.RootsListChangedRequest) { go learn(req.Session) },
	})
	s.AddTool(toolDef("roots"), func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(s.roots[req.Session], " ")}}}, nil
	})
	s.AddTool(toolDef("ask"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "who?", RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}})
		if err != nil {
			return nil, err
		}
		name, _ := res.Content["name"].(string)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action + " " + name}}}, nil
	})
	s.AddTool(toolDef("sample"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10, Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "hi"}}}})
		if err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{res.Content}}, nil
	})
	return s
}

// checkLeaks fails the test if goroutines started after it outlive the
// test; call it first so that its check runs after every other cleanup.
func checkLeaks(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

func toolDef(name string) *sdk.Tool {
	return &sdk.Tool{Name: name, InputSchema: testserver.ObjectSchema()}
}

// perClientGateway serves a toolkit whose connector "up" gives each client
// an upstream session of its own (at most max), over dial.
type perClientGateway struct {
	tk  *toolkit.Toolkit
	srv *mcpserver.Server
	d   *mcp.Delegate
}

func startPerClientGateway(t *testing.T, max int, url string, opts ...mcp.Option) *perClientGateway {
	t.Helper()
	opts = append([]mcp.Option{mcp.OptLogger(slog.New(slog.DiscardHandler)), mcp.OptServerRequests(mcp.ServerRequests{Forward: true}), mcp.OptPerClient(mcp.ClientSessionLimits{Max: max})}, opts...)
	d, err := mcp.NewDelegate("gateway", "1", opts...)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}, 16)
	srv, err := mcpserver.New(tk, nil, mcpserver.WithClientSessions(d, observer(func() {
		select {
		case started <- struct{}{}:
		default:
		}
	})))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tk.Run(ctx) }()
	t.Cleanup(func() {
		srv.Close()
		cancel()
		if err := <-runDone; err != nil {
			t.Error(err)
		}
	})
	g := &perClientGateway{tk: tk, srv: srv, d: d}
	// A client that watches the list sees when the server offers the
	// upstream's tools.
	changed := make(chan struct{}, 1)
	probe := g.connect(t, sdk.NewClient(&sdk.Implementation{Name: "probe", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	}))
	// The probe's session started before the connector exists: it gets
	// no upstream session of its own.
	<-started
	if err := tk.AddConnectorNS("up", url); err != nil {
		t.Fatal(err)
	}
	for {
		<-changed
		res, err := probe.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(res.Tools, func(tl *sdk.Tool) bool { return tl.Name == "roots" || tl.Name == "pid" }) {
			break
		}
	}
	probe.Close()
	return g
}

// observer is a bridge.ClientObserver calling f for each client session
// that starts.
type observer func()

func (f observer) ClientStarted(context.Context, bridge.Client) { f() }

// connect connects a go-sdk client to the gateway over an in-memory
// transport.
func (g *perClientGateway) connect(t *testing.T, c *sdk.Client) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = g.srv.Run(ctx, st); close(done) }()
	cs, err := c.Connect(context.Background(), ct, &sdk.ClientSessionOptions{ProtocolVersion: mcp.StatefulProtocolVersion})
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

func callText(t *testing.T, cs *sdk.ClientSession, tool string) (string, error) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "", errors.New(b.String())
	}
	return b.String(), nil
}

// sampler is a client whose sampling answers name it, once every sampler
// sharing its barrier has been asked: the requests are in flight together.
func sampler(name string, barrier *sync.WaitGroup, roots ...string) *sdk.Client {
	c := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, &sdk.ClientOptions{
		CreateMessageHandler: func(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			if barrier != nil {
				barrier.Done()
				barrier.Wait()
			}
			return &sdk.CreateMessageResult{Model: "m", Role: "assistant", Content: &sdk.TextContent{Text: "from " + name}}, nil
		},
	})
	for _, r := range roots {
		c.AddRoots(&sdk.Root{URI: r})
	}
	return c
}

// asker is a client whose elicitation answers give its name, once every
// asker sharing its barrier has been asked.
func asker(name string, barrier *sync.WaitGroup) *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			barrier.Done()
			barrier.Wait()
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
		},
	})
}

// TestPerClientElicitation: two clients' concurrent elicitation requests
// are each asked of their own client.
func TestPerClientElicitation(t *testing.T) {
	checkLeaks(t)
	_, _, g := rootsGateway(t, 4)
	var barrier sync.WaitGroup
	barrier.Add(2)
	sessions := []*sdk.ClientSession{g.connect(t, asker("A", &barrier)), g.connect(t, asker("B", &barrier))}
	var wg sync.WaitGroup
	got := make([]string, 2)
	errs := make([]error, 2)
	for i, cs := range sessions {
		wg.Go(func() { got[i], errs[i] = callText(t, cs, "ask") })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || got[0] != "accept A" || got[1] != "accept B" {
		t.Errorf("concurrent elicitation: A got %q (%v), B got %q (%v)", got[0], errs[0], got[1], errs[1])
	}
}

// TestPerClientRootsAndSampling: with OptPerClient each client of a
// gateway has an upstream session of its own, opened when its session
// starts: the upstream learns the client's roots at initialize, before any
// call; each client's calls see its own roots; a client's roots change
// reaches its upstream session alone; and two clients' concurrent sampling
// requests are each answered by their own client (on one shared session
// they could not be told apart).
func TestPerClientRootsAndSampling(t *testing.T) {
	checkLeaks(t)
	up, _, g := rootsGateway(t, 4)

	var barrier sync.WaitGroup
	barrier.Add(2)
	a := g.connect(t, sampler("A", &barrier, "file:///a"))
	if got := <-up.seen; !slices.Equal(got, []string{"file:///a"}) {
		t.Fatalf("upstream of A learned roots %v at initialize, want [file:///a]", got)
	}
	bc := sampler("B", &barrier, "file:///b")
	b := g.connect(t, bc)
	if got := <-up.seen; !slices.Equal(got, []string{"file:///b"}) {
		t.Fatalf("upstream of B learned roots %v at initialize, want [file:///b]", got)
	}
	for cs, want := range map[*sdk.ClientSession]string{a: "file:///a", b: "file:///b"} {
		if got, err := callText(t, cs, "roots"); err != nil || got != want {
			t.Errorf("roots = %q, %v; want %q", got, err, want)
		}
	}

	var wg sync.WaitGroup
	got := make([]string, 2)
	errs := make([]error, 2)
	for i, cs := range []*sdk.ClientSession{a, b} {
		wg.Go(func() { got[i], errs[i] = callText(t, cs, "sample") })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || got[0] != "from A" || got[1] != "from B" {
		t.Errorf("concurrent sampling: A got %q (%v), B got %q (%v)", got[0], errs[0], got[1], errs[1])
	}

	bc.AddRoots(&sdk.Root{URI: "file:///b2"})
	if got := <-up.seen; !slices.Equal(got, []string{"file:///b", "file:///b2"}) {
		t.Fatalf("after B's roots changed, its upstream learned %v", got)
	}
	if got, err := callText(t, b, "roots"); err != nil || got != "file:///b file:///b2" {
		t.Errorf("B's roots after the change = %q, %v", got, err)
	}
	if got, err := callText(t, a, "roots"); err != nil || got != "file:///a" {
		t.Errorf("A's roots after B's change = %q, %v", got, err)
	}
	if open, opened := connectorOf(t, g).ClientSessions(); open != 2 || opened != 2 {
		t.Errorf("ClientSessions = %d open, %d opened; want 2, 2", open, opened)
	}
	a.Close()
	<-up.ended // A's upstream session closes with A's
}

// TestPerClientLimit: beyond OptPerClient's maximum a client's calls are
// refused with an error naming the limit; once another client leaves,
// its calls are served on a session of its own.
func TestPerClientLimit(t *testing.T) {
	checkLeaks(t)
	up, _, g := rootsGateway(t, 1)

	a := g.connect(t, sampler("A", nil, "file:///a"))
	<-up.seen
	b := g.connect(t, sampler("B", nil, "file:///b"))
	got, err := callText(t, b, "roots")
	if err == nil || !strings.Contains(err.Error(), "1 client sessions open, the most allowed") {
		t.Fatalf("B's call beyond the limit: %q, %v", got, err)
	}
	a.Close()
	<-up.ended
	// B's session opens at its call; the server asks for its roots once
	// initialized, which the call may overtake.
	if _, err := callText(t, b, "roots"); err != nil {
		t.Fatalf("B's call once A left: %v", err)
	}
	if got := <-up.seen; !slices.Equal(got, []string{"file:///b"}) {
		t.Fatalf("B's upstream learned roots %v, want [file:///b]", got)
	}
	if got, err := callText(t, b, "roots"); err != nil || got != "file:///b" {
		t.Errorf("B's roots once A left = %q, %v", got, err)
	}
}

// connectorOf returns the gateway's connector "up".
func connectorOf(t *testing.T, g *perClientGateway) *mcp.Connector {
	t.Helper()
	item, err := g.tk.Lookup(context.Background(), "up.roots")
	if err != nil {
		t.Fatal(err)
	}
	c, ok := mcp.ConnectorOfForTest(item)
	if !ok {
		t.Fatalf("%T is not a remote tool", item)
	}
	return c
}

// TestPerClientReopensDroppedSession: when the server drops a client's
// upstream session, the client's next call opens another, which carries
// the client's roots again; the client is never served by the shared
// session meanwhile.
func TestPerClientReopensDroppedSession(t *testing.T) {
	checkLeaks(t)
	up, m, g := rootsGateway(t, 2)
	a := g.connect(t, sampler("A", nil, "file:///a"))
	<-up.seen
	m.Drop() // every upstream session, the shared one too
	if _, err := callText(t, a, "roots"); err != nil {
		t.Fatalf("A's call after its session was dropped: %v", err)
	}
	if got := <-up.seen; !slices.Equal(got, []string{"file:///a"}) {
		t.Fatalf("A's new upstream session learned %v", got)
	}
	if got, err := callText(t, a, "roots"); err != nil || got != "file:///a" {
		t.Errorf("A's roots on its new session = %q, %v", got, err)
	}
	if _, opened := connectorOf(t, g).ClientSessions(); opened != 2 {
		t.Errorf("%d sessions opened for A, want 2", opened)
	}
}

// TestOptPerClientRefusesNegative: a negative maximum is a bad option.
func TestOptPerClientRefusesNegative(t *testing.T) {
	if _, err := mcp.New("http://x/mcp", "c", "1", mcp.OptPerClient(mcp.ClientSessionLimits{Max: -1})); !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "OptPerClient") {
		t.Errorf("OptPerClient(ClientSessionLimits{Max: -1}): %v", err)
	}
}

// rootsGateway starts a roots server in memory, as upstream "up" of a
// per-client gateway keeping at most max client sessions.
func rootsGateway(t *testing.T, max int) (*rootsServer, *testserver.Memory, *perClientGateway) {
	t.Helper()
	up := newRootsServer()
	m := testserver.NewMemory(up.Server)
	t.Cleanup(m.Close)
	return up, m, startPerClientGateway(t, max, "memory://up", mcp.OptDialer(m.Dial))
}

package mcpserver

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
)

// The scale benchmarks put many upstream MCP servers behind one toolkit
// served by a Server, all in process over in-memory transports:
//
//	go test -run '^$' -bench Scale -benchtime 1x ./mcp/mcpserver/
//
// Each compares the gateway of scaleUpstreams upstreams with one upstream
// of the same number of tools, or with a plain go-sdk server holding every
// tool.
const (
	scaleUpstreams = 100
	scaleTools     = 100 // per upstream
)

// scaleSchema is the input schema of every upstream tool.
var scaleSchema = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
	"a": {Type: "integer", Description: "first operand"},
	"b": {Type: "integer", Description: "second operand"},
}, Required: []string{"a", "b"}}

// scaleTool is tool j of upstream i, with the description's version v.
func scaleTool(i, j, v int) *sdk.Tool {
	return &sdk.Tool{
		Name:        fmt.Sprintf("tool_%03d", j),
		Description: fmt.Sprintf("Tool %d of server %d, version %d.", j, i, v),
		InputSchema: scaleSchema,
	}
}

func scaleHandler(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
}

// scaleUpstream is upstream i with n tools.
func scaleUpstream(i, n int) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: fmt.Sprintf("up%d", i), Version: "1"}, nil)
	for j := range n {
		s.AddTool(scaleTool(i, j, 0), scaleHandler)
	}
	return s
}

// scaleClientSession is how the downstream clients of the scale
// benchmarks connect: with the stateful protocol, on which the go-sdk's
// client keeps no copy of the tool lists it walks (on 2026-07-28 it
// caches every page, about 2 KB a tool here), so that the heap measured
// is the server's.
var scaleClientSession = &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

// scaleRunner runs goroutines that end with the test, and waits for them.
type scaleRunner struct {
	ctx     context.Context
	cancel  context.CancelFunc
	mu      sync.Mutex
	running []chan struct{}
}

func newScaleRunner(tb testing.TB) *scaleRunner {
	r := &scaleRunner{}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	tb.Cleanup(func() {
		r.cancel()
		for {
			r.mu.Lock()
			waits := r.running
			r.running = nil
			r.mu.Unlock()
			if len(waits) == 0 {
				return
			}
			for _, c := range waits {
				<-c
			}
		}
	})
	return r
}

func (r *scaleRunner) goRun(f func(ctx context.Context)) {
	done := make(chan struct{})
	r.mu.Lock()
	r.running = append(r.running, done)
	r.mu.Unlock()
	go func() { defer close(done); f(r.ctx) }()
}

// serve runs s over a fresh pair of in-memory transports and returns the
// client's end.
func (r *scaleRunner) serve(run func(context.Context, sdk.Transport) error) sdk.Transport {
	ct, st := sdk.NewInMemoryTransports()
	r.goRun(func(ctx context.Context) { _ = run(ctx, st) })
	return ct
}

// scaleDelegate makes MCP connectors that dial the in-memory upstream their
// URL names.
type scaleDelegate struct {
	*mcp.Delegate
	r   *scaleRunner
	ups map[string]*sdk.Server
}

func (d *scaleDelegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	up, ok := d.ups[url]
	if !ok {
		return nil, toolkit.ErrNotImplemented
	}
	inner := *d.Delegate
	inner.Options = append(inner.Options[:len(inner.Options):len(inner.Options)], mcp.OptDialer(func(context.Context) (sdk.Transport, error) {
		return d.r.serve(up.Run), nil
	}))
	return inner.CreateConnector(url, onEvent)
}

// scaleGateway is a toolkit of upstreams served by a Server, with one
// downstream client.
type scaleGateway struct {
	r         *scaleRunner
	ups       []*sdk.Server
	tk        *toolkit.Toolkit
	srv       *Server
	cs        *sdk.ClientSession
	changed   chan struct{} // the downstream client got tools/list_changed
	events    chan string   // namespaces of the toolkit's tool list changes
	namespace []string
}

// newScaleGateway makes upstreams×tools upstream tools and the gateway in
// front of them; start runs it.
func newScaleGateway(tb testing.TB, upstreams, tools int) *scaleGateway {
	tb.Helper()
	g := &scaleGateway{r: newScaleRunner(tb), changed: make(chan struct{}, 1)}
	d := &scaleDelegate{Delegate: mustDelegate(tb, mcp.OptLogger(quietLogger())), r: g.r, ups: map[string]*sdk.Server{}}
	for i := range upstreams {
		up := scaleUpstream(i, tools)
		g.ups = append(g.ups, up)
		d.ups[fmt.Sprintf("mem://up%d", i)] = up
	}
	tk, err := toolkit.New(toolkit.WithDelegate(d), toolkit.WithLogger(quietLogger()))
	if err != nil {
		tb.Fatal(err)
	}
	g.tk = tk
	g.events = make(chan string, 1024)
	unsubscribe := tk.Subscribe(func(ev toolkit.ConnectorEvent) {
		if ev.Kind == toolkit.ConnectorEventToolListChanged {
			select {
			case g.events <- ev.Namespace:
			default:
			}
		}
	})
	tb.Cleanup(unsubscribe)
	if g.srv, err = New(tk, nil, WithLogger(quietLogger())); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { g.srv.Close() })
	client := sdk.NewClient(&sdk.Implementation{Name: "downstream", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case g.changed <- struct{}{}:
			default:
			}
		},
	})
	if g.cs, err = client.Connect(g.r.ctx, g.r.serve(g.srv.Run), scaleClientSession); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { g.cs.Close() })
	for i := range upstreams {
		ns := fmt.Sprintf("up%d", i)
		if err := tk.AddConnectorNS(ns, "mem://"+ns); err != nil {
			tb.Fatal(err)
		}
		g.namespace = append(g.namespace, ns)
	}
	return g
}

// start runs the toolkit and returns once every upstream is ready and the
// Server has registered their tools.
func (g *scaleGateway) start(tb testing.TB) {
	tb.Helper()
	g.r.goRun(func(ctx context.Context) { _ = g.tk.Run(ctx) })
	if _, err := g.tk.WaitConnectors(g.r.ctx, g.namespace...); err != nil {
		tb.Fatal(err)
	}
	g.tk.WaitEvents()
}

// walkTools lists every tool through cs, page by page, and returns the
// description of each by name.
func walkTools(tb testing.TB, cs *sdk.ClientSession) map[string]string {
	tb.Helper()
	out := map[string]string{}
	for t, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			tb.Fatal(err)
		}
		out[t.Name] = t.Description
	}
	return out
}

// countTools lists every tool through cs and returns how many there are.
func countTools(tb testing.TB, cs *sdk.ClientSession) int {
	tb.Helper()
	n := 0
	for _, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			tb.Fatal(err)
		}
		n++
	}
	return n
}

// change gives tool 0 of upstream i the description's version v; the
// upstream announces it with tools/list_changed.
func (g *scaleGateway) change(i, v int) (desc string) {
	t := scaleTool(i, 0, v)
	g.ups[i].AddTool(t, scaleHandler)
	return t.Description
}

// awaitChange waits for the downstream client to see the tool the exposed
// name names with description desc, listing the tools after each
// tools/list_changed it gets (one may be left from an earlier change: the
// walk tells).
func (g *scaleGateway) awaitChange(tb testing.TB, exposed, desc string) {
	tb.Helper()
	for {
		select {
		case <-g.changed:
		case <-g.r.ctx.Done():
			tb.Fatal("stopped")
		}
		if walkTools(tb, g.cs)[exposed] == desc {
			return
		}
	}
}

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkScaleReady measures the time from the toolkit's start to a
// downstream client listing every upstream tool, and the gateway's live
// heap per tool once it is ready (the upstream servers' own memory is
// left out, and the client keeps no copy of the list:
// scaleClientSession). The baseline is a plain go-sdk server holding
// every tool, listed by a client of its own.
func BenchmarkScaleReady(b *testing.B) {
	for _, ups := range []int{1, scaleUpstreams} {
		tools := scaleUpstreams * scaleTools / ups
		b.Run(fmt.Sprintf("gateway/upstreams=%d/tools=%d", ups, ups*tools), func(b *testing.B) {
			var heap uint64
			for b.Loop() {
				b.StopTimer()
				g := newScaleGateway(b, ups, tools)
				before := heapInUse()
				b.StartTimer()
				g.start(b)
				if n := countTools(b, g.cs); n != ups*tools {
					b.Fatalf("the client sees %d tools, want %d", n, ups*tools)
				}
				b.StopTimer()
				heap = heapInUse() - before
				b.StartTimer()
			}
			b.ReportMetric(float64(heap)/float64(ups*tools), "heap-B/tool")
		})
	}
	b.Run(fmt.Sprintf("sdk/tools=%d", scaleUpstreams*scaleTools), func(b *testing.B) {
		var heap uint64
		for b.Loop() {
			b.StopTimer()
			r := newScaleRunner(b)
			before := heapInUse()
			b.StartTimer()
			s := sdk.NewServer(&sdk.Implementation{Name: "plain", Version: "1"}, nil)
			for i := range scaleUpstreams {
				for j := range scaleTools {
					t := scaleTool(i, j, 0)
					t.Name = fmt.Sprintf("up%d_%s", i, t.Name)
					s.AddTool(t, scaleHandler)
				}
			}
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil).Connect(r.ctx, r.serve(s.Run), scaleClientSession)
			if err != nil {
				b.Fatal(err)
			}
			if n := countTools(b, cs); n != scaleUpstreams*scaleTools {
				b.Fatalf("the client sees %d tools", n)
			}
			b.StopTimer()
			heap = heapInUse() - before
			cs.Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(heap)/float64(scaleUpstreams*scaleTools), "heap-B/tool")
	})
}

// BenchmarkScaleList measures a downstream client's walk of every page of
// tools/list (the go-sdk's default page size, 1000), through the gateway
// and from a plain go-sdk server holding the same tools.
func BenchmarkScaleList(b *testing.B) {
	total := scaleUpstreams * scaleTools
	b.Run(fmt.Sprintf("gateway/tools=%d", total), func(b *testing.B) {
		g := newScaleGateway(b, scaleUpstreams, scaleTools)
		g.start(b)
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if n := countTools(b, g.cs); n != total {
				b.Fatalf("%d tools", n)
			}
		}
	})
	b.Run(fmt.Sprintf("sdk/tools=%d", total), func(b *testing.B) {
		r := newScaleRunner(b)
		s := sdk.NewServer(&sdk.Implementation{Name: "plain", Version: "1"}, nil)
		for i := range scaleUpstreams {
			for j := range scaleTools {
				t := scaleTool(i, j, 0)
				t.Name = fmt.Sprintf("up%d_%s", i, t.Name)
				s.AddTool(t, scaleHandler)
			}
		}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil).Connect(r.ctx, r.serve(s.Run), scaleClientSession)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if n := countTools(b, cs); n != total {
				b.Fatalf("%d tools", n)
			}
		}
	})
}

// BenchmarkScaleListChanged measures one upstream changing one tool's
// description, with 1 upstream and with scaleUpstreams upstreams behind
// the gateway (scaleTools tools each). ms-to-register is the time until
// the gateway has registered the change (the upstream announced it, the
// connector listed its tools again, the toolkit published them and the
// Server synchronised); cpu-ms, allocs and KB are what the whole process
// spent meanwhile. ms-to-client is the time until the downstream client,
// told by tools/list_changed (which the go-sdk sends 10 ms after the last
// change), has walked the new list: the protocol makes that walk
// proportional to the whole list.
func BenchmarkScaleListChanged(b *testing.B) {
	for _, ups := range []int{1, scaleUpstreams} {
		b.Run(fmt.Sprintf("upstreams=%d/tools=%d", ups, ups*scaleTools), func(b *testing.B) {
			g := newScaleGateway(b, ups, scaleTools)
			g.start(b)
			// The last upstream changes (with one, its only one).
			last := ups - 1
			ns := g.namespace[last]
			exposed, ok := g.srv.ExposedName(toolkit.ListTypeTools, ns+".tool_000")
			if !ok {
				b.Fatal("tool_000 is not exposed")
			}
			// A first change absorbs the events and notifications of the
			// start.
			desc := g.change(last, 1)
			g.awaitChange(b, exposed, desc)
			g.tk.WaitEvents()
			for len(g.events) > 0 {
				<-g.events
			}
			var registered, client, cpu time.Duration
			var mallocs, bytes uint64
			var ms runtime.MemStats
			v := 1
			b.ResetTimer()
			for b.Loop() {
				v++
				runtime.ReadMemStats(&ms)
				m0, b0, c0 := ms.Mallocs, ms.TotalAlloc, cpuTime()
				start := time.Now()
				desc := g.change(last, v)
				for got := range g.events {
					if got == ns {
						break
					}
				}
				// The Server is a subscriber too: once the events are
				// delivered, it has synchronised.
				g.tk.WaitEvents()
				registered += time.Since(start)
				runtime.ReadMemStats(&ms)
				mallocs += ms.Mallocs - m0
				bytes += ms.TotalAlloc - b0
				cpu += cpuTime() - c0
				g.awaitChange(b, exposed, desc)
				client += time.Since(start)
			}
			n := float64(b.N)
			b.ReportMetric(float64(registered.Microseconds())/n/1000, "ms-to-register/op")
			b.ReportMetric(float64(cpu.Microseconds())/n/1000, "cpu-ms/op")
			b.ReportMetric(float64(mallocs)/n, "allocs-to-register/op")
			b.ReportMetric(float64(bytes)/n/1024, "KB-to-register/op")
			b.ReportMetric(float64(client.Microseconds())/n/1000, "ms-to-client/op")
		})
	}
}

// TestScaleGateway runs the scale benchmarks' gateway with a few small
// upstreams: every tool reaches the client, and one upstream's change
// reaches it too.
func TestScaleGateway(t *testing.T) {
	leakCheck(t)
	g := newScaleGateway(t, 3, 5)
	g.start(t)
	if n := countTools(t, g.cs); n != 15 {
		t.Fatalf("the client sees %d tools, want 15", n)
	}
	desc := g.change(1, 1)
	g.awaitChange(t, "up1_tool_000", desc)
}

// BenchmarkScaleSync measures a change of one source's tools in a toolkit
// of in-memory sources (no MCP: the toolkit's publication and the
// Server's synchronisation alone), until the Server has synchronised:
// "describe" gives one tool a new description, "add-remove" adds a tool
// and removes it again (two changes an op), with 1 source and with
// scaleUpstreams sources of scaleTools tools each.
func BenchmarkScaleSync(b *testing.B) {
	for _, op := range []string{"describe", "add-remove"} {
		for _, n := range []int{1, scaleUpstreams} {
			b.Run(fmt.Sprintf("%s/sources=%d/tools=%d", op, n, n*scaleTools), func(b *testing.B) {
				conns := map[string][]toolkit.Tool{}
				var order []string
				for i := range n {
					ns := fmt.Sprintf("s%d", i)
					order = append(order, ns)
					for j := range scaleTools {
						tl := namedTool(fmt.Sprintf("tool_%03d", j), ns)
						tl.in = scaleSchema
						conns[ns] = append(conns[ns], tl)
					}
				}
				tk, byNS := mutableToolkit(b, nil, conns, order)
				srv, err := New(tk, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer srv.Close()
				ns := order[n-1]
				tools := conns[ns]
				v := 0
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					v++
					next := slices.Clone(tools)
					switch op {
					case "describe":
						tl := namedTool("tool_000", ns)
						tl.in, tl.desc = scaleSchema, fmt.Sprintf("version %d", v)
						next[0] = tl
						byNS[ns].set(next)
					default:
						byNS[ns].set(append(next, namedTool("extra", ns)))
						tk.WaitEvents()
						byNS[ns].set(tools)
					}
					tk.WaitEvents()
				}
				b.StopTimer()
				if _, ok := srv.ExposedName(toolkit.ListTypeTools, ns+".tool_000"); !ok {
					b.Fatal("tool_000 is gone")
				}
			})
		}
	}
}

package mcpserver

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/fingerprint"
)

// mutableConn is a connector whose tools a test changes; each change is
// announced with a tool list change.
type mutableConn struct {
	mu      sync.Mutex
	onEvent func(toolkit.ConnectorEvent)
	tools   []toolkit.Tool
	ready   chan struct{}
}

func (c *mutableConn) Run(ctx context.Context) error {
	c.onEvent(toolkit.StateChangeEvent(toolkit.ConnectorState{Status: toolkit.StatusReady}))
	close(c.ready)
	<-ctx.Done()
	return nil
}

func (c *mutableConn) ListTools(context.Context) ([]toolkit.Tool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.tools), nil
}
func (c *mutableConn) ListPrompts(context.Context) ([]toolkit.Prompt, error)     { return nil, nil }
func (c *mutableConn) ListResources(context.Context) ([]toolkit.Resource, error) { return nil, nil }

// set replaces the connector's tools and announces it.
func (c *mutableConn) set(tools []toolkit.Tool) {
	c.mu.Lock()
	c.tools = tools
	c.mu.Unlock()
	c.onEvent(toolkit.ToolListChangeEvent())
}

// mutableDelegate creates the mutable connectors registered by URL.
type mutableDelegate struct{ conns map[string]*mutableConn }

func (d *mutableDelegate) OnEvent(toolkit.ConnectorEvent) {}
func (d *mutableDelegate) Call(context.Context, toolkit.Prompt, ...toolkit.Resource) (toolkit.Resource, error) {
	return nil, toolkit.ErrNotImplemented
}
func (d *mutableDelegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	c, ok := d.conns[url]
	if !ok {
		return nil, toolkit.ErrNotImplemented
	}
	c.onEvent = onEvent
	return c, nil
}

// countedTool counts the calls of its InputSchema, which describing it for
// MCP makes.
type countedTool struct {
	testTool
	described *atomic.Int64
}

func (t *countedTool) InputSchema() (*jsonschema.Schema, error) {
	t.described.Add(1)
	return t.testTool.InputSchema()
}

// mutableToolkit runs a toolkit with connectors of the given namespaces
// (and builtins), all ready when it returns.
func mutableToolkit(t testing.TB, builtins []toolkit.Tool, conns map[string][]toolkit.Tool, order []string) (*toolkit.Toolkit, map[string]*mutableConn) {
	t.Helper()
	d := &mutableDelegate{conns: map[string]*mutableConn{}}
	byNS := map[string]*mutableConn{}
	for ns, tools := range conns {
		c := &mutableConn{tools: tools, ready: make(chan struct{})}
		d.conns["fake://"+ns], byNS[ns] = c, c
	}
	opts := []toolkit.Option{toolkit.WithDelegate(d)}
	for _, b := range builtins {
		opts = append(opts, toolkit.WithTool(b))
	}
	tk, err := toolkit.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tk.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	for _, ns := range order {
		if err := tk.AddConnectorNS(ns, "fake://"+ns); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tk.WaitConnectors(ctx, order...); err != nil {
		t.Fatal(err)
	}
	tk.WaitEvents()
	return tk, byNS
}

// TestSyncOneSource checks that a change of one source's tool describes
// again that tool only: the tools of the other sources, and the unchanged
// ones of the same source, are not described again.
func TestSyncOneSource(t *testing.T) {
	leakCheck(t)
	var others, same, changed atomic.Int64
	tool := func(name string, n *atomic.Int64) toolkit.Tool {
		return &countedTool{testTool: *namedTool(name, "x"), described: n}
	}
	conns := map[string][]toolkit.Tool{}
	order := []string{"a", "b", "c"}
	for _, ns := range order {
		for j := range 4 {
			n := &others
			if ns == "b" {
				n = &same
			}
			conns[ns] = append(conns[ns], tool(fmt.Sprintf("t%d", j), n))
		}
	}
	tk, byNS := mutableToolkit(t, []toolkit.Tool{tool("t0", &others)}, conns, order)
	srv, err := New(tk, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	others.Store(0)
	same.Store(0)

	srv.mu.Lock()
	fpBefore := srv.regs[toolkit.KindTool]["b_t2"].fp
	srv.mu.Unlock()
	next := slices.Clone(conns["b"])
	nt := tool("t2", &changed)
	nt.(*countedTool).desc = "a new description"
	next[2] = nt
	byNS["b"].set(next)
	tk.WaitEvents()

	if got, _ := srv.ExposedName(toolkit.ListTypeTools, "b.t2"); got != "b_t2" {
		t.Fatalf("b.t2 exposed as %q", got)
	}
	srv.mu.Lock()
	reg := srv.regs[toolkit.KindTool]["b_t2"]
	srv.mu.Unlock()
	srv.syncMu.Lock()
	def := srv.kinds[toolkit.KindTool].defs["b_t2"].def.sdk.(*sdk.Tool)
	srv.syncMu.Unlock()
	if reg.key != "b.t2" || def.Description != "a new description" || reg.fp != fingerprint.Of(def) || reg.fp == fpBefore {
		t.Errorf("b_t2 registered as %+v (fingerprint before the change %x), definition %+v", reg, fpBefore, def)
	}
	if changed.Load() == 0 {
		t.Error("the changed tool was not described")
	}
	if n := others.Load(); n != 0 {
		t.Errorf("the tools of the other sources were described %d times", n)
	}
	// The toolkit may read the schemas of the source it re-lists, but the
	// server must not describe its unchanged tools again.
	before := same.Load()
	byNS["b"].set(next) // the same tools: nothing changes
	tk.WaitEvents()
	if n := others.Load() + (same.Load() - before); n != 0 {
		t.Errorf("an unchanged list described %d tools", n)
	}
	// An addition and a removal name and describe the source's new tool
	// only.
	var added atomic.Int64
	byNS["b"].set(append(slices.Clone(next), tool("t9", &added)))
	tk.WaitEvents()
	if got, _ := srv.ExposedName(toolkit.ListTypeTools, "b.t9"); got != "t9" {
		t.Errorf("b.t9 exposed as %q, want t9", got)
	}
	byNS["b"].set(next)
	tk.WaitEvents()
	if _, ok := srv.ExposedName(toolkit.ListTypeTools, "b.t9"); ok {
		t.Error("b.t9 still exposed after its removal")
	}
	if added.Load() == 0 {
		t.Error("the added tool was not described")
	}
	if n := others.Load() + (same.Load() - before); n != 0 {
		t.Errorf("an addition and a removal described %d other tools", n)
	}
}

// TestSyncMatchesFullSync applies random changes to random sources (names
// chosen to collide: bare names, qualified names that a bare name already
// holds) and checks after each that the server's tables are those a new
// server computes from scratch.
func TestSyncMatchesFullSync(t *testing.T) {
	for _, tc := range []struct {
		name string
		pool []string
		opts []Option
	}{
		{"collisions", []string{"x", "y", "z", "a_x", "b_y", "c_x_2"}, nil},
		{"bare", []string{"x", "y", "z", "w", "v"}, nil},
		{"qualified", []string{"x", "y", "z", "a_x", "w"}, []Option{WithQualifiedNames()}},
	} {
		t.Run(tc.name, func(t *testing.T) { testSyncMatchesFullSync(t, tc.pool, tc.opts) })
	}
}

func testSyncMatchesFullSync(t *testing.T, pool []string, opts []Option) {
	leakCheck(t)
	order := []string{"a", "b", "c", "d"}
	rng := rand.New(rand.NewPCG(1, 2))
	version := 0
	mk := func(name string) toolkit.Tool {
		version++
		tl := namedTool(name, "v")
		tl.desc = fmt.Sprintf("%s version %d", name, version)
		return tl
	}
	conns := map[string][]toolkit.Tool{}
	for _, ns := range order {
		for _, name := range pool[:3] {
			conns[ns] = append(conns[ns], mk(name))
		}
	}
	tk, byNS := mutableToolkit(t, []toolkit.Tool{mk("x"), mk("a_x")}, conns, order)
	srv, err := New(tk, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cs := (&fixture{tk: tk, srv: srv}).connect(t, nil)
	listed := func(cs *sdk.ClientSession) map[string]string {
		out := map[string]string{}
		for tl, err := range cs.Tools(context.Background(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			out[tl.Name] = tl.Description
		}
		return out
	}
	for step := range 100 {
		ns := order[rng.IntN(len(order))]
		tools := slices.Clone(conns[ns])
		var what string
		switch op := rng.IntN(3); {
		case op == 0 && len(tools) > 0: // a new description
			i := rng.IntN(len(tools))
			tools[i] = mk(tools[i].Name())
			what = "change " + tools[i].Name()
		case op == 1 && len(tools) > 0: // a removal
			i := rng.IntN(len(tools))
			what = "remove " + tools[i].Name()
			tools = slices.Delete(tools, i, i+1)
		default: // an addition, when the name is free
			name := pool[rng.IntN(len(pool))]
			what = "add " + name
			if !slices.ContainsFunc(tools, func(tl toolkit.Tool) bool { return tl.Name() == name }) {
				tools = append(tools, mk(name))
			}
		}
		conns[ns] = tools
		byNS[ns].set(tools)
		tk.WaitEvents()

		fresh, err := New(tk, nil, opts...)
		if err != nil {
			t.Fatal(err)
		}
		srv.mu.Lock()
		got := maps.Clone(srv.regs[toolkit.KindTool])
		srv.mu.Unlock()
		want := fresh.regs[toolkit.KindTool]
		if !maps.Equal(got, want) {
			fresh.Close()
			t.Fatalf("step %d (%s in %s): tables differ\n got %v\nwant %v", step, what, ns, got, want)
		}
		if got, want := listed(cs), listed((&fixture{tk: tk, srv: fresh}).connect(t, nil)); !maps.Equal(got, want) {
			fresh.Close()
			t.Fatalf("step %d (%s in %s): clients see\n %v\nwant %v", step, what, ns, got, want)
		}
		fresh.Close()
	}
}

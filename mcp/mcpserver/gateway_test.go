package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// fakeConn is a connector serving fixed items from memory.
type fakeConn struct {
	onEvent   func(toolkit.ConnectorEvent)
	tools     []toolkit.Tool
	resources []toolkit.Resource
	ready     chan struct{}
}

func (c *fakeConn) Run(ctx context.Context) error {
	c.onEvent(toolkit.StateChangeEvent(toolkit.ConnectorState{Status: toolkit.StatusReady}))
	close(c.ready)
	<-ctx.Done()
	return nil
}
func (c *fakeConn) ListTools(context.Context) ([]toolkit.Tool, error)     { return c.tools, nil }
func (c *fakeConn) ListPrompts(context.Context) ([]toolkit.Prompt, error) { return nil, nil }
func (c *fakeConn) ListResources(context.Context) ([]toolkit.Resource, error) {
	return c.resources, nil
}

// fakeDelegate creates the fake connectors registered by URL.
type fakeDelegate struct{ conns map[string]*fakeConn }

func (d *fakeDelegate) OnEvent(toolkit.ConnectorEvent) {}
func (d *fakeDelegate) Call(context.Context, toolkit.Prompt, ...toolkit.Resource) (toolkit.Resource, error) {
	return nil, toolkit.ErrNotImplemented
}
func (d *fakeDelegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	c, ok := d.conns[url]
	if !ok {
		return nil, toolkit.ErrNotImplemented
	}
	c.onEvent = onEvent
	return c, nil
}

// namedTool returns a tool that answers with its source.
func namedTool(name, source string) *testTool {
	return funcTool(name, func(context.Context, json.RawMessage) (any, error) { return source, nil })
}

// TestServerNamespaces checks the naming policy end to end: a connector
// arriving after the builtins, with clashing and hostile items.
func TestServerNamespaces(t *testing.T) {
	leakCheck(t)
	web := &fakeConn{ready: make(chan struct{}),
		tools: []toolkit.Tool{
			namedTool("search", "web"),
			namedTool("fetch.page", "web"),
			&testTool{name: "hostile", desc: "array input", in: &jsonschema.Schema{Type: "array"}},
		},
		resources: []toolkit.Resource{&staticResource{uri: "file:///a", name: "a", typ: "text/plain", data: []byte("web a")}},
	}
	tk, err := toolkit.New(toolkit.WithDelegate(&fakeDelegate{conns: map[string]*fakeConn{"fake://web": web}}),
		toolkit.WithTool(namedTool("search", "builtin")),
		toolkit.WithResource(&staticResource{uri: "file:///a", name: "a", typ: "text/plain", data: []byte("builtin a")}),
	)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(tk, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	f := &fixture{tk: tk, srv: srv}
	cs := f.connect(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tk.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := tk.AddConnectorNS("web", "fake://web"); err != nil {
		t.Fatal(err)
	}
	<-web.ready
	tk.WaitEvents()

	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	// The builtin had "search" first and keeps it; the newcomer is
	// qualified; the hostile schema is skipped.
	if want := []string{"fetch.page", "search", "web_search"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	for name, want := range map[string]string{"search": "builtin", "web_search": "web", "fetch.page": "web"} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name})
		if err != nil || resultText(t, res) != want {
			t.Errorf("%s: %v %+v", name, err, res)
		}
	}
	if got, _ := srv.ExposedName(toolkit.ListTypeTools, "web.search"); got != "web_search" {
		t.Errorf("ExposedName: %q", got)
	}
	for exposed, want := range map[string]string{"web_search": "web.search", "search": "builtin.search", "fetch.page": "web.fetch.page"} {
		if got, ok := srv.ItemKey(toolkit.ListTypeTools, exposed); !ok || got != want {
			t.Errorf("ItemKey(%q) = %q, %v, want %q", exposed, got, ok, want)
		}
	}
	if got, ok := srv.ItemKey(toolkit.ListTypeTools, "nothing"); ok {
		t.Errorf("ItemKey of no tool: %q", got)
	}
	for uri, want := range map[string]string{"file:///a": "builtin a", "file:///a#web": "web a"} {
		rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil || rr.Contents[0].Text != want || rr.Contents[0].URI != uri {
			t.Errorf("read %s: %v %+v", uri, err, rr)
		}
	}

	// Removing the connector frees its names; the builtin stays put.
	if err := tk.RemoveConnector("fake://web"); err != nil {
		t.Fatal(err)
	}
	tk.WaitEvents()
	lt, err = cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 1 || lt.Tools[0].Name != "search" {
		t.Errorf("after removal: %v %+v", err, lt)
	}
}

// TestServerManyTools checks that a large toolkit is listed completely
// across pages.
func TestServerManyTools(t *testing.T) {
	leakCheck(t)
	var tools []toolkit.Tool
	for i := range 250 {
		tools = append(tools, namedTool(fmt.Sprintf("t%03d", i), "b"))
	}
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(tools...)}, WithPageSize(100))
	cs := f.connect(t, nil)
	n := 0
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("t%03d", n); tl.Name != want {
			t.Fatalf("tool %d is %q, want %q", n, tl.Name, want)
		}
		n++
	}
	if n != 250 {
		t.Errorf("listed %d tools", n)
	}
}

// TestServerWithoutEvents checks that a server nobody forwards events to
// follows the toolkit's changes anyway (through its own subscription).
func TestServerWithoutEvents(t *testing.T) {
	leakCheck(t)
	tk, err := toolkit.New(toolkit.WithTool(namedTool("one", "b")))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(tk, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{tk: tk, srv: srv}
	cs := f.connect(t, nil)
	if err := tk.AddTool(namedTool("two", "b")); err != nil {
		t.Fatal(err)
	}
	tk.WaitEvents() // the server has applied the change
	lt, err := cs.ListTools(context.Background(), &sdk.ListToolsParams{})
	if err != nil || len(lt.Tools) != 2 {
		t.Errorf("%v %+v", err, lt)
	}
}

func TestServerHostileTool(t *testing.T) {
	for _, tt := range []struct {
		name string
		t    toolkit.Tool
	}{
		{"array schema", &testTool{name: "x", in: &jsonschema.Schema{Type: "array"}}},
		{"schema error", &errTool{testTool{name: "x"}}},
		{"panicking schema", &panicTool{testTool{name: "x"}}},
		{"unmarshalable default", &testTool{name: "x", in: &jsonschema.Schema{Type: "object", Default: json.RawMessage("{")}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := sdkTool("x", tt.t); err == nil {
				t.Error("want an error")
			}
		})
	}
}

type errTool struct{ testTool }

func (*errTool) InputSchema() (*jsonschema.Schema, error) { return nil, fmt.Errorf("broken") }

type panicTool struct{ testTool }

func (*panicTool) InputSchema() (*jsonschema.Schema, error) { panic("boom") }

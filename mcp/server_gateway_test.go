package mcp

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

// srvFakeConn is a connector serving fixed items from memory.
type srvFakeConn struct {
	onEvent   func(toolkit.ConnectorEvent)
	tools     []toolkit.Tool
	resources []toolkit.Resource
	ready     chan struct{}
}

func (c *srvFakeConn) Run(ctx context.Context) error {
	c.onEvent(toolkit.StateChangeEvent(toolkit.ConnectorState{Status: toolkit.StatusReady}))
	close(c.ready)
	<-ctx.Done()
	return nil
}
func (c *srvFakeConn) ListTools(context.Context) ([]toolkit.Tool, error)     { return c.tools, nil }
func (c *srvFakeConn) ListPrompts(context.Context) ([]toolkit.Prompt, error) { return nil, nil }
func (c *srvFakeConn) ListResources(context.Context) ([]toolkit.Resource, error) {
	return c.resources, nil
}

// srvFakeDelegate creates the fake connectors registered by URL.
type srvFakeDelegate struct{ conns map[string]*srvFakeConn }

func (d *srvFakeDelegate) OnEvent(toolkit.ConnectorEvent) {}
func (d *srvFakeDelegate) Call(context.Context, toolkit.Prompt, ...toolkit.Resource) (toolkit.Resource, error) {
	return nil, toolkit.ErrNotImplemented
}
func (d *srvFakeDelegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	c, ok := d.conns[url]
	if !ok {
		return nil, toolkit.ErrNotImplemented
	}
	c.onEvent = onEvent
	return c, nil
}

// srvNamed returns a tool that answers with its source.
func srvNamed(name, source string) *srvTestTool {
	return srvFuncTool(name, func(context.Context, json.RawMessage) (any, error) { return source, nil })
}

// TestServerNamespaces checks the naming policy end to end: a connector
// arriving after the builtins, with clashing and hostile items.
func TestServerNamespaces(t *testing.T) {
	srvLeakCheck(t)
	web := &srvFakeConn{ready: make(chan struct{}),
		tools: []toolkit.Tool{
			srvNamed("search", "web"),
			srvNamed("fetch.page", "web"),
			&srvTestTool{name: "hostile", desc: "array input", in: &jsonschema.Schema{Type: "array"}},
		},
		resources: []toolkit.Resource{&srvStaticRes{uri: "file:///a", name: "a", typ: "text/plain", data: []byte("web a")}},
	}
	relay := ServerDelegate(&srvFakeDelegate{conns: map[string]*srvFakeConn{"fake://web": web}})
	tk, err := toolkit.New(toolkit.WithDelegate(relay),
		toolkit.WithTool(srvNamed("search", "builtin")),
		toolkit.WithResource(&srvStaticRes{uri: "file:///a", name: "a", typ: "text/plain", data: []byte("builtin a")}),
	)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(tk, nil, WithEventRelay(relay))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	f := &srvFixture{tk: tk, relay: relay, srv: srv}
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
		if err != nil || srvText(t, res) != want {
			t.Errorf("%s: %v %+v", name, err, res)
		}
	}
	if got, _ := srv.ExposedName(toolkit.ListTypeTools, "web.search"); got != "web_search" {
		t.Errorf("ExposedName: %q", got)
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
	srvLeakCheck(t)
	var tools []toolkit.Tool
	for i := range 250 {
		tools = append(tools, srvNamed(fmt.Sprintf("t%03d", i), "b"))
	}
	f := newSrvFixture(t, []toolkit.Option{toolkit.WithTool(tools...)}, WithPageSize(100))
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

// TestServerWithoutEvents checks the fallback for a server nobody forwards
// events to: lists are re-read on request.
func TestServerWithoutEvents(t *testing.T) {
	srvLeakCheck(t)
	tk, err := toolkit.New(toolkit.WithTool(srvNamed("one", "b")))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(tk, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &srvFixture{tk: tk, srv: srv}
	cs := f.connect(t, nil)
	if err := tk.AddTool(srvNamed("two", "b")); err != nil {
		t.Fatal(err)
	}
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
		{"array schema", &srvTestTool{name: "x", in: &jsonschema.Schema{Type: "array"}}},
		{"schema error", &srvErrTool{srvTestTool{name: "x"}}},
		{"panicking schema", &srvPanicTool{srvTestTool{name: "x"}}},
		{"unmarshalable default", &srvTestTool{name: "x", in: &jsonschema.Schema{Type: "object", Default: json.RawMessage("{")}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := srvSDKTool("x", tt.t); err == nil {
				t.Error("want an error")
			}
		})
	}
}

type srvErrTool struct{ srvTestTool }

func (*srvErrTool) InputSchema() (*jsonschema.Schema, error) { return nil, fmt.Errorf("broken") }

type srvPanicTool struct{ srvTestTool }

func (*srvPanicTool) InputSchema() (*jsonschema.Schema, error) { panic("boom") }

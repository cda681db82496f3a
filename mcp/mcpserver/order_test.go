package mcpserver

import (
	"context"
	"slices"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// gatedConn is a connector that has no items and reports nothing until
// its gate is opened: then it has its tools and reports ready.
type gatedConn struct {
	onEvent func(toolkit.ConnectorEvent)
	tools   []toolkit.Tool
	gate    chan struct{}
}

func newGatedConn(tools ...toolkit.Tool) *gatedConn {
	return &gatedConn{tools: tools, gate: make(chan struct{})}
}

func (c *gatedConn) Run(ctx context.Context) error {
	select {
	case <-c.gate:
		c.onEvent(toolkit.StateChangeEvent(toolkit.ConnectorState{Status: toolkit.StatusReady}))
	case <-ctx.Done():
		return nil
	}
	<-ctx.Done()
	return nil
}
func (c *gatedConn) ListTools(context.Context) ([]toolkit.Tool, error) {
	select {
	case <-c.gate:
		return c.tools, nil
	default:
		return nil, nil
	}
}
func (c *gatedConn) ListPrompts(context.Context) ([]toolkit.Prompt, error) { return nil, nil }
func (c *gatedConn) ListResources(context.Context) ([]toolkit.Resource, error) {
	return nil, nil
}

// gatedDelegate creates the gated connectors registered by URL.
type gatedDelegate struct{ conns map[string]*gatedConn }

func (d *gatedDelegate) OnEvent(toolkit.ConnectorEvent) {}
func (d *gatedDelegate) Call(context.Context, toolkit.Prompt, ...toolkit.Resource) (toolkit.Resource, error) {
	return nil, toolkit.ErrNotImplemented
}
func (d *gatedDelegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	c, ok := d.conns[url]
	if !ok {
		return nil, toolkit.ErrNotImplemented
	}
	c.onEvent = onEvent
	return c, nil
}

// toolNames lists the tools a client sees.
func toolNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	var names []string
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// TestServerNamesFollowSourceOrder checks that when two upstreams share a
// tool name, the one registered first keeps the bare name whichever
// becomes ready first, and that the bare name reaches the tool the
// toolkit's own Lookup finds.
func TestServerNamesFollowSourceOrder(t *testing.T) {
	for _, tt := range []struct {
		name  string
		first string // the namespace that becomes ready first
	}{
		{"registration order", "one"},
		{"reverse order", "two"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			leakCheck(t)
			conns := map[string]*gatedConn{
				"fake://one": newGatedConn(namedTool("search", "one"), namedTool("only_one", "one")),
				"fake://two": newGatedConn(namedTool("search", "two"), namedTool("only_two", "two")),
			}
			tk, err := toolkit.New(toolkit.WithDelegate(&gatedDelegate{conns: conns}), toolkit.WithLogger(quietLogger()))
			mustNotErr(t, err)
			srv, err := New(tk, nil)
			mustNotErr(t, err)
			defer srv.Close()
			cs := (&fixture{tk: tk, srv: srv}).connect(t, nil)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- tk.Run(ctx) }()
			defer func() { cancel(); <-done }()
			mustNotErr(t, tk.AddConnectorNS("one", "fake://one"))
			mustNotErr(t, tk.AddConnectorNS("two", "fake://two"))

			second := map[string]string{"one": "two", "two": "one"}[tt.first]
			close(conns["fake://"+tt.first].gate)
			_, err = tk.WaitConnectors(ctx, tt.first)
			mustNotErr(t, err)
			tk.WaitEvents()
			// Alone, the first ready upstream's search is bare.
			if got, want := toolNames(t, cs), []string{"only_" + tt.first, "search"}; !slices.Equal(got, want) {
				t.Fatalf("with %s alone: tools %v, want %v", tt.first, got, want)
			}
			close(conns["fake://"+second].gate)
			_, err = tk.WaitConnectors(ctx)
			mustNotErr(t, err)
			tk.WaitEvents()

			want := []string{"only_one", "only_two", "search", "two_search"}
			if got := toolNames(t, cs); !slices.Equal(got, want) {
				t.Fatalf("tools %v, want %v", got, want)
			}
			item, err := tk.LookupType(ctx, toolkit.ListTypeTools, "search")
			mustNotErr(t, err)
			if name, _ := srv.ExposedName(toolkit.ListTypeTools, item.Key()); name != "search" {
				t.Errorf("Lookup(search) finds %s, exposed as %q", item.Key(), name)
			}
			for name, want := range map[string]string{"search": "one", "two_search": "two"} {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name})
				if err != nil || resultText(t, res) != want {
					t.Errorf("%s: %v %+v, want the tool of %s", name, err, res, want)
				}
			}
		})
	}
}

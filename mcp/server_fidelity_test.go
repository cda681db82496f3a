package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testserver"
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

	// Through the gateway: the upstream behind a connector in a toolkit,
	// the toolkit served by our server.
	events := make(chan toolkit.ConnectorEvent, 16)
	d := NewDelegate("gateway", "1", OptLogger(quietLogger()), OptDialer(m.Dial))
	d.Events = func(e toolkit.ConnectorEvent) {
		select {
		case events <- e:
		default:
		}
	}
	relay := ServerDelegate(d)
	tk, err := toolkit.New(toolkit.WithDelegate(relay))
	mustNotErr(t, err)
	srv, err := NewServer(tk, nil, WithEventRelay(relay))
	mustNotErr(t, err)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tk.Run(ctx) }()
	defer func() {
		cancel()
		mustNotErr(t, <-runDone)
	}()
	mustNotErr(t, tk.AddConnectorNS("up", "memory://up"))
	for e := range events {
		if e.Kind == toolkit.ConnectorEventToolListChanged {
			break
		}
	}
	tk.WaitEvents()
	f := &srvFixture{tk: tk, relay: relay, srv: srv}
	gw := f.connect(t, nil)

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

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

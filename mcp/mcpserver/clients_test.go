package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// observerFunc is a bridge.ClientObserver.
type observerFunc func(context.Context, bridge.Client)

func (f observerFunc) ClientStarted(ctx context.Context, c bridge.Client) { f(ctx, c) }

// TestClientSessions: with WithClientSessions the server tells its
// observer of each client session once initialized; the Client asks the
// client for its roots outside any call, is the one a call's session
// carries, passes on a flood of roots/list_changed without a goroutine
// each, and is done when the session ends, after which it asks nothing.
func TestClientSessions(t *testing.T) {
	leakCheck(t)
	started := make(chan bridge.Client, 1)
	carried := make(chan bridge.Client, 1)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(funcTool("who", func(ctx context.Context, _ json.RawMessage) (any, error) {
		cc, ok := toolkit.SessionAs[bridge.ClientCarrier](toolkit.SessionFromContext(ctx))
		if !ok {
			return nil, errors.New("the call's session carries no client")
		}
		carried <- cc.Client()
		return "ok", nil
	}))}, WithClientSessions(observerFunc(func(_ context.Context, c bridge.Client) { started <- c })))
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- f.srv.Run(ctx, st) }()
	client := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil)
	client.AddRoots(&sdk.Root{URI: "file:///r0"})
	cs, err := client.Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	c := <-started
	if caps := c.Capabilities(); caps == nil || caps.RootsV2 == nil {
		t.Fatalf("capabilities %+v: no roots", caps)
	}
	roots, err := c.ListRoots(ctx, nil)
	if err != nil || len(roots.Roots) != 1 || roots.Roots[0].URI != "file:///r0" {
		t.Fatalf("ListRoots outside any call: %+v, %v", roots, err)
	}
	if _, err := c.CreateMessage(ctx, &sdk.CreateMessageParams{}); !errors.Is(err, toolkit.ErrNotImplemented) {
		t.Errorf("sampling of a client without it: %v", err)
	}
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "who"}); err != nil {
		t.Fatal(err)
	}
	if got := <-carried; got != c {
		t.Errorf("the call's session carries %v, want the session's client %v", got, c)
	}

	calls := make(chan int, 2)
	release := make(chan struct{})
	n := 0
	stop := c.OnRootsChanged(func() {
		n++
		calls <- n
		if n == 1 {
			<-release
		}
	})
	client.AddRoots(&sdk.Root{URI: "file:///first"})
	<-calls // the first runs, and waits
	before := runtime.NumGoroutine()
	for i := range 500 {
		client.AddRoots(&sdk.Root{URI: fmt.Sprintf("file:///r%d", i+1)})
	}
	if err := cs.Ping(ctx, nil); err != nil { // the notifications were handled
		t.Fatal(err)
	}
	if grown := runtime.NumGoroutine() - before; grown > 20 {
		t.Errorf("500 notifications while the watcher ran made %d goroutines", grown)
	}
	close(release)
	if got := <-calls; got != 2 {
		t.Errorf("call %d after the flood, want the second", got)
	}
	stop()

	cs.Close()
	<-c.Done()
	if _, err := c.ListRoots(context.Background(), nil); !errors.Is(err, toolkit.ErrClosed) {
		t.Errorf("ListRoots after the session ended: %v", err)
	}
	cancel()
	<-served
}

// TestWithClientSessionsRefusesNil: a nil observer is a bad option.
func TestWithClientSessionsRefusesNil(t *testing.T) {
	tk, err := toolkit.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(tk, nil, WithClientSessions(nil)); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("WithClientSessions(nil): %v", err)
	}
}

package mcpserver

import (
	"context"
	"errors"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// TestClientElicitationComplete: a Client tells a client that offers URL
// elicitation that one completed, and refuses, with
// toolkit.ErrNotImplemented, one that does not; a client that did not
// authenticate has no principal.
func TestClientElicitationComplete(t *testing.T) {
	leakCheck(t)
	started := make(chan bridge.Client, 2)
	f := newFixture(t, nil, WithClientSessions(observerFunc(func(_ context.Context, c bridge.Client) { started <- c })))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	connect := func(opts *sdk.ClientOptions) (*sdk.ClientSession, bridge.Client) {
		ct, st := sdk.NewInMemoryTransports()
		served := make(chan error, 1)
		go func() { served <- f.srv.Run(ctx, st) }()
		t.Cleanup(func() { <-served })
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, opts).Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs, <-started
	}
	completed := make(chan string, 1)
	_, withURL := connect(&sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "cancel"}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
			completed <- req.Params.ElicitationID
		},
	})
	_, plain := connect(nil)
	if err := withURL.(bridge.ElicitationCompleter).ElicitationComplete(ctx, "e-1"); err != nil {
		t.Fatal(err)
	}
	if id := <-completed; id != "e-1" {
		t.Errorf("completed %q, want e-1", id)
	}
	if err := plain.(bridge.ElicitationCompleter).ElicitationComplete(ctx, "e-2"); !errors.Is(err, toolkit.ErrNotImplemented) {
		t.Errorf("a client without URL elicitation: %v", err)
	}
	if p := plain.(bridge.ClientPrincipal).Principal(); p != "" {
		t.Errorf("an anonymous client's principal: %q", p)
	}
}

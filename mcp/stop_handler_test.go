package mcp

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// TestStopEndsChildWhateverAHandlerWaitsFor: a stdio server asks for
// sampling and the connector's handler ignores its context; stopping the
// connector still ends the child after the terminate timeout, before the
// handler returns.
func TestStopEndsChildWhateverAHandlerWaitsFor(t *testing.T) {
	leakCheck(t)
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	r := start(t, stdioURL(t, testserver.StdioAsk), true, OptTimeouts(Timeouts{Terminate: 100 * time.Millisecond}), OptProtocolVersion(StatefulProtocolVersion),
		OptServerRequests(ServerRequests{Sampling: func(context.Context, *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
			entered <- struct{}{}
			<-release // deaf to its context
			return nil, toolkit.ErrNotImplemented
		}}))
	select {
	case <-entered:
	case <-time.After(waitLimit):
		close(release)
		t.Fatalf("the server's request never reached the handler (%s)", r.states.statuses())
	}
	r.states.wait(t, toolkit.StatusReady, 1)
	r.life.mu.Lock()
	exited := r.life.cur.exited()
	r.life.mu.Unlock()
	r.cancel()
	select {
	case <-exited:
	case <-time.After(waitLimit):
		t.Error("the server still runs while the handler waits")
	}
	close(release)
	mustNotErr(t, r.stop(t))
}

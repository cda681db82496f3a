package mcp

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// Stopping a connector whose calls are still running on a stateful HTTP
// server (streamable or SSE) cancels every one of them upstream (notifications/cancelled goes
// out before the session is deleted), and the server keeps no session:
// the DELETE is not held up by handlers that never learnt of the
// cancellation.
func TestStopCancelsCallsUpstream(t *testing.T) {
	for _, mode := range []testserver.Mode{testserver.Stateful, testserver.SSE} {
		t.Run(mode.String(), func(t *testing.T) { testStopCancelsCallsUpstream(t, mode) })
	}
}

func testStopCancelsCallsUpstream(t *testing.T, mode testserver.Mode) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	h := testserver.ServeHTTP(t, s.Server, mode)
	url := h.URL
	if mode == testserver.SSE {
		url = h.SSEURL
	}
	r := start(t, url, false, fastBackoff)
	const n = 3
	done := make(chan error, n)
	for i := range n {
		go func() {
			_, err := call(t, context.Background(), r.Connector, "block", fmt.Sprintf(`{"tag":"t%d"}`, i))
			done <- err
		}()
	}
	for range n {
		recvString(t, s.Started)
	}
	mustNotErr(t, r.stop(t))
	for range n {
		select {
		case err := <-done:
			if !errors.Is(err, toolkit.ErrUnavailable) && !errors.Is(err, toolkit.ErrClosed) {
				t.Errorf("call cut by the stop: %v", err)
			}
		case <-time.After(waitLimit):
			t.Fatal("a call outlived the stop")
		}
	}
	// Every handler was cancelled by the client, not by the test's
	// cleanup closing the server. Over streamable HTTP the DELETE that
	// closed the session returned after the handlers did; an SSE server
	// notices the end of its stream on its own time.
	for range n {
		if mode == testserver.SSE {
			recvString(t, s.Cancelled)
			continue
		}
		select {
		case <-s.Cancelled:
		default:
			t.Fatal("a handler was still running upstream when Run returned")
		}
	}
	if mode == testserver.SSE {
		return
	}
	sessions := 0
	for range s.Server.Sessions() {
		sessions++
	}
	if sessions != 0 {
		t.Errorf("%d sessions left on the server", sessions)
	}
}

package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

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
	// The cancellations the server had been sent when the DELETE that
	// closes the session came (streamable HTTP).
	var cancels, atDelete atomic.Int64
	atDelete.Store(-1)
	h.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
		switch r.Method {
		case http.MethodPost:
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
				cancels.Add(1)
			}
		case http.MethodDelete:
			atDelete.CompareAndSwap(-1, cancels.Load())
		}
		return false
	})
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
	var sessions []*sdk.ServerSession
	for ss := range s.Server.Sessions() {
		sessions = append(sessions, ss)
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
	// Every handler is cancelled by the client, not by the test's
	// cleanup closing the server: over streamable HTTP every cancellation
	// was sent before the DELETE that closed the session. (The go-sdk
	// server may still take the DELETE before it has read them, and then
	// waits for the handlers; they end with their cancellations.)
	if mode != testserver.SSE {
		if got := atDelete.Load(); got != n {
			t.Errorf("%d cancellations sent before the session's DELETE, want %d", got, n)
		}
	}
	for range n {
		recvString(t, s.Cancelled)
	}
	// The server keeps no session.
	for _, ss := range sessions {
		ended := make(chan struct{})
		go func() { ss.Wait(); close(ended) }()
		select {
		case <-ended:
		case <-time.After(waitLimit):
			t.Fatal("the server kept the session")
		}
	}
}

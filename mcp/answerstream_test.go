package mcp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// heldStreamServer serves a test server over streamable HTTP; while hold
// is set, the answer stream of a call stays open after its answer until
// release is closed. It counts the connections clients open.
type heldStreamServer struct {
	*httptest.Server
	hold    atomic.Bool
	release chan struct{}
	once    sync.Once
	conns   atomic.Int32
}

// let ends the held streams.
func (hs *heldStreamServer) let() { hs.once.Do(func() { close(hs.release) }) }

func newHeldStreamServer(t *testing.T) *heldStreamServer {
	t.Helper()
	s := newServer(t, testserver.Options{})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.Server }, nil)
	hs := &heldStreamServer{release: make(chan struct{})}
	hs.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held := r.Method == http.MethodPost && hs.hold.Load() && r.Header.Get("Mcp-Session-Id") != ""
		h.ServeHTTP(w, r)
		if held {
			// The answer is written and flushed; the stream ends when
			// the handler returns.
			<-hs.release
		}
	}))
	hs.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			hs.conns.Add(1)
		}
	}
	hs.Start()
	t.Cleanup(func() {
		hs.let()
		hs.Close()
	})
	return hs
}

// callRequests records the HTTP requests of the connector's calls, as
// they are sent.
type callRequests struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (c *callRequests) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && inflightFrom(req.Context()) != nil {
		c.mu.Lock()
		c.reqs = append(c.reqs, req)
		c.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(req)
}

func (c *callRequests) last(t *testing.T) *http.Request {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.reqs) == 0 {
		t.Fatal("no call was sent")
	}
	return c.reqs[len(c.reqs)-1]
}

// waitDone waits for the end of ctx and returns its cause.
func waitDone(t *testing.T, ctx context.Context, what string) error {
	t.Helper()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(waitLimit):
		t.Fatalf("%s never ended", what)
		return nil
	}
}

// The answer stream of a call over streamable HTTP outlives the call's
// context, which ends as the call returns (the caller's, and the
// connector's own), and ends by itself: the connection goes back to the
// pool and the next call takes it, instead of net/http closing it under
// the stream's last read and the next call opening another.
func TestAnsweredStreamOutlivesCall(t *testing.T) {
	hs := newHeldStreamServer(t)
	reqs := &callRequests{}
	r := start(t, hs.URL, false, OptHTTPClient(&http.Client{Transport: reqs}))
	echo := findTool(t, r.Connector, "echo")

	hs.hold.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := echo.Run(ctx, []byte(`{"text":"x"}`))
	mustNotErr(t, err)
	cancel() // as a caller with a context per call does
	req := reqs.last(t)
	if err := req.Context().Err(); err != nil {
		t.Fatalf("the stream of the answered call was cut as the call returned: %v", context.Cause(req.Context()))
	}

	conns := hs.conns.Load()
	hs.hold.Store(false)
	hs.let()
	if cause := waitDone(t, req.Context(), "the answer stream"); cause != context.Canceled {
		t.Fatalf("the answer stream ended with %v, want its own end", cause)
	}
	_, err = echo.Run(context.Background(), []byte(`{"text":"y"}`))
	mustNotErr(t, err)
	if n := hs.conns.Load() - conns; n != 0 {
		t.Errorf("the next call opened %d connection(s); want the answered call's again", n)
	}
}

// A server that keeps the stream of an answered call open holds its
// connection for a bounded time only.
func TestAnsweredStreamBounded(t *testing.T) {
	hs := newHeldStreamServer(t)
	reqs := &callRequests{}
	r := start(t, hs.URL, false, OptHTTPClient(&http.Client{Transport: reqs}),
		func(o *options) error { o.hooks.answeredWait = time.Millisecond; return nil })
	echo := findTool(t, r.Connector, "echo")

	hs.hold.Store(true)
	_, err := echo.Run(context.Background(), []byte(`{"text":"x"}`))
	mustNotErr(t, err)
	if cause := waitDone(t, reqs.last(t).Context(), "the held stream"); !errors.Is(cause, errAnsweredStreamOpen) {
		t.Fatalf("the held stream ended with %v, want %v", cause, errAnsweredStreamOpen)
	}
}

// A call given up while it waits for its answer still cuts its stream.
func TestUnansweredStreamCut(t *testing.T) {
	s := newServer(t, testserver.Options{})
	h := testserver.ServeHTTP(t, s.Server, testserver.Stateful)
	reqs := &callRequests{}
	r := start(t, h.URL, false, OptHTTPClient(&http.Client{Transport: reqs}))
	block := findTool(t, r.Connector, "block")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := block.Run(ctx, []byte(`{"tag":"a"}`))
		done <- err
	}()
	recvString(t, s.Started)
	req := reqs.last(t)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled call returned %v", err)
	}
	if cause := waitDone(t, req.Context(), "the stream of the cancelled call"); cause != context.Canceled {
		t.Fatalf("the stream of the cancelled call ended with %v", cause)
	}
	recvString(t, s.Cancelled)
}

package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// blocker is a tool that reports each start and runs until its context
// ends or the test releases it.
type blocker struct {
	started  chan struct{}
	canceled chan error // the cause of each cancellation
	release  chan struct{}
	running  atomic.Int32
	peak     atomic.Int32
}

func newBlocker(t *testing.T) *blocker {
	b := &blocker{started: make(chan struct{}, 100), canceled: make(chan error, 100), release: make(chan struct{})}
	t.Cleanup(b.free)
	return b
}

func (b *blocker) free() {
	select {
	case <-b.release:
	default:
		close(b.release)
	}
}

func (b *blocker) option() toolkit.Option {
	return toolkit.WithTool(funcTool("block", func(ctx context.Context, _ json.RawMessage) (any, error) {
		n := b.running.Add(1)
		defer b.running.Add(-1)
		for {
			p := b.peak.Load()
			if n <= p || b.peak.CompareAndSwap(p, n) {
				break
			}
		}
		b.started <- struct{}{}
		select {
		case <-ctx.Done():
			b.canceled <- context.Cause(ctx)
			return nil, ctx.Err()
		case <-b.release:
			return "released", nil
		}
	}))
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// rawPost sends a JSON-RPC body on the session as the client cs would.
func rawPost(ctx context.Context, url, session, version, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", version)
	return http.DefaultClient.Do(req)
}

func TestDeleteCancelsSessionCalls(t *testing.T) {
	leakCheck(t)
	b := newBlocker(t)
	defer b.free() // before the server's cleanup, which waits for calls
	f := newFixture(t, []toolkit.Option{b.option()})
	ts := f.serveHTTP(t)
	cs, err := connectHTTP(t, ts.URL, nil, nil)
	mustNotErr(t, err)
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "block"})
		called <- err
	}()
	recv(t, b.started, "the tool to start")

	deleted := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodDelete, ts.URL, nil)
		req.Header.Set("Mcp-Session-Id", cs.ID())
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			deleted <- 0
			return
		}
		res.Body.Close()
		deleted <- res.StatusCode
	}()
	if cause := recv(t, b.canceled, "the tool's context to end"); !errors.Is(cause, errSessionEnded) {
		t.Errorf("cancellation cause = %v, want %v", cause, errSessionEnded)
	}
	if code := recv(t, deleted, "DELETE to return"); code != http.StatusNoContent {
		t.Errorf("DELETE: status %d", code)
	}
	recv(t, called, "the call to end")
}

func TestHangUpCancelsCall(t *testing.T) {
	leakCheck(t)
	b := newBlocker(t)
	defer b.free() // before the server's cleanup, which waits for calls
	f := newFixture(t, []toolkit.Option{b.option()})
	ts := f.serveHTTP(t)
	cs, err := connectHTTP(t, ts.URL, nil, nil)
	mustNotErr(t, err)

	ctx, hangUp := context.WithCancel(context.Background())
	defer hangUp()
	posted := make(chan error, 1)
	go func() {
		res, err := rawPost(ctx, ts.URL, cs.ID(), "2025-11-25", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block"}}`)
		if err == nil {
			_, err = bufio.NewReader(res.Body).ReadString('\n') // blocks until hang-up
			res.Body.Close()
		}
		posted <- err
	}()
	recv(t, b.started, "the tool to start")
	hangUp()
	if cause := recv(t, b.canceled, "the tool's context to end"); !errors.Is(cause, errClientGone) {
		t.Errorf("cancellation cause = %v, want %v", cause, errClientGone)
	}
	recv(t, posted, "the POST to end")

	// The session goes on: a call on it still works.
	b.free()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "block"})
	if err != nil || resultText(t, res) != "released" {
		t.Fatalf("call after hang-up: %v %+v", err, res)
	}
}

func TestSessionCallLimit(t *testing.T) {
	leakCheck(t)
	b := newBlocker(t)
	defer b.free() // before the server's cleanup, which waits for calls
	f := newFixture(t, []toolkit.Option{b.option()}, WithMaxSessionCalls(2))
	cs := f.connect(t, nil)
	other := f.connect(t, nil)
	ctx := context.Background()
	done := make(chan error, 3)
	for range 2 {
		go func() {
			_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "block"})
			done <- err
		}()
		recv(t, b.started, "a call to start")
	}
	tctx, cancel := context.WithTimeout(ctx, waitLimit)
	defer cancel()
	_, err := cs.CallTool(tctx, &sdk.CallToolParams{Name: "block"})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != CodeTooManyCalls {
		t.Fatalf("third call: %v, want a JSON-RPC error with code %d", err, CodeTooManyCalls)
	}
	// The limit is per session.
	go func() {
		_, err := other.CallTool(ctx, &sdk.CallToolParams{Name: "block"})
		done <- err
	}()
	recv(t, b.started, "the other session's call to start")
	b.free()
	for range 3 {
		if err := recv(t, done, "a call to end"); err != nil {
			t.Error(err)
		}
	}
	// Answered calls free their places.
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "block"}); err != nil {
		t.Fatal(err)
	}
}

func TestSessionCallLimitBatch(t *testing.T) {
	leakCheck(t)
	const limit, calls = 4, 40
	b := newBlocker(t)
	defer b.free() // before the server's cleanup, which waits for calls
	f := newFixture(t, []toolkit.Option{b.option()}, WithMaxSessionCalls(limit))
	ts := f.serveHTTP(t)
	c := sdk.NewClient(&sdk.Implementation{Name: "old-client", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-03-26"})
	mustNotErr(t, err)
	t.Cleanup(func() { cs.Close() })

	var batch []string
	for i := range calls {
		batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"block"}}`, i+1))
	}
	res, err := rawPost(context.Background(), ts.URL, cs.ID(), "2025-03-26", "["+strings.Join(batch, ",")+"]")
	mustNotErr(t, err)
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	type response struct {
		ID    int            `json:"id"`
		Error *jsonrpc.Error `json:"error"`
	}
	next := func() *response {
		t.Helper()
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var r response
			mustNotErr(t, json.Unmarshal([]byte(data), &r))
			return &r
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return nil
	}
	// The calls beyond the limit are refused at once, while the others run.
	for range calls - limit {
		if r := next(); r.Error == nil || r.Error.Code != CodeTooManyCalls {
			t.Fatalf("refused call: %+v", r)
		}
	}
	for range limit {
		recv(t, b.started, "a call to start")
	}
	b.free()
	for range limit {
		if r := next(); r.Error != nil {
			t.Errorf("call: %v", r.Error)
		}
	}
	if p := b.peak.Load(); p != limit {
		t.Errorf("%d calls ran at once, want %d", p, limit)
	}
}

func TestDefaultSessionTimeout(t *testing.T) {
	leakCheck(t)
	old := defaultSessionTimeout
	defaultSessionTimeout = 50 * time.Millisecond
	t.Cleanup(func() { defaultSessionTimeout = old })
	f := newFixture(t, nil)
	ts := f.serveHTTP(t)
	cs, err := connectHTTP(t, ts.URL, nil, nil)
	mustNotErr(t, err)
	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()
	recv(t, ended, "the idle session to be closed")
	res, err := rawPost(context.Background(), ts.URL, cs.ID(), "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	mustNotErr(t, err)
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("request on the closed session: status %d, want 404", res.StatusCode)
	}
}

func TestMaxSessionCallsOption(t *testing.T) {
	tk, err := toolkit.New()
	mustNotErr(t, err)
	if _, err := New(tk, nil, WithMaxSessionCalls(-1)); !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "WithMaxSessionCalls") {
		t.Errorf("WithMaxSessionCalls(-1): %v", err)
	}
	if effectiveTimeout(-1) != 0 || effectiveTimeout(time.Second) != time.Second || effectiveTimeout(0) != DefaultSessionTimeout {
		t.Error("effectiveTimeout")
	}
}

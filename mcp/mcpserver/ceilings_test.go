package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// initialize opens a session with a raw initialize request and returns
// the response, its body read and closed.
func initialize(t *testing.T, url string, header http.Header) *http.Response {
	t.Helper()
	return initializeWith(t, http.DefaultClient, url, header)
}

// initializeWith is initialize sent with hc.
func initializeWith(t *testing.T, hc *http.Client, url string, header http.Header) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initializeBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// serialClient returns a client with one connection: the server reads
// each of its requests once it is done with the one before.
func serialClient(t *testing.T) *http.Client {
	tr := &http.Transport{MaxConnsPerHost: 1}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// deleteSession ends a session and returns the status of the answer.
func deleteSession(t *testing.T, url, id string, header http.Header) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", id)
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// serveListener serves srv with ServeListener until the test ends and
// returns the base URL.
func serveListener(t *testing.T, srv *Server, opts ...HTTPOption) string {
	t.Helper()
	ln, err := listenLoopback(t)
	mustNotErr(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, ln, opts...) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeListener: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// waitClosed reads conn until the server closes it and returns what it
// read; it fails the test when the connection is still open after
// waitLimit.
func waitClosed(t *testing.T, conn net.Conn) string {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(waitLimit))
	data, err := io.ReadAll(conn)
	if errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) {
		err = nil
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server left the connection open for %v", waitLimit)
	}
	return string(data)
}

func TestIdleConnectionClosed(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, nil, WithHTTP(WithIdleTimeout(50*time.Millisecond)))
	base := serveListener(t, f.srv)

	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	mustNotErr(t, err)
	defer conn.Close()
	// One request, answered, on a keep-alive connection. The server's
	// idle time begins after its answer, so after the request was sent:
	// the client's own reading of the answer may take part of it.
	sent := time.Now()
	fmt.Fprintf(conn, "GET /elsewhere HTTP/1.1\r\nHost: %s\r\n\r\n", strings.TrimPrefix(base, "http://"))
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	mustNotErr(t, err)
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.Close {
		t.Fatal("the server did not keep the connection alive")
	}
	// Then nothing: the server closes the connection.
	conn.SetReadDeadline(time.Now().Add(waitLimit))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("idle connection: read = %v, want EOF (closed by the server)", err)
	}
	if idle := time.Since(sent); idle < 50*time.Millisecond {
		t.Errorf("closed after %v idle, before the idle timeout", idle)
	}
}

func TestSlowBodyEndedStreamsKept(t *testing.T) {
	leakCheck(t)
	const timeout = 100 * time.Millisecond
	b := newBlocker(t)
	defer b.free() // before the server's cleanup, which waits for calls
	f := newFixture(t, []toolkit.Option{b.option()}, WithHTTP(WithReadTimeout(timeout)))
	base := serveListener(t, f.srv)
	url := base + "/mcp"

	// A session with its standalone event stream (GET) open.
	res := initialize(t, url, nil)
	id := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d, session %q", res.StatusCode, id)
	}
	note, err := rawPost(context.Background(), url, id, "2025-11-25", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	mustNotErr(t, err)
	note.Body.Close()
	getCtx, endGet := context.WithCancel(context.Background())
	defer endGet()
	get, _ := http.NewRequestWithContext(getCtx, http.MethodGet, url, nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", id)
	get.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	stream, err := http.DefaultClient.Do(get)
	mustNotErr(t, err)
	defer stream.Body.Close()
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("GET: status %d", stream.StatusCode)
	}
	streamOpened := time.Now()
	events := make(chan string, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
			events <- sc.Text()
		}
	}()

	// A call whose POST response lasts longer than the read timeout.
	cs, err := connectHTTP(t, url, nil, nil)
	mustNotErr(t, err)
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "block"})
		called <- err
	}()
	recv(t, b.started, "the tool to start")

	// A POST that declares 4 MB and sends 10 bytes is ended.
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	mustNotErr(t, err)
	defer conn.Close()
	sent := time.Now()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n{\"jsonrpc\"",
		strings.TrimPrefix(base, "http://"), 4<<20)
	answer := waitClosed(t, conn)
	if took := time.Since(sent); took < timeout {
		t.Errorf("slow body ended after %v, before the read timeout", took)
	}
	if !strings.HasPrefix(answer, "HTTP/1.1 400") {
		t.Errorf("slow body: answer %q, want 400", answer)
	}

	// The call's response, running all along, still ends normally.
	b.free()
	if err := recv(t, called, "the call to end"); err != nil {
		t.Errorf("call across the read timeout: %v", err)
	}
	select {
	case cause := <-b.canceled:
		t.Errorf("the call was cancelled: %v", cause)
	default:
	}

	// The event stream, open longer than the read timeout, still delivers.
	mustNotErr(t, f.tk.AddTool(funcTool("late", func(context.Context, json.RawMessage) (any, error) { return nil, nil })))
	for line := range events {
		if strings.Contains(line, "notifications/tools/list_changed") {
			if open := time.Since(streamOpened); open < timeout {
				t.Errorf("stream open %v, not longer than the read timeout", open)
			}
			return
		}
	}
	t.Fatal("the event stream ended")
}

// tokens is a verifier whose tokens are "user-n": principal user.
func tokens(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	user, _, ok := strings.Cut(token, "-")
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: user, Expiration: time.Now().Add(time.Hour)}, nil
}

func bearer(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }

func TestMaxSessions(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(funcTool("hello", func(context.Context, json.RawMessage) (any, error) { return "hi", nil }))})
	ts := f.serveHTTP(t, WithMaxSessions(2))

	cs1, err := connectHTTP(t, ts.URL, nil, nil)
	mustNotErr(t, err)
	cs2, err := connectHTTP(t, ts.URL, nil, nil)
	mustNotErr(t, err)

	res := initialize(t, ts.URL, nil)
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != strconv.Itoa(SessionRetryAfter) {
		t.Fatalf("third initialize: %d, Retry-After %q; want 503 and %d", res.StatusCode, res.Header.Get("Retry-After"), SessionRetryAfter)
	}
	if _, err := connectHTTP(t, ts.URL, nil, nil); err == nil {
		t.Error("a client connected beyond the ceiling")
	}
	// The sessions open are served as usual.
	if res, err := cs2.CallTool(context.Background(), &sdk.CallToolParams{Name: "hello"}); err != nil || resultText(t, res) != "hi" {
		t.Errorf("call of an open session at the ceiling: %v", err)
	}
	// Ending a session (DELETE) frees its slot before it is answered.
	mustNotErr(t, cs1.Close())
	cs3, err := connectHTTP(t, ts.URL, nil, nil)
	if err != nil {
		t.Fatalf("after a DELETE: %v", err)
	}
	if res := initialize(t, ts.URL, nil); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("full again: %d, want 503", res.StatusCode)
	}
	// A request that opens no session (no initialize) gives its slot back
	// once it is served (the next request on its connection is read after
	// that).
	mustNotErr(t, cs3.Close())
	hc := serialClient(t)
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err = hc.Do(req)
	mustNotErr(t, err)
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res := initializeWith(t, hc, ts.URL, nil); res.StatusCode != http.StatusOK {
		t.Errorf("after a request that opened no session: %d, want 200", res.StatusCode)
	} else {
		deleteSession(t, ts.URL, res.Header.Get("Mcp-Session-Id"), nil)
	}
}

func TestMaxSessionsExpiry(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, nil)
	ts := f.serveHTTP(t, WithMaxSessions(1), WithSessionTimeout(20*time.Millisecond))
	if res := initialize(t, ts.URL, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %d", res.StatusCode)
	}
	// The abandoned session expires, and with it its slot.
	for ss := range f.srv.SDK().Sessions() {
		ss.Wait()
	}
	if res := initialize(t, ts.URL, nil); res.StatusCode != http.StatusOK {
		t.Fatalf("the slot of an expired session was not freed: %d", res.StatusCode)
	}
}

func TestMaxSessionsPerPrincipal(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, nil)
	ts := f.serveHTTP(t, WithBearerAuth(tokens, nil), WithMaxSessions(10), WithMaxSessionsPerPrincipal(2))

	var alice []string
	for _, tok := range []string{"alice-1", "alice-2"} {
		res := initialize(t, ts.URL, bearer(tok))
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", tok, res.StatusCode)
		}
		alice = append(alice, res.Header.Get("Mcp-Session-Id"))
	}
	res := initialize(t, ts.URL, bearer("alice-3"))
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
		t.Fatalf("alice's third session: %d, Retry-After %q; want 503", res.StatusCode, res.Header.Get("Retry-After"))
	}
	// Another principal is not held back by alice.
	bob := initialize(t, ts.URL, bearer("bob-1"))
	if bob.StatusCode != http.StatusOK {
		t.Fatalf("bob: %d", bob.StatusCode)
	}
	// Bob cannot end alice's session, nor so free her slot.
	if code := deleteSession(t, ts.URL, alice[0], bearer("bob-1")); code != http.StatusForbidden {
		t.Errorf("bob deleting alice's session: %d, want 403", code)
	}
	if res := initialize(t, ts.URL, bearer("alice-3")); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("alice after bob's DELETE: %d, want 503", res.StatusCode)
	}
	if code := deleteSession(t, ts.URL, alice[0], bearer("alice-1")); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d", code)
	}
	res = initialize(t, ts.URL, bearer("alice-3"))
	if res.StatusCode != http.StatusOK {
		t.Errorf("alice after her DELETE: %d, want 200", res.StatusCode)
	}
	for _, s := range []struct{ id, tok string }{{alice[1], "alice-2"}, {res.Header.Get("Mcp-Session-Id"), "alice-3"}, {bob.Header.Get("Mcp-Session-Id"), "bob-1"}} {
		deleteSession(t, ts.URL, s.id, bearer(s.tok))
	}
}

func TestMaxSessionsSSE(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, nil)
	sse, err := f.srv.SSEHandler(WithMaxSessions(1))
	mustNotErr(t, err)
	ts := httptest.NewServer(sse)
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	get := func(ctx context.Context) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL, nil)
		req.Header.Set("Accept", "text/event-stream")
		res, err := http.DefaultClient.Do(req)
		mustNotErr(t, err)
		return res
	}
	first := get(ctx)
	defer first.Body.Close()
	if first.StatusCode != http.StatusOK {
		t.Fatalf("first SSE session: %d", first.StatusCode)
	}
	second := get(context.Background())
	second.Body.Close()
	if second.StatusCode != http.StatusServiceUnavailable || second.Header.Get("Retry-After") == "" {
		t.Errorf("second SSE session: %d, Retry-After %q; want 503", second.StatusCode, second.Header.Get("Retry-After"))
	}
}

func TestStatelessNotCapped(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, nil)
	ts := f.serveHTTP(t, WithStateless(), WithMaxSessions(1))
	for range 3 {
		if res := initialize(t, ts.URL, nil); res.StatusCode != http.StatusOK {
			t.Fatalf("stateless initialize: %d", res.StatusCode)
		}
	}
}

func TestCeilingOptionsChecked(t *testing.T) {
	leakCheck(t)
	tk, err := toolkit.New()
	mustNotErr(t, err)
	for _, tc := range []struct {
		name string
		opt  HTTPOption
	}{
		{"WithIdleTimeout", WithIdleTimeout(0)},
		{"WithIdleTimeout", WithIdleTimeout(-time.Second)},
		{"WithIdleTimeout", WithIdleTimeout(120)}, // nanoseconds: a unit forgotten
		{"WithIdleTimeout", WithIdleTimeout(25 * time.Hour)},
		{"WithReadTimeout", WithReadTimeout(0)},
		{"WithReadTimeout", WithReadTimeout(-time.Second)},
		{"WithReadTimeout", WithReadTimeout(25 * time.Hour)},
		{"WithMaxSessions", WithMaxSessions(0)},
		{"WithMaxSessions", WithMaxSessions(-5)},
		{"WithMaxSessions", WithMaxSessions(99999999999)},
		{"WithMaxSessionsPerPrincipal", WithMaxSessionsPerPrincipal(0)},
		{"WithMaxSessionsPerPrincipal", WithMaxSessionsPerPrincipal(1 << 30)},
	} {
		check := func(where string, err error) {
			t.Helper()
			if !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), tc.name+"(") {
				t.Errorf("%s, %s: err = %v, want ErrBadParameter naming the option", where, tc.name, err)
			}
		}
		_, err := New(tk, nil, WithHTTP(tc.opt))
		check("New", err)

		srv, err := New(tk, nil)
		mustNotErr(t, err)
		ln, err := listenLoopback(t)
		mustNotErr(t, err)
		check("ServeListener", srv.ServeListener(context.Background(), ln, tc.opt))
		_, err = srv.Handler(tc.opt)
		check("Handler", err)
		_, err = srv.SSEHandler(tc.opt)
		check("SSEHandler", err)
		h, err := srv.Handler()
		mustNotErr(t, err)
		ln, err = listenLoopback(t)
		mustNotErr(t, err)
		check("ServeHTTP", ServeHTTP(context.Background(), ln, h, tc.opt))
		srv.Close()
	}
	// In range, at the bounds.
	for _, opt := range []HTTPOption{WithIdleTimeout(time.Millisecond), WithIdleTimeout(24 * time.Hour), WithReadTimeout(time.Millisecond),
		WithMaxSessions(1), WithMaxSessions(1 << 20), WithMaxSessionsPerPrincipal(1)} {
		srv, err := New(tk, nil, WithHTTP(opt))
		if err != nil {
			t.Errorf("in range: %v", err)
			continue
		}
		srv.Close()
	}
}

// TestSlotFreedWhenAnswerStarts: the slot of a request that opened no
// session (the go-sdk client's server/discover before its initialize) is
// free once its answer starts, not only once its handler returns, so a
// client that sends initialize as soon as it has the answer is not refused
// at a ceiling of one.
func TestSlotFreedWhenAnswerStarts(t *testing.T) {
	g := newSessionGate(ceilingConfig{maxSessions: 1}, slog.New(slog.DiscardHandler), nil,
		func() iter.Seq[*sdk.ServerSession] { return func(func(*sdk.ServerSession) bool) {} })
	answered, release := make(chan struct{}), make(chan struct{})
	h := g.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		close(answered)
		<-release // the handler has not returned yet
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{}`)))
	}()
	<-answered
	sl, _ := g.take(httptest.NewRequest(http.MethodPost, "/", nil))
	close(release)
	<-done
	if sl == nil {
		t.Fatal("the slot of an answered request that opened no session is still taken")
	}
	sl.release()
}

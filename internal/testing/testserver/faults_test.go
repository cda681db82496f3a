package testserver

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const waitLimit = 20 * time.Second

// Expire makes later requests of the current session fail with
// ErrSessionMissing, while new sessions work.
func TestHTTPExpire(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	h := ServeHTTP(t, s.Server, Stateful)
	cs := connect(t, &sdk.StreamableClientTransport{Endpoint: h.URL})
	defer cs.Close()
	// The client's handshake may leave a second, short-lived server session
	// (its protocol probe) that is not yet gone: at least the live one is
	// forgotten, which the request below proves.
	if n := h.Expire(); n < 1 {
		t.Fatalf("%d sessions forgotten, want at least 1", n)
	}
	if _, err := cs.ListTools(context.Background(), nil); !errors.Is(err, sdk.ErrSessionMissing) {
		t.Errorf("request of a forgotten session: %v, want ErrSessionMissing", err)
	}
	if h.Expired.Load() == 0 {
		t.Error("no 404 counted")
	}
	fresh := connect(t, &sdk.StreamableClientTransport{Endpoint: h.URL})
	defer fresh.Close()
	if echo(t, fresh) != "hi" {
		t.Error("a new session does not work")
	}
}

// Intercept sees every request and may answer it.
func TestHTTPIntercept(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	h := ServeHTTP(t, s.Server, Stateless)
	var seen atomic.Int64
	h.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		seen.Add(1)
		if r.Header.Get("X-Refuse") != "" {
			http.Error(w, "refused", http.StatusTeapot)
			return true
		}
		return false
	})
	cs := connect(t, &sdk.StreamableClientTransport{Endpoint: h.URL})
	if echo(t, cs) != "hi" || seen.Load() == 0 {
		t.Errorf("echo through an interceptor that lets requests pass: %d seen", seen.Load())
	}
	cs.Close()
	req, _ := http.NewRequest(http.MethodPost, h.URL, nil)
	req.Header.Set("X-Refuse", "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot {
		t.Errorf("intercepted request answered %d", resp.StatusCode)
	}
	h.Intercept(nil)
}

// Memory.Kill does not wait for the handlers still running: it cuts the
// connection, which cancels them.
func TestMemoryKillMidCall(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	m := NewMemory(s.Server)
	defer m.Close()
	tr, _ := m.Dial(context.Background())
	cs := connect(t, tr)
	defer cs.Close()
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "block", Arguments: map[string]any{"tag": "k"}})
		done <- err
	}()
	select {
	case <-s.Started:
	case <-time.After(waitLimit):
		t.Fatal("the call never started")
	}
	killed := make(chan struct{})
	go func() { m.Kill(); close(killed) }()
	select {
	case <-killed:
	case <-time.After(waitLimit):
		t.Fatal("Kill waits for the running handler")
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("the call succeeded on a killed server")
		}
	case <-time.After(waitLimit):
		t.Fatal("the call hangs after Kill")
	}
	select {
	case tag := <-s.Cancelled:
		if tag != "k" {
			t.Errorf("cancelled %q", tag)
		}
	case <-time.After(waitLimit):
		t.Fatal("the handler was not cancelled")
	}
}

// Raw.Ended reports connections the client closed.
func TestRawEnded(t *testing.T) {
	r := &Raw{Handle: func(RawRequest) [][]byte { return nil }, Ended: make(chan struct{}, 1)}
	defer r.Close()
	tr, _ := r.Dial(context.Background())
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	select {
	case <-r.Ended:
	case <-time.After(waitLimit):
		t.Fatal("no Ended after the client closed the connection")
	}
}

package testserver

import (
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Mode selects the HTTP transport of an HTTP test server.
type Mode int

const (
	// Stateful is streamable HTTP with sessions.
	Stateful Mode = iota
	// Stateless is streamable HTTP without sessions.
	Stateless
	// SSE is the legacy HTTP+SSE transport.
	SSE
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case Stateful:
		return "stateful"
	case Stateless:
		return "stateless"
	case SSE:
		return "sse"
	}
	return "unknown"
}

// HTTP is a loopback HTTP server serving an MCP server at /mcp (and, in
// SSE mode, also at /sse). It can be killed and started again on the same
// address, with fresh sessions.
type HTTP struct {
	// URL is the MCP endpoint, http://127.0.0.1:PORT/mcp.
	URL string
	// SSEURL is http://127.0.0.1:PORT/sse.
	SSEURL string

	server *sdk.Server
	mode   Mode
	addr   string

	// Requests counts the HTTP requests served.
	Requests atomic.Int64
	// Expired counts the requests answered 404 Not Found because they
	// named a session forgotten by Expire.
	Expired atomic.Int64

	mu   sync.Mutex
	srv  *http.Server
	done chan struct{}

	hookMu    sync.Mutex
	intercept func(w http.ResponseWriter, r *http.Request) bool
	forgotten map[string]bool
}

// ServeHTTP starts serving s in the given mode; the server is killed when
// the test ends.
func ServeHTTP(t testing.TB, s *sdk.Server, mode Mode) *HTTP {
	t.Helper()
	h := &HTTP{server: s, mode: mode, addr: "127.0.0.1:0"}
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	h.URL = "http://" + h.addr + "/mcp"
	h.SSEURL = "http://" + h.addr + "/sse"
	t.Cleanup(h.Kill)
	return h
}

func (h *HTTP) handler() http.Handler {
	getServer := func(*http.Request) *sdk.Server { return h.server }
	var mcpH http.Handler
	switch h.mode {
	case SSE:
		mcpH = sdk.NewSSEHandler(getServer, nil)
	default:
		mcpH = sdk.NewStreamableHTTPHandler(getServer, &sdk.StreamableHTTPOptions{Stateless: h.mode == Stateless})
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpH)
	if h.mode == SSE {
		mux.Handle("/sse", mcpH)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.Requests.Add(1)
		h.hookMu.Lock()
		intercept := h.intercept
		id := r.Header.Get(sessionIDHeader)
		forgotten := id != "" && h.forgotten[id]
		h.hookMu.Unlock()
		if intercept != nil && intercept(w, r) {
			return
		}
		if forgotten {
			h.Expired.Add(1)
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// sessionIDHeader is the header of streamable HTTP that names the session.
const sessionIDHeader = "Mcp-Session-Id"

// Intercept sets a function that sees every request before the MCP
// handler, for tests that record requests or answer some of them
// themselves: when f returns true it has answered the request and the MCP
// handler does not see it. nil removes it. It may be called while the
// server runs.
func (h *HTTP) Intercept(f func(w http.ResponseWriter, r *http.Request) bool) {
	h.hookMu.Lock()
	h.intercept = f
	h.hookMu.Unlock()
}

// Expire makes a stateful server forget the sessions it has now, like a
// server whose sessions timed out while it kept running: from now on every
// request naming one of them is answered 404 Not Found (which the SDK's
// client reports as sdk.ErrSessionMissing) and counted in Expired. The
// streams already open for them are left alone, so a client learns of the
// expiry from its next request rather than from a broken stream. New
// sessions work. It returns how many sessions were forgotten.
func (h *HTTP) Expire() int {
	var ids []string
	for s := range h.server.Sessions() {
		if id := s.ID(); id != "" {
			ids = append(ids, id)
		}
	}
	h.hookMu.Lock()
	defer h.hookMu.Unlock()
	if h.forgotten == nil {
		h.forgotten = map[string]bool{}
	}
	for _, id := range ids {
		h.forgotten[id] = true
	}
	return len(ids)
}

// Start listens on the server's address (a free port the first time) with
// a fresh handler: sessions of an earlier run are gone.
func (h *HTTP) Start() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.srv != nil {
		return errors.New("testserver: already started")
	}
	ln, err := net.Listen("tcp", h.addr)
	if err != nil {
		return err
	}
	h.addr = ln.Addr().String()
	srv := &http.Server{Handler: h.handler()}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	h.srv, h.done = srv, done
	return nil
}

// Kill closes the listener and every connection at once, like a crash.
func (h *HTTP) Kill() {
	h.mu.Lock()
	srv, done := h.srv, h.done
	h.srv = nil
	h.mu.Unlock()
	if srv != nil {
		srv.Close()
		<-done
		// The handler keeps its sessions past the HTTP server: end them,
		// as a crash would.
		var ss []*sdk.ServerSession
		for s := range h.server.Sessions() {
			ss = append(ss, s)
		}
		// Close waits for running handlers, which a test may release
		// only later: do not wait here.
		for _, s := range ss {
			go s.Close()
		}
	}
}

package mcpserver

import (
	"context"
	"iter"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionGate bounds the sessions of one HTTP handler, in all and per
// principal (WithMaxSessions, WithMaxSessionsPerPrincipal). A request that
// would open a session takes a slot first, or is refused with 503; the slot
// is kept by the session it opened until the session ends, and given back
// at once when it opened none.
//
// A DELETE gives its session's slot back before it is answered. Sessions
// that end otherwise (idle timeout, keep-alive failure, Server.Close) are
// found when a ceiling is reached: the gate then looks up which of its
// sessions the go-sdk server still has, at most once every
// reconcileEvery, rather than keeping a goroutine waiting on each.
type sessionGate struct {
	max, perPrincipal int
	logger            *slog.Logger
	logs              *logLimiter
	refused           func(ctx context.Context, perPrincipal bool) // counts a refusal in the metrics
	sessions          func() iter.Seq[*sdk.ServerSession]          // the live sessions of the server

	mu        sync.Mutex
	total     int
	by        map[string]int          // slots per principal with a token
	open      map[string]*sessionSlot // by session ID, while the session lives
	reconcile time.Time               // when the ended sessions were last looked for
}

// reconcileEvery bounds how often a gate at a ceiling looks for the
// sessions that ended without a DELETE (each look costs in proportion to
// the sessions open).
const reconcileEvery = 100 * time.Millisecond

// sessionSlot is the room of one session, or of one request that may
// open one.
type sessionSlot struct {
	gate      *sessionGate
	principal string
	counted   bool                              // principal has a token
	ss        atomic.Pointer[sdk.ServerSession] // the session its initialize opened
	released  bool                              // guarded by gate.mu
}

// sessionSlotKey is the context key of the slot of the request that may
// open a session. The go-sdk derives a session's request contexts from
// the context of the request that opened it, values included, so the
// initialize request finds it (sessionSlotMiddleware).
type sessionSlotKey struct{}

func newSessionGate(cfg ceilingConfig, logger *slog.Logger, refused func(context.Context, bool), sessions func() iter.Seq[*sdk.ServerSession]) *sessionGate {
	return &sessionGate{
		max:          cfg.sessions(),
		perPrincipal: cfg.perPrincipal(),
		logger:       logger,
		logs:         newLogLimiter(),
		refused:      refused,
		sessions:     sessions,
		by:           map[string]int{},
		open:         map[string]*sessionSlot{},
	}
}

// principal returns the authenticated principal of r, if it has one.
func principal(r *http.Request) (string, bool) {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		return ti.UserID, true
	}
	return "", false
}

// take returns a slot for a session of r's principal, or nil when the
// handler or the principal is at its ceiling (perPrincipal then says
// which).
func (g *sessionGate) take(r *http.Request) (sl *sessionSlot, perPrincipal bool) {
	p, counted := principal(r)
	g.mu.Lock()
	defer g.mu.Unlock()
	full := func() bool { return g.total >= g.max || counted && g.by[p] >= g.perPrincipal }
	if full() && time.Since(g.reconcile) >= reconcileEvery {
		g.dropEnded()
	}
	if g.total >= g.max {
		return nil, false
	}
	if counted && g.by[p] >= g.perPrincipal {
		return nil, true
	}
	g.total++
	if counted {
		g.by[p]++
	}
	return &sessionSlot{gate: g, principal: p, counted: counted}, false
}

// dropEnded gives back the slots of the sessions the server no longer
// has. g.mu is held.
func (g *sessionGate) dropEnded() {
	g.reconcile = time.Now()
	if len(g.open) == 0 {
		return
	}
	live := make(map[string]bool, len(g.open))
	for ss := range g.sessions() {
		if id := ss.ID(); g.open[id] != nil {
			live[id] = true
		}
	}
	for id, sl := range g.open {
		if !live[id] {
			sl.releaseLocked()
		}
	}
}

// release gives the slot back, once.
func (sl *sessionSlot) release() {
	sl.gate.mu.Lock()
	defer sl.gate.mu.Unlock()
	sl.releaseLocked()
}

// releaseLocked is release with the gate's lock held.
func (sl *sessionSlot) releaseLocked() {
	if sl.released {
		return
	}
	sl.released = true
	g := sl.gate
	g.total--
	if sl.counted {
		if g.by[sl.principal]--; g.by[sl.principal] == 0 {
			delete(g.by, sl.principal)
		}
	}
	if ss := sl.ss.Load(); ss != nil && g.open[ss.ID()] == sl {
		delete(g.open, ss.ID())
	}
}

// opened hands the slot to the session ss, opened by the slot's request,
// until the session ends. It runs before the client can learn the
// session's ID, so before any DELETE of it.
func (sl *sessionSlot) opened(ss *sdk.ServerSession) {
	if ss.ID() == "" || !sl.ss.CompareAndSwap(nil, ss) {
		return
	}
	g := sl.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if !sl.released {
		g.open[ss.ID()] = sl
	}
}

// done gives the slot back when its request opened no session.
func (sl *sessionSlot) done() {
	if sl.ss.Load() == nil {
		sl.release()
	}
}

// refuse answers a request beyond a ceiling.
func (g *sessionGate) refuse(w http.ResponseWriter, r *http.Request, perPrincipal bool) {
	if g.refused != nil {
		g.refused(r.Context(), perPrincipal)
	}
	args := []any{"max_sessions", g.max, "remote", r.RemoteAddr}
	msg := "mcp server: too many sessions; refusing a new one"
	if perPrincipal {
		p, _ := principal(r)
		msg = "mcp server: too many sessions for one principal; refusing a new one"
		args = append(args, "principal", p, "max_sessions_per_principal", g.perPrincipal)
	}
	g.logs.warn(g.logger, msg, args...)
	w.Header().Set("Retry-After", strconv.Itoa(SessionRetryAfter))
	http.Error(w, "Service Unavailable: too many MCP sessions; retry later", http.StatusServiceUnavailable)
}

// wrap returns h, a stateful streamable HTTP handler, behind the gate: a
// POST without Mcp-Session-Id is the one request that opens a session.
// A DELETE that ends a session gives its slot back before it is answered.
func (g *sessionGate) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "":
			sl, perPrincipal := g.take(r)
			if sl == nil {
				g.refuse(w, r, perPrincipal)
				return
			}
			// The slot of a request that opened no session goes back before
			// its answer does: a client that sends initialize right after
			// another request (the go-sdk's server/discover) finds it free.
			defer sl.done()
			h.ServeHTTP(&slotWriter{ResponseWriter: w, slot: sl}, r.WithContext(context.WithValue(r.Context(), sessionSlotKey{}, sl)))
		case r.Method == http.MethodDelete && r.Header.Get("Mcp-Session-Id") != "":
			sw := &statusWriter{ResponseWriter: w}
			h.ServeHTTP(sw, r)
			if sw.status/100 == 2 {
				g.mu.Lock()
				sl := g.open[r.Header.Get("Mcp-Session-Id")]
				g.mu.Unlock()
				if sl != nil {
					sl.release()
				}
			}
		default:
			h.ServeHTTP(w, r)
		}
	})
}

// wrapSSE returns h, a legacy SSE handler, behind the gate: a GET opens a
// session that lasts as long as the request.
func (g *sessionGate) wrapSSE(h http.Handler) http.Handler {
	return g.holdDuring(h, func(r *http.Request) bool { return r.Method == http.MethodGet })
}

// holdDuring returns h behind the gate for the requests held says so of:
// each holds a session slot for as long as it is served, and is refused
// when none is free. Other requests pass as they are.
func (g *sessionGate) holdDuring(h http.Handler, held func(*http.Request) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !held(r) {
			h.ServeHTTP(w, r)
			return
		}
		sl, perPrincipal := g.take(r)
		if sl == nil {
			g.refuse(w, r, perPrincipal)
			return
		}
		defer sl.release()
		h.ServeHTTP(w, r)
	})
}

// sessionSlotMiddleware is the receiving middleware that tells the slot
// of the request that opened a session which session its initialize
// opened.
func sessionSlotMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "initialize" {
			if sl, ok := ctx.Value(sessionSlotKey{}).(*sessionSlot); ok {
				if ss, ok := req.GetSession().(*sdk.ServerSession); ok {
					sl.opened(ss)
				}
			}
		}
		return next(ctx, method, req)
	}
}

// slotWriter gives its request's slot back when the answer starts, if the
// request opened no session by then (sessionSlot.done).
type slotWriter struct {
	http.ResponseWriter
	slot    *sessionSlot
	started bool
}

func (w *slotWriter) start() {
	if !w.started {
		w.started = true
		w.slot.done()
	}
}

func (w *slotWriter) WriteHeader(code int) {
	w.start()
	w.ResponseWriter.WriteHeader(code)
}

func (w *slotWriter) Write(p []byte) (int, error) {
	w.start()
	return w.ResponseWriter.Write(p)
}

func (w *slotWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// statusWriter records the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

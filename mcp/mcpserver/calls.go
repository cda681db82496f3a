package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Causes of the cancellation of a call's context.
var (
	errSessionEnded = errors.New("the client ended its MCP session")
	errClientGone   = errors.New("the client hung up the request")
	errServerClosed = errors.New("the MCP server is closing")
)

// callTracker follows the calls in flight of every client session: it
// refuses calls beyond the per-session limit, and cancels the calls of a
// session the client ends (DELETE) and those of an HTTP request the client
// hangs up. The go-sdk cancels neither: closing a session waits for its
// calls to return, and a request's handler outlives its HTTP request.
type callTracker struct {
	limit int // 0: none

	mu        sync.Mutex
	bySession map[*sdk.ServerSession]*sessionCalls
	byID      map[string]*sessionCalls // stateful HTTP sessions
	// posts are the HTTP requests being served, by the identity of their
	// header map: the go-sdk hands that map to handlers as
	// RequestExtra.Header, which ties a call to the request that carried it.
	posts map[unsafe.Pointer]*post
}

// sessionCalls are the calls in flight of one session; it exists while
// there are some.
type sessionCalls struct {
	id    string
	user  string // the authenticated user of the session's calls, if any
	calls map[*trackedCall]struct{}
}

type trackedCall struct{ cancel context.CancelCauseFunc }

// post is an HTTP request being served.
type post struct {
	ctx context.Context
	// ended is set when the handler returned with the client still there:
	// the end of ctx that follows is no hang-up.
	ended atomic.Bool
}

func newCallTracker(limit int) *callTracker {
	return &callTracker{
		limit:     limit,
		bySession: map[*sdk.ServerSession]*sessionCalls{},
		byID:      map[string]*sessionCalls{},
		posts:     map[unsafe.Pointer]*post{},
	}
}

// tracked reports the methods whose requests run the toolkit's code.
func tracked(method string) bool {
	switch method {
	case "tools/call", "prompts/get", "resources/read", "completion/complete":
		return true
	}
	return false
}

// middleware is the receiving middleware of the go-sdk server that
// tracks calls.
func (t *callTracker) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		ss, _ := req.GetSession().(*sdk.ServerSession)
		if !tracked(method) || ss == nil {
			return next(ctx, method, req)
		}
		extra := req.GetExtra()
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		c := &trackedCall{cancel: cancel}
		if !t.begin(ss, extra, c) {
			return nil, &jsonrpc.Error{
				Code:    CodeTooManyCalls,
				Message: fmt.Sprintf("too many calls in flight on this session (at most %d); retry when one has been answered", t.limit),
			}
		}
		defer t.end(ss, c)
		if st, ok := ctx.Value(sseStreamKey{}).(sseStream); ok {
			// A legacy SSE session lives as long as its GET request.
			stop := context.AfterFunc(st.ctx, func() { cancel(errClientGone) })
			defer stop()
		}
		if p := t.post(extra); p != nil {
			stop := context.AfterFunc(p.ctx, func() {
				if !p.ended.Load() {
					cancel(errClientGone)
				}
			})
			defer stop()
		}
		return next(ctx, method, req)
	}
}

// begin registers c as a call of ss; false when ss is at its limit.
func (t *callTracker) begin(ss *sdk.ServerSession, extra *sdk.RequestExtra, c *trackedCall) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	sc := t.bySession[ss]
	if sc == nil {
		sc = &sessionCalls{id: ss.ID(), calls: map[*trackedCall]struct{}{}}
		if extra != nil && extra.TokenInfo != nil {
			sc.user = extra.TokenInfo.UserID
		}
		t.bySession[ss] = sc
		if sc.id != "" {
			t.byID[sc.id] = sc
		}
	}
	if t.limit > 0 && len(sc.calls) >= t.limit {
		return false
	}
	sc.calls[c] = struct{}{}
	return true
}

// end unregisters c.
func (t *callTracker) end(ss *sdk.ServerSession, c *trackedCall) {
	t.mu.Lock()
	defer t.mu.Unlock()
	sc := t.bySession[ss]
	if sc == nil {
		return
	}
	delete(sc.calls, c)
	if len(sc.calls) == 0 {
		delete(t.bySession, ss)
		if sc.id != "" && t.byID[sc.id] == sc {
			delete(t.byID, sc.id)
		}
	}
}

// post returns the HTTP request that carried a call, or nil.
func (t *callTracker) post(extra *sdk.RequestExtra) *post {
	if extra == nil || extra.Header == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.posts[headerKey(extra.Header)]
}

// endSession cancels the calls of the session with the given ID, when user
// may end it (the same rule as the go-sdk's: a session opened with a
// token belongs to the token's user).
func (t *callTracker) endSession(id, user string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	sc := t.byID[id]
	if sc == nil || (sc.user != "" && sc.user != user) {
		return
	}
	for c := range sc.calls {
		c.cancel(errSessionEnded)
	}
}

// cancelAll cancels every call in flight.
func (t *callTracker) cancelAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, sc := range t.bySession {
		for c := range sc.calls {
			c.cancel(errServerClosed)
		}
	}
}

// headerKey is the identity of a request's header map.
func headerKey(h http.Header) unsafe.Pointer { return reflect.ValueOf(h).UnsafePointer() }

// wrap returns h, the go-sdk's HTTP handler, with the calls of a session
// cancelled when the client ends it (DELETE) and, with hangups, the calls
// of a request cancelled when the client hangs the request up.
func (t *callTracker) wrap(h http.Handler, hangups bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodDelete:
			if id := r.Header.Get("Mcp-Session-Id"); id != "" {
				var user string
				if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
					user = ti.UserID
				}
				t.endSession(id, user)
			}
			h.ServeHTTP(w, r)
		case r.Method == http.MethodPost && hangups && r.Header != nil:
			key := headerKey(r.Header)
			p := &post{ctx: r.Context()}
			t.mu.Lock()
			t.posts[key] = p
			t.mu.Unlock()
			defer func() {
				t.mu.Lock()
				delete(t.posts, key)
				t.mu.Unlock()
			}()
			h.ServeHTTP(w, r)
			if r.Context().Err() == nil {
				p.ended.Store(true)
			}
		default:
			h.ServeHTTP(w, r)
		}
	})
}

// sseStreamKey is the context key of the GET request of a legacy SSE
// session. The go-sdk derives a session's request contexts from the
// context of the request that opened the session, with its values (not its
// end); the value carries the end along.
type sseStreamKey struct{}

type sseStream struct{ ctx context.Context }

// wrapSSE returns h, the go-sdk's SSE handler, with the calls of a session
// cancelled when its GET request ends (the client went away).
func wrapSSE(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			r = r.WithContext(context.WithValue(r.Context(), sseStreamKey{}, sseStream{r.Context()}))
		}
		h.ServeHTTP(w, r)
	})
}

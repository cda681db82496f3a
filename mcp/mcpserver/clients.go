package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// WithClientSessions makes the server keep a [bridge.Client] for every
// client session that starts (stdio, stateful streamable HTTP, legacy
// SSE; a stateless HTTP request has none): the toolkit sessions of its
// calls carry it ([bridge.ClientCarrier]), and each observer is told when
// a session starts ([bridge.ClientObserver]), once its client has sent
// notifications/initialized. A connector made with
// [github.com/llmkit/toolkit/mcp.OptPerClient] needs it to give each
// client an upstream session of its own; a [github.com/llmkit/toolkit/mcp.Delegate]
// is an observer that opens those sessions as soon as the client's session
// starts, so the upstream server's initialize already sees the client's
// roots. Each Client costs one goroutine, which waits for the end of its
// session.
func WithClientSessions(observers ...bridge.ClientObserver) Option {
	return func(c *config) error {
		for i, o := range observers {
			if o == nil {
				return fmt.Errorf("%w: WithClientSessions: observer %d is nil", toolkit.ErrBadParameter, i)
			}
		}
		c.sessions.clients = true
		c.sessions.observers = append(c.sessions.observers, observers...)
		return nil
	}
}

// clientTable holds the bridge.Client of each started client session.
type clientTable struct {
	observers []bridge.ClientObserver

	mu     sync.Mutex
	by     map[*sdk.ServerSession]*clientHandle
	closed bool
}

func newClientTable(observers []bridge.ClientObserver) *clientTable {
	return &clientTable{observers: observers, by: map[*sdk.ServerSession]*clientHandle{}}
}

// started records the session of req, which has just been initialized,
// and tells the observers.
func (t *clientTable) started(ctx context.Context, req *sdk.InitializedRequest) {
	ss := req.Session
	if ss == nil {
		return
	}
	h := &clientHandle{ss: ss, done: make(chan struct{}), watchers: map[*rootsWatcher]struct{}{}}
	t.mu.Lock()
	if t.closed || t.by[ss] != nil {
		t.mu.Unlock()
		return
	}
	t.by[ss] = h
	t.mu.Unlock()
	go func() {
		_ = ss.Wait()
		t.mu.Lock()
		delete(t.by, ss)
		t.mu.Unlock()
		h.end()
	}()
	for _, o := range t.observers {
		o.ClientStarted(context.WithoutCancel(ctx), h)
	}
}

// of returns the Client of ss, or nil.
func (t *clientTable) of(ss *sdk.ServerSession) *clientHandle {
	if t == nil || ss == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.by[ss]
}

// rootsChanged passes a client's notifications/roots/list_changed on to
// the watchers of its Client.
func (t *clientTable) rootsChanged(_ context.Context, req *sdk.RootsListChangedRequest) {
	if h := t.of(req.Session); h != nil {
		h.rootsChanged()
	}
}

// close ends every Client; the server is closing.
func (t *clientTable) close() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.closed = true
	hs := make([]*clientHandle, 0, len(t.by))
	for _, h := range t.by {
		hs = append(hs, h)
	}
	t.mu.Unlock()
	for _, h := range hs {
		h.end()
	}
}

// clientHandle is the bridge.Client of one client session.
type clientHandle struct {
	ss        *sdk.ServerSession
	principal atomic.Pointer[string] // of the session's requests, once one came

	once sync.Once
	done chan struct{}

	mu       sync.Mutex
	watchers map[*rootsWatcher]struct{}
}

// rootsWatcher is one OnRootsChanged registration. However many
// notifications a client sends, a watcher runs f in at most one goroutine
// at a time, once more after the last notification that came while it
// ran: a flood of them costs no goroutine each.
type rootsWatcher struct {
	f       func()
	running atomic.Bool
	dirty   atomic.Bool
}

// kick runs f, or makes the running f run once more.
func (w *rootsWatcher) kick() {
	w.dirty.Store(true)
	if !w.running.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for {
			w.dirty.Store(false)
			w.f()
			w.running.Store(false)
			if !w.dirty.Load() || !w.running.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

var _ bridge.Client = (*clientHandle)(nil)

// Done is closed when the client's session has ended.
func (h *clientHandle) Done() <-chan struct{} { return h.done }

func (h *clientHandle) end() { h.once.Do(func() { close(h.done) }) }

// OnRootsChanged calls f, in a goroutine, each time the client says its
// roots changed, until stop is called; notifications that come while f
// runs make it run once more after, not once each.
func (h *clientHandle) OnRootsChanged(f func()) (stop func()) {
	w := &rootsWatcher{f: f}
	h.mu.Lock()
	h.watchers[w] = struct{}{}
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.watchers, w)
		h.mu.Unlock()
	}
}

func (h *clientHandle) rootsChanged() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.watchers {
		w.kick()
	}
}

// Capabilities returns what the client offered at initialize.
func (h *clientHandle) Capabilities() *sdk.ClientCapabilities {
	if p := h.ss.InitializeParams(); p != nil {
		return p.Capabilities
	}
	return nil
}

// CreateMessage asks the client to sample its model, outside any of its
// requests.
func (h *clientHandle) CreateMessage(ctx context.Context, params *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	return requestClient(h, ctx, "sampling", func(c *sdk.ClientCapabilities) bool { return c.Sampling != nil }, (*sdk.ServerSession).CreateMessage, params)
}

// Elicit asks the client's user for input, outside any of its requests.
func (h *clientHandle) Elicit(ctx context.Context, params *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	return requestClient(h, ctx, "elicitation", func(c *sdk.ClientCapabilities) bool { return c.Elicitation != nil }, (*sdk.ServerSession).Elicit, params)
}

// ListRoots asks the client for its roots, outside any of its requests.
func (h *clientHandle) ListRoots(ctx context.Context, params *sdk.ListRootsParams) (*sdk.ListRootsResult, error) {
	return requestClient(h, ctx, "roots", func(c *sdk.ClientCapabilities) bool { return c.RootsV2 != nil }, (*sdk.ServerSession).ListRoots, params)
}

// requestClient sends the client of h a request when it offers the capability
// what; it fails with an error wrapping toolkit.ErrNotImplemented when it
// does not, and with toolkit.ErrClosed when its session has ended.
func requestClient[P, R any](h *clientHandle, ctx context.Context, what string, offers func(*sdk.ClientCapabilities) bool, send func(*sdk.ServerSession, context.Context, P) (R, error), params P) (R, error) {
	var zero R
	select {
	case <-h.done:
		return zero, fmt.Errorf("%w: the MCP client's session has ended", toolkit.ErrClosed)
	default:
	}
	if caps := h.Capabilities(); caps == nil || !offers(caps) {
		return zero, fmt.Errorf("%w: the MCP client does not offer %s", toolkit.ErrNotImplemented, what)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-h.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return send(h.ss, ctx, params)
}

var (
	_ bridge.ClientPrincipal      = (*clientHandle)(nil)
	_ bridge.ElicitationCompleter = (*clientHandle)(nil)
)

// Principal returns the principal the client's session belongs to: the
// UserID of the token of its requests (the SDK binds a session to the
// user that opened it), "" without authentication. It is known from the
// session's first call on (the notification that starts a session
// carries no token): a connector that needs it (OptOAuthPerUser) opens
// the client's upstream session at that call.
func (h *clientHandle) Principal() string {
	if p := h.principal.Load(); p != nil {
		return *p
	}
	return ""
}

// learnPrincipal notes the principal of a request of the session, unless
// one was noted already.
func (h *clientHandle) learnPrincipal(p string) {
	if p != "" {
		h.principal.CompareAndSwap(nil, &p)
	}
}

// ElicitationComplete tells the client that the URL-mode elicitation
// elicitationID has completed (notifications/elicitation/complete).
func (h *clientHandle) ElicitationComplete(ctx context.Context, elicitationID string) error {
	_, err := requestClient(h, ctx, "URL elicitation", func(c *sdk.ClientCapabilities) bool { return c.Elicitation != nil && c.Elicitation.URL != nil },
		func(ss *sdk.ServerSession, ctx context.Context, id string) (struct{}, error) {
			return struct{}{}, ss.NotifyElicitationComplete(ctx, &sdk.ElicitationCompleteParams{ElicitationID: id})
		}, elicitationID)
	return err
}

var _ bridge.ClientCarrier = (*serverSession)(nil)

// Client returns the lasting session of the call's client, or nil when
// the server keeps none (see WithClientSessions).
func (s *serverSession) Client() bridge.Client {
	if s.clients == nil {
		return nil
	}
	if h := s.clients.of(s.ss); h != nil {
		h.learnPrincipal(principalOf(s.extra))
		return h
	}
	return nil
}

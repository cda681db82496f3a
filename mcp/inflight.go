package mcp

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// inflight is one request in progress.
type inflight struct {
	key     string // its key in the registry (also its progress token)
	l       *live
	session toolkit.Session
	cancel  context.CancelCauseFunc
	// posted is the HTTP status that answered the request's POST (streamable
	// HTTP), 0 when none did: a 404 proves the server never ran it (it does
	// not know the session), a 2xx that it received it, whatever error
	// follows (a resumed stream answered 404, the connection closed).
	posted atomic.Int32
	// sent records that the request may have reached the server although
	// no answer says so: a POST that failed after it was under way, or a
	// write that went through on any other connection (writeMarker). A
	// request that may have reached the server is never taken for
	// undelivered.
	sent atomic.Bool

	// closing: the connector cancelled the request because it closes the
	// session, and waits for quiet before it does (live.close).
	closing atomic.Bool
	// quiet is closed (once, through settle) when nothing more will be
	// sent for the request: it returned without a cancellation to send, or
	// its notifications/cancelled went out.
	quiet     chan struct{}
	quietOnce sync.Once

	progress atomic.Pointer[progressGate] // made by the first notification

	// tooDeep: a value of the request's answer stream nested deeper than
	// wire.MaxDepth and was clamped (package internal/wire); the request fails.
	tooDeep atomic.Bool

	// requests counts the server's requests for the call that wait for an
	// answer (requests_bound.go).
	requests atomic.Int32

	// streams are the HTTP requests of the call's POSTs, which have
	// contexts of their own; finished: the call returned
	// (answerstream.go).
	streamsMu sync.Mutex
	streams   []*answerStream
	stream1   [1]*answerStream // the backing of streams for the usual one POST
	finished  bool
}

// progressGate returns the gate of the call's progress notifications; now
// is the limiter's clock (nil: time.Now).
func (in *inflight) progressGate(now func() time.Time) *progressGate {
	if g := in.progress.Load(); g != nil {
		return g
	}
	in.progress.CompareAndSwap(nil, &progressGate{lim: newRateLimiter(progressBurst, progressRate, now)})
	return in.progress.Load()
}

// settle records that nothing more will be sent for the request.
func (in *inflight) settle() { in.quietOnce.Do(func() { close(in.quiet) }) }

// delivery tells what the HTTP answer to a request's POST proves.
type delivery int

const (
	deliveryUnknown  delivery = iota // no POST answered (or not HTTP)
	deliveryRefused                  // 404: the server did not run it
	deliveryReceived                 // 2xx: the server has it
)

func (in *inflight) delivery() delivery {
	switch st := in.posted.Load(); {
	case st == http.StatusNotFound:
		return deliveryRefused
	case st >= 200 && st < 300:
		return deliveryReceived
	}
	return deliveryUnknown
}

// mayHaveArrived reports whether the request may have reached the server
// (see sent). It is false outside a connector call.
func (in *inflight) mayHaveArrived() bool { return in != nil && in.sent.Load() }

// markSent records that the request whose context is ctx may have reached
// the server.
func markSent(ctx context.Context) {
	if in := inflightFrom(ctx); in != nil {
		in.sent.Store(true)
	}
}

// neverWritten reports whether the request provably never reached the
// server: every write on l's connection is marked (writeMarker), and none
// of the request went through (it failed, or was never made).
func (in *inflight) neverWritten(l *live) bool {
	return in != nil && l.marksWrites && !in.sent.Load()
}

// inflightKey is the context key of the request a context was made for.
type inflightKey struct{}

// inflightFrom returns the request ctx was made for, or nil.
func inflightFrom(ctx context.Context) *inflight {
	in, _ := ctx.Value(inflightKey{}).(*inflight)
	return in
}

// callRegistry tracks the requests in progress, to route progress and log
// notifications to their callers and to cancel them when their session
// ends.
type callRegistry struct {
	mu    sync.Mutex
	next  uint64
	calls map[string]*inflight

	// slots holds one value per request in flight
	// (Limits.MaxConcurrency; limits.go); nil without a limit.
	slots chan struct{}
}

// begin registers a request on l; it returns the request's context, its
// progress token ("" when the caller's session takes no progress: the
// toolkit's no-op session, with neither ID nor client, or a server face's
// session whose client asked for none, a bridge.ProgressTaker) and the
// function that ends it.
func (r *callRegistry) begin(ctx context.Context, l *live) (context.Context, string, func()) {
	cctx, cancel := context.WithCancelCause(ctx)
	sess := toolkit.SessionFromContext(ctx)
	in := &inflight{l: l, session: sess, cancel: cancel, quiet: make(chan struct{})}
	// The request's HTTP response stream, if any, learns whose it is.
	cctx = context.WithValue(cctx, inflightKey{}, in)
	r.mu.Lock()
	r.next++
	key := strconv.FormatUint(r.next, 10)
	in.key = key
	if r.calls == nil {
		r.calls = map[string]*inflight{}
	}
	r.calls[key] = in
	r.mu.Unlock()
	token := key
	// Only the caller's own session says (no SessionAs): a session
	// wrapping it may take progress its base does not.
	if pt, ok := sess.(bridge.ProgressTaker); ok && !pt.TakesProgress() || sess.ID() == "" && sess.ClientInfo() == nil {
		token = ""
	}
	return cctx, token, func() {
		r.mu.Lock()
		delete(r.calls, key)
		r.mu.Unlock()
		cancel(nil)
	}
}

// cancelSession cancels the requests made on l and returns them.
func (r *callRegistry) cancelSession(l *live) []*inflight {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*inflight
	for _, in := range r.calls {
		if in.l == l {
			in.closing.Store(true)
			in.cancel(errSessionClosed)
			out = append(out, in)
		}
	}
	return out
}

// soleOn returns the caller's session of the only request in progress on
// the SDK session cs, and how many requests are in progress there.
func (r *callRegistry) soleOn(cs *sdk.ClientSession) (toolkit.Session, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var sess toolkit.Session
	n := 0
	for _, in := range r.calls {
		if in.l.sess == cs {
			sess = in.session
			n++
		}
	}
	if n != 1 {
		return nil, n
	}
	return sess, 1
}

func (r *callRegistry) get(token string) *inflight {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[token]
}

// sole returns the caller's session when exactly one request is in
// progress.
func (r *callRegistry) sole() toolkit.Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) != 1 {
		return nil
	}
	for _, in := range r.calls {
		return in.session
	}
	return nil
}

func tokenKey(t any) string {
	switch v := t.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(t)
}

// handleProgress is the SDK's progress handler; it stands aside when a
// noteScanner delivers notifications (see notifications.go).
func (c *Connector) handleProgress(ctx context.Context, req *sdk.ProgressNotificationClientRequest) {
	if c.link.scanned || req.Params == nil {
		return
	}
	c.deliverProgress(req.Params)
}

// handleLog is the SDK's log handler; it stands aside when a noteScanner
// delivers notifications.
func (c *Connector) handleLog(ctx context.Context, req *sdk.LoggingMessageRequest) {
	if c.link.scanned || req.Params == nil {
		return
	}
	if ok, dropped := c.srv.noteLogs.take(); ok {
		c.deliverLog(ctx, req.Params, nil, dropped)
	}
}

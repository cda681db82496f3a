package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/prompt"
)

// errSessionClosed is the cancellation cause of calls whose session the
// supervisor closed.
var errSessionClosed = errors.New("the connection to the server was lost during the request")

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
}

// begin registers a request on l; it returns the request's context, its
// progress token ("" when the caller's session takes no progress: the
// toolkit's no-op session, with neither ID nor client) and the function
// that ends it.
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
	if sess.ID() == "" && sess.ClientInfo() == nil {
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
	if c.scanned || req.Params == nil {
		return
	}
	c.deliverProgress(req.Params)
}

// handleLog is the SDK's log handler; it stands aside when a noteScanner
// delivers notifications.
func (c *Connector) handleLog(ctx context.Context, req *sdk.LoggingMessageRequest) {
	if c.scanned || req.Params == nil {
		return
	}
	if ok, dropped := c.noteLogs.take(); ok {
		c.deliverLog(ctx, req.Params, nil, dropped)
	}
}

// acquire returns the ready session, waiting up to OptReconnectWait for one.
func (c *Connector) acquire(ctx context.Context) (*live, error) {
	var timer *time.Timer
	for {
		c.mu.Lock()
		l, stopped, ch := c.cur, c.stopped, c.readyCh
		c.mu.Unlock()
		if err := c.oauthPending(); err != nil {
			return nil, err
		}
		if l != nil {
			return l, nil
		}
		if stopped {
			return nil, fmt.Errorf("%w: connector %s is not running", errs.ErrClosed, c.label())
		}
		if timer == nil {
			timer = time.NewTimer(c.o.reconnectWait)
			defer timer.Stop()
			// Cut the supervisor's backoffs short while this call waits:
			// a caller needs the server now (see Connector.backoff).
			c.waiters.Add(1)
			defer c.waiters.Add(-1)
			select {
			case c.kick <- struct{}{}:
			default:
			}
			if c.o.waiting != nil {
				c.o.waiting()
			}
		}
		select {
		case <-ch:
		case <-timer.C:
			st := c.State()
			detail := ""
			if st.LastError != "" {
				detail = ": " + st.LastError
			}
			return nil, fmt.Errorf("%w: server %s is %s after waiting %v%s", errs.ErrUnavailable, c.serverName(), st.Status, c.o.reconnectWait, detail)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// JSON-RPC error codes the SDK uses for failures of its own side: an error
// carrying one is not an answer of the server.
const (
	codeUnknown       = -32001
	codeClientClosing = -32003
	codeServerClosing = -32004
	codeRejected      = -32005
)

// isRemoteError reports an error answer of the server: the session works.
func isRemoteError(err error) bool {
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return false
	}
	switch we.Code {
	case codeUnknown, codeClientClosing, codeServerClosing, codeRejected:
		return false
	}
	return true
}

// isTransportError reports an error of the way to the server rather than
// of its answer.
func isTransportError(err error) bool {
	var we *jsonrpc.Error
	if errors.As(err, &we) && !isRemoteError(err) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// notDelivered reports errors that prove the server did not process the
// request: the client refused to send it on a closing connection, or the
// server answered that it does not know the session (it restarted).
func notDelivered(err error) bool {
	return errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing)
}

// withTraceContext puts the W3C trace context of ctx, if any, in the _meta
// of an outgoing request, so that the server's spans join the caller's
// trace (through a gateway, the downstream client's).
func withTraceContext(ctx context.Context, params sdk.Params) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	meta := params.GetMeta()
	if meta == nil {
		meta = map[string]any{}
	}
	bridge.InjectTraceMeta(ctx, meta)
	params.SetMeta(meta)
}

// progressParams are the parameters of a request that can carry a progress
// token.
type progressParams interface {
	sdk.Params
	SetProgressToken(any)
}

// request sends params through [Connector.do] with call (a method of
// sdk.ClientSession), tagging them on each attempt with the trace context
// and the progress token of the caller.
func request[P progressParams, R any](c *Connector, ctx context.Context, what reqName, failed error, safe bool, params P, call func(*sdk.ClientSession, context.Context, P) (R, error)) (R, error) {
	var res R
	err := c.do(ctx, what, failed, safe, func(ctx context.Context, l *live, token string) error {
		withTraceContext(ctx, params)
		if token != "" {
			params.SetProgressToken(token)
		}
		var err error
		res, err = call(l.sess, ctx, params)
		return err
	})
	return res, err
}

// reqName names a request in errors; it is formatted only when needed.
type reqName struct{ kind, name string }

func (r reqName) String() string { return r.kind + " " + strconv.Quote(r.name) }

// doRequest runs one request for a caller on the ready session and translates
// its errors; what names the request ("tool \"x\""), failed is the sentinel
// for an error answer of the server. Any failure that is not an answer of
// the server makes do ping the session, and a failed ping ends it.
//
// A request is sent once more (on the next session when this one is lost,
// waiting for it like any call) when that cannot do harm: when the failure
// proves that the server did not process it, or when the request is safe
// to repeat (safe: reads, and tools annotated read-only or idempotent). A
// request that may have run is never repeated.
func (c *Connector) doRequest(ctx context.Context, what reqName, failed error, safe bool, f func(ctx context.Context, l *live, token string) error) error {
	if c.o.callTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.o.callTimeout)
		defer cancel()
	}
	release, err := c.takeSlot(ctx)
	if err != nil {
		return fmt.Errorf("%s of server %s: %w", what, c.serverName(), err)
	}
	defer release()
	for try := 0; ; try++ {
		l, err := c.acquire(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		cctx, token, done := c.calls.begin(ctx, l)
		err = f(cctx, l, token)
		cause := context.Cause(cctx)
		in := inflightFrom(cctx)
		got := in.delivery()
		if err == nil || cctx.Err() == nil || errors.Is(err, sdk.ErrConnectionClosed) || !l.postsCancellations() {
			// The SDK sends notifications/cancelled (in the background)
			// only for a request it gave up because its context ended.
			in.settle()
		}
		done()
		var badJSON *json.MarshalerError
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("%s of server %s: %w", what, c.serverName(), context.Cause(ctx))
		case errors.As(err, &badJSON):
			// The request could not be encoded (invalid JSON given as a
			// json.RawMessage): nothing was sent.
			return fmt.Errorf("%w: %s of server %s: input is not valid JSON: %v", errs.ErrBadParameter, what, c.serverName(), badJSON.Err)
		case got == deliveryRefused:
			// The server answered the request itself that it does not know
			// the session: it never ran it, so it may go on the next one,
			// whatever happened to this session meanwhile.
			c.lost(l, err)
			if try == 0 {
				continue
			}
			return fmt.Errorf("%w: %s of server %s: %v", errs.ErrUnavailable, what, c.serverName(), err)
		case errors.Is(cause, errSessionClosed):
			if safe && try == 0 {
				continue
			}
			return fmt.Errorf("%w: %s of server %s: %v", errs.ErrUnavailable, what, c.serverName(), errSessionClosed)
		case notDelivered(err) && got != deliveryReceived && !in.mayHaveArrived():
			c.lost(l, err)
			if try == 0 {
				continue
			}
			return fmt.Errorf("%w: %s of server %s: %v", errs.ErrUnavailable, what, c.serverName(), err)
		case isRemoteError(err):
			// The server's *jsonrpc.Error stays in the chain: a gateway
			// passes its code and message on.
			return fmt.Errorf("%w: %s of server %s: %w", failed, what, c.serverName(), err)
		}
		if perr := c.ping(ctx, l); perr != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("%s of server %s: %w", what, c.serverName(), context.Cause(ctx))
			}
			c.lost(l, fmt.Errorf("%v; ping failed: %v", err, perr))
			if safe && try == 0 {
				continue
			}
			return fmt.Errorf("%w: %s of server %s: %v", errs.ErrUnavailable, what, c.serverName(), err)
		}
		if isTransportError(err) {
			// The session works, the transport failed this request (a
			// stale keep-alive connection to a restarted server, say).
			if safe && try == 0 {
				continue
			}
			return fmt.Errorf("%w: %s of server %s: %v", errs.ErrUnavailable, what, c.serverName(), err)
		}
		// The session works: the answer to this request was broken.
		return fmt.Errorf("%w: %s of server %s: %v", failed, what, c.serverName(), err)
	}
}

// callTool calls a remote tool and maps its result.
func (c *Connector) callTool(ctx context.Context, t *remoteTool, input json.RawMessage) (any, error) {
	what := reqName{"tool", t.def.Name}
	// The toolkit's Call validated the input against the tool's schema
	// already: it is not scanned again here. Invalid JSON from a direct
	// Run is refused when the request is encoded (see Connector.do).
	var args any
	if in := bytes.TrimSpace(input); len(in) > 0 && !bytes.Equal(in, []byte("null")) {
		if in[0] != '{' {
			return nil, fmt.Errorf("%w: %s of server %s: input must be a JSON object", errs.ErrBadParameter, what, c.serverName())
		}
		args = json.RawMessage(in)
	}
	safe := t.meta.ReadOnlyHint || t.meta.IdempotentHint
	res, err := request(c, ctx, what, errs.ErrToolFailed, safe, &sdk.CallToolParams{Name: t.def.Name, Arguments: args}, (*sdk.ClientSession).CallTool)
	if err != nil {
		return nil, err
	}
	return c.toolResult(t.def.Name, res)
}

// getPrompt renders a remote prompt with prompts/get.
func (c *Connector) getPrompt(ctx context.Context, p *remotePrompt, input json.RawMessage) (*prompt.Rendered, error) {
	what := reqName{"prompt", p.def.Name}
	args, err := promptArguments(input)
	if err != nil {
		return nil, fmt.Errorf("%w: %s of server %s: %v", errs.ErrBadParameter, what, c.serverName(), err)
	}
	res, err := request(c, ctx, what, errs.ErrToolFailed, true, &sdk.GetPromptParams{Name: p.def.Name, Arguments: args}, (*sdk.ClientSession).GetPrompt)
	if err != nil {
		return nil, err
	}
	if c.o.maxResult > 0 {
		size := int64(len(res.Description))
		for _, m := range res.Messages {
			if m != nil {
				size += contentSize(m.Content)
			}
		}
		if err := c.checkSize(what, size); err != nil {
			return nil, err
		}
	}
	out := &prompt.Rendered{Description: res.Description}
	base := c.resultURI("prompt", p.def.Name)
	for i, m := range res.Messages {
		if m == nil {
			continue
		}
		r, err := c.contentResource(m.Content, fmt.Sprintf("%s/%d", base, i), p.def.Name)
		if err != nil {
			return nil, fmt.Errorf("%w: %s of server %s: message %d: %v", errs.ErrToolFailed, what, c.serverName(), i, err)
		}
		r = carry(r, []sdk.Content{m.Content}, nil)
		role := prompt.RoleUser
		if m.Role == "assistant" {
			role = prompt.RoleAssistant
		}
		out.Messages = append(out.Messages, prompt.Message{Role: role, Content: r})
	}
	return out, nil
}

// promptArguments turns a JSON object into prompt arguments: strings as
// they are, other values as their JSON text.
func promptArguments(input json.RawMessage) (map[string]string, error) {
	in := bytes.TrimSpace(input)
	if len(in) == 0 || bytes.Equal(in, []byte("null")) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(in, &m); err != nil {
		return nil, errors.New("input must be a JSON object")
	}
	args := make(map[string]string, len(m))
	for k, v := range m {
		var s string
		if json.Unmarshal(v, &s) == nil {
			args[k] = s
		} else {
			args[k] = string(v)
		}
	}
	return args, nil
}

// readResource reads a resource with resources/read, returning its bytes
// and MIME type.
func (c *Connector) readResource(ctx context.Context, uri string) ([]byte, string, error) {
	what := reqName{"resource", uri}
	res, err := request(c, ctx, what, errs.ErrNotFound, true, &sdk.ReadResourceParams{URI: uri}, (*sdk.ClientSession).ReadResource)
	if err != nil {
		return nil, "", err
	}
	if err := c.checkSize(what, resourceSize(res.Contents...)); err != nil {
		return nil, "", err
	}
	var pick *sdk.ResourceContents
	for _, rc := range res.Contents {
		if rc == nil {
			continue
		}
		if pick == nil || (rc.URI == uri && pick.URI != uri) {
			pick = rc
		}
	}
	if pick == nil {
		return nil, "", fmt.Errorf("%w: %s of server %s: no contents", errs.ErrNotFound, what, c.serverName())
	}
	if pick.Blob != nil {
		return pick.Blob, pick.MIMEType, nil
	}
	return []byte(pick.Text), pick.MIMEType, nil
}

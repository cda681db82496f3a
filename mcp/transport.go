package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/internal/wire"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// endpointKind is the transport family a URL selects.
type endpointKind int

const (
	endpointHTTP  endpointKind = iota // streamable HTTP, falling back to SSE
	endpointSSE                       // legacy HTTP+SSE only
	endpointStdio                     // child process
)

// endpoint is a parsed connector URL.
type endpoint struct {
	kind    endpointKind
	url     string        // HTTP URL
	stdio   *StdioCommand // stdio command
	display string        // safe to log: no query, no user information
}

// parseEndpoint parses a connector URL (see StdioCommand and the guide docs/connectors.md).
func parseEndpoint(raw string) (*endpoint, error) {
	if strings.HasPrefix(raw, StdioScheme+":") {
		c, err := ParseStdioURL(raw)
		if err != nil {
			return nil, err
		}
		return &endpoint{kind: endpointStdio, stdio: c, display: redactStdio(raw)}, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: connector URL: %v", errs.ErrBadParameter, errs.WithoutURL(err))
	}
	switch u.Scheme {
	case "http", "https":
	default:
		return nil, fmt.Errorf("%w: connector URL %q: want an http, https or stdio URL", errs.ErrBadParameter, redactHTTP(u))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%w: connector URL %q: no host", errs.ErrBadParameter, redactHTTP(u))
	}
	if u.Fragment != "" {
		return nil, fmt.Errorf("%w: connector URL %q: a fragment is not allowed", errs.ErrBadParameter, redactHTTP(u))
	}
	ep := &endpoint{kind: endpointHTTP, url: raw, display: redactHTTP(u)}
	if path.Base(u.Path) == "sse" {
		ep.kind = endpointSSE
	}
	return ep, nil
}

func redactHTTP(u *url.URL) string {
	v := *u
	v.User = nil
	v.RawQuery = ""
	v.ForceQuery = false
	v.Fragment = ""
	return v.String()
}

// sseResumeRetries is how many times the streamable HTTP transport tries to
// resume a broken event stream before it gives up on the session.
const sseResumeRetries = 2

// httpFallbackStatus reports whether a status code answering the first
// streamable POST means the server does not speak streamable HTTP.
func httpFallbackStatus(code int) bool {
	return code == http.StatusBadRequest || code == http.StatusNotFound || code == http.StatusMethodNotAllowed
}

// live is one connected session and what is needed to watch and end it.
type live struct {
	sess      *sdk.ClientSession
	transport string // "streamable", "sse", "stdio" or "custom"
	stdio     *stdioTransport
	done      chan struct{} // closed when sess.Wait returns
	waitErr   error
	reg       *callRegistry
	listen    *listenWatch // its subscriptions/listen streams (listen.go); nil but over streamable HTTP
	// marksWrites: each request written on the session's connection
	// passes a writeMarker (all but the SDK's streamable HTTP one).
	marksWrites bool
}

// exited returns a channel closed when a stdio child exits (nil otherwise).
func (l *live) exited() <-chan struct{} {
	if l.stdio == nil {
		return nil
	}
	return l.stdio.exited()
}

// cancelNotifyWait bounds how long closing a session waits for the
// cancellations of its requests to go out.
const cancelNotifyWait = 500 * time.Millisecond

// postsCancellations reports whether the session's notifications/cancelled
// go out as HTTP POSTs that the connector sees (live.close waits for them).
func (l *live) postsCancellations() bool {
	return l.transport == "streamable" || l.transport == "sse"
}

// close ends the session: in-flight calls are cancelled first, then the
// session is closed and its end awaited; a stdio child is reaped, at the
// latest after its terminate timeout whatever the handlers of its
// requests wait for.
//
// Over HTTP the SDK sends the notifications/cancelled of a cancelled
// request in the background, and the DELETE that closes a session would
// overtake them: the server would then wait for handlers that were never
// told to stop, and the session (and its work) would outlive the client.
// So close first waits, up to cancelNotifyWait, until the cancellation of
// every request it cancelled was sent (or the request returned without
// needing one).
func (l *live) close() {
	ins := l.reg.cancelSession(l)
	if len(ins) > 0 && l.postsCancellations() {
		select {
		case <-l.done: // the connection is gone: nothing can be sent
		default:
			t := time.NewTimer(cancelNotifyWait)
		wait:
			for _, in := range ins {
				select {
				case <-in.quiet:
				case <-l.done:
					break wait
				case <-t.C:
					break wait
				}
			}
			t.Stop()
		}
	}
	closed := make(chan struct{})
	go func() {
		// The SDK closes the connection once the handlers of the
		// server's requests have returned.
		_ = l.sess.Close()
		close(closed)
	}()
	if l.stdio != nil {
		// A handler waiting for someone (a client that never answers
		// roots/list, a handler that ignores its context) must not keep
		// the child alive: it is ended after the terminate timeout.
		t := time.NewTimer(l.stdio.terminate)
		select {
		case <-closed:
		case <-t.C:
			l.stdio.close()
		}
		t.Stop()
	}
	<-closed
	<-l.done
	if l.stdio != nil {
		l.stdio.close()
	}
}

// trackedTransport remembers the connection it made, so that a failed
// handshake never leaves it open.
type trackedTransport struct {
	sdk.Transport
	mu     sync.Mutex
	conn   sdk.Connection
	marked bool // conn marks its writes (markWrites)
}

func (t *trackedTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err == nil {
		marked := !isStreamableConn(c)
		c = watchTasks(markWrites(c))
		t.mu.Lock()
		t.conn, t.marked = c, marked
		t.mu.Unlock()
	}
	return c, err
}

func (t *trackedTransport) closeConn() {
	t.mu.Lock()
	c := t.conn
	t.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// dial makes one connection attempt, trying each transport the URL allows.
func (c *Connector) dial(ctx context.Context) (*live, error) { return c.dialWith(ctx, c.link.client) }

// dialWith is dial with the SDK client cl: the connector's own, or that of
// one client's upstream session (perclient.go).
func (c *Connector) dialWith(ctx context.Context, cl *sdk.Client) (*live, error) {
	switch {
	case c.o.dialer != nil:
		t, err := c.o.dialer(ctx)
		if err != nil {
			return nil, err
		}
		if iot, ok := t.(*sdk.IOTransport); ok && iot != nil && iot.Reader != nil {
			// Clamp what the server sends (package internal/wire).
			cp := *iot
			cp.Reader = wire.NewClampCloser(iot.Reader, false)
			t = &cp
		}
		return c.handshake(ctx, cl, t, "custom", nil)
	case c.ep.kind == endpointStdio:
		st := &stdioTransport{
			scan:      c,
			cmd:       c.ep.stdio,
			logger:    c.logger,
			maxLine:   c.o.maxMessage,
			terminate: c.o.terminateTimeout,
		}
		l, err := c.handshake(ctx, cl, st, "stdio", st)
		if err != nil {
			st.close()
			if exitErr := st.exitError(); exitErr != nil {
				err = fmt.Errorf("%w (%v)", err, exitErr)
			}
		}
		return l, err
	case c.ep.kind == endpointSSE:
		return c.dialSSE(ctx, cl)
	}
	if c.link.preferSSE.Load() {
		l, err := c.dialSSE(ctx, cl)
		if err == nil || ctx.Err() != nil {
			return l, err
		}
	}
	rec := &atomic.Int32{}
	hc := c.httpClientWith(rec)
	watch := &listenWatch{c: c}
	hc.Transport.(*roundTripper).listen = watch
	t := &sdk.StreamableClientTransport{
		Endpoint:   c.ep.url,
		HTTPClient: hc,
		// A server may end an SSE stream mid-request and expect the client
		// to resume it with Last-Event-ID (SEP-1699): allow a few resumptions.
		// Losing the session for good is still the supervisor's business; a
		// request that finds the session gone makes it reconnect at once.
		MaxRetries:   sseResumeRetries,
		MaxEventSize: c.o.maxMessage,
		OAuthHandler: c.oauthHandler(ctx),
	}
	l, err := c.handshake(ctx, cl, t, "streamable", nil)
	if err == nil {
		c.link.preferSSE.Store(false)
		watch.attach(l)
		return l, nil
	}
	if ctx.Err() != nil || !httpFallbackStatus(int(rec.Load())) {
		return nil, err
	}
	c.logger.Debug("streamable HTTP refused, trying the SSE transport", "status", rec.Load(), "error", err)
	l, sseErr := c.dialSSE(ctx, cl)
	if sseErr != nil {
		return nil, fmt.Errorf("streamable HTTP: %v; SSE: %w", err, sseErr)
	}
	c.link.preferSSE.Store(true)
	return l, nil
}

func (c *Connector) dialSSE(ctx context.Context, cl *sdk.Client) (*live, error) {
	hc := c.httpClientWith(nil)
	if h := c.oauthHandler(ctx); h != nil {
		bt := &oauth.Transport{Handler: h, Base: hc.Transport}
		if u, err := url.Parse(c.ep.url); err == nil {
			bt.Resource = u
		}
		hc.Transport = bt
	}
	t := &sdk.SSEClientTransport{
		Endpoint:     c.ep.url,
		HTTPClient:   hc,
		MaxEventSize: c.o.maxMessage,
	}
	return c.handshake(ctx, cl, &detachedTransport{Transport: t}, "sse", nil)
}

// detachedTransport connects with a context that outlives the connection
// attempt: the SSE transport ties its event stream to the context given to
// Connect, which would end the session with the attempt's timeout. The
// attempt's context still bounds Connect itself.
type detachedTransport struct{ sdk.Transport }

func (t *detachedTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	type result struct {
		c   sdk.Connection
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := t.Transport.Connect(streamCtx)
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			cancel()
			return nil, r.err
		}
		return &cancelConn{Connection: r.c, cancel: cancel}, nil
	case <-ctx.Done():
		cancel()
		if r := <-ch; r.err == nil {
			r.c.Close()
		}
		return nil, ctx.Err()
	}
}

// writeMarker marks each call request it writes as sent (inflight.sent):
// once a request is written it may run, so it is never taken for
// undelivered, whatever the transport (stdio, the legacy SSE transport, an
// OptDialer's); one never marked was never written (live.marksWrites), so
// it may go on the next session. The round tripper marks a streamable
// HTTP POST that broke under way instead.
type writeMarker struct {
	sdk.Connection
}

// markWrites wraps c in a writeMarker, except for the streamable HTTP
// client connection of the SDK, which a wrapper would break (see
// watchTasks) and whose POSTs the round tripper follows instead.
func markWrites(c sdk.Connection) sdk.Connection {
	if isStreamableConn(c) {
		return c
	}
	return &writeMarker{Connection: c}
}

func (c *writeMarker) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && req.IsCall() {
		markSent(ctx)
	}
	return err
}

// cancelConn cancels the context of its stream when closed.
type cancelConn struct {
	sdk.Connection
	cancel context.CancelFunc
}

func (c *cancelConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}

// handshake connects the SDK client cl over t and starts watching the
// session.
func (c *Connector) handshake(ctx context.Context, cl *sdk.Client, t sdk.Transport, kind string, st *stdioTransport) (*live, error) {
	tt := &trackedTransport{Transport: t}
	version := c.askedVersion()
	sess, err := cl.Connect(ctx, tt, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		tt.closeConn()
		c.handshakeFailed(ctx, version)
		return nil, err
	}
	tt.mu.Lock()
	marked := tt.marked
	tt.mu.Unlock()
	l := &live{sess: sess, transport: kind, stdio: st, done: make(chan struct{}), reg: &c.calls, marksWrites: marked}
	go func() {
		l.waitErr = sess.Wait()
		close(l.done)
	}()
	return l, nil
}

// httpClientWith returns the HTTP client for one transport attempt: the
// configured client with a round tripper that adds headers, bounds
// non-streaming bodies, reports broken streams and, when rec is non-nil,
// records the status of the first POST.
func (c *Connector) httpClientWith(rec *atomic.Int32) *http.Client {
	hc := *c.link.httpClient
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = &roundTripper{
		conn:     c,
		base:     base,
		header:   c.o.header,
		maxBody:  int64(c.o.maxMessage),
		status:   rec,
		onBroken: c.suspectCurrent,
	}
	return &hc
}

package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// DefaultMaxClientSessions is the most upstream sessions a connector made
// with OptPerClient keeps open at once, unless ClientSessionLimits.Max
// says otherwise.
const DefaultMaxClientSessions = 100

// ErrTooManyClientSessions, message "unavailable: too many client
// sessions", is wrapped by the error of a call refused because its
// connector already keeps the most upstream sessions OptPerClient allows
// for other clients. It also matches [toolkit.ErrUnavailable].
var ErrTooManyClientSessions = fmt.Errorf("%w: too many client sessions", errs.ErrUnavailable)

// OptPerClient gives each client of an MCP server face (a gateway's
// downstream session, a [bridge.Client]) an upstream session of its own,
// shared out as l says (see ClientSessionLimits; the zero value gives the
// defaults): for a stdio server,
// a process of its own. The session is opened when the client's session
// starts (the server face made with mcpserver.WithClientSessions tells a
// [Delegate], which tells its connectors: see [Connector.ClientStarted]),
// or at the latest at the client's first call, and closed when the
// client's session ends (the server face closes idle sessions) or the
// connector stops; a session the server drops is opened again at the
// client's next call. Nothing of one client's session serves another.
//
// On that session the connector advertises what the client offers:
// roots/list is answered with the client's own roots, asked of the client
// each time, and the client's notifications/roots/list_changed are passed
// on, so a server that takes its directories from its client's roots
// (the reference filesystem server, say) works in each client's own;
// sampling and elicitation requests go to that client (the call they came
// for, else the client's session), so concurrent requests of several
// clients never need telling apart. The connector's own handlers
// (ServerRequests.Sampling, ServerRequests.Elicitation, OptRoots) answer
// what the client cannot.
//
// The connector's own session still runs: the tools, prompts and resources
// listed are its (one listing, however many clients), subscriptions and
// list changes go through it, and in-process calls (no client session,
// no principal) are made on it. The calls of a principal that come
// without a client session (protocol 2026-07-28, a stateless HTTP
// request) share an upstream session of that principal's, never another
// principal's; such calls of an anonymous client are refused with an
// error wrapping ErrNoClientSession. A server that lists differently for
// each client is seen through its shared listing.
//
// The clients of one principal keep at most
// DefaultMaxClientSessionsPerPrincipal sessions, and a session without
// calls closes after DefaultClientSessionIdle (see
// ClientSessionLimits). A call beyond a limit first takes the place of
// an idle session; with none, it is refused at once with an error
// wrapping ErrTooManyClientSessions that names the limit.
//
// Unless OptProtocolVersion says otherwise, such a connector asks for
// StatefulProtocolVersion: a client's roots and the server's requests to
// it belong to sessions, which 2026-07-28 does without.
func OptPerClient(l ClientSessionLimits) Option {
	return func(o *options) error {
		if err := errors.Join(
			errs.AtLeast("OptPerClient: Max", l.Max, 0),
			errs.AtLeast("OptPerClient: PerPrincipal", l.PerPrincipal, 0),
			errs.AtLeast("OptPerClient: Idle", l.Idle, 0),
		); err != nil {
			return err
		}
		o.perClient = cmp.Or(l.Max, o.perClient, DefaultMaxClientSessions)
		setNonZero(&o.clientLimits.PerPrincipal, l.PerPrincipal)
		setNonZero(&o.clientLimits.Idle, l.Idle)
		setNonZero(&o.clientLimits.Leases, l.Leases)
		return nil
	}
}

// perClient is the upstream of a connector made with OptPerClient: the
// calls of each client go on an upstream session of that client's own.
type perClient struct {
	c *Connector
	// dial, when set (OptOAuthPerUser), returns the context a client's
	// session is dialed in: with its user's credentials.
	dial func(ctx context.Context, cl bridge.Client) (context.Context, error)

	max          int
	perPrincipal int           // of the clients of one principal (perclient_limits.go)
	leases       SessionLeases // counts perPrincipal across processes; nil: p.by alone (perclient_leases.go)
	idle         time.Duration // a session without calls is closed after it

	mu          sync.Mutex
	ctx         context.Context // Run's; nil while the connector does not run
	by          map[bridge.Client]*clientUpstream
	sessionless map[string]*userClient // by principal (perclient_sessionless.go)
	opened      atomic.Int64           // sessions opened since the connector was made
	wg          sync.WaitGroup

	warned   time.Time // last "no upstream session" line (warn)
	unwarned int       // refusals not logged since
}

// clientUpstream is the upstream session of one client.
type clientUpstream struct {
	client    bridge.Client
	principal string // the client's, "" when anonymous
	sdk       *sdk.Client
	used      atomic.Int64 // when the last call started (UnixNano of Connector.now)

	// ctx ends when the session closes or the connector stops: what the
	// server's requests wait for (the client's answer) ends with it.
	ctx    context.Context
	cancel context.CancelFunc

	ready chan struct{} // closed once l or err is set
	l     *live
	err   error

	stop      chan struct{} // closed (by end) when the session must close
	stopOnce  sync.Once
	why       string // why stop was closed
	rootsFlip bool   // guarded by rootsMu: the marker root is present
	rootsMu   sync.Mutex

	lease lease // its place in its principal's share across processes (perclient_leases.go)
}

// run starts the per-client sessions' life with Run's ctx; the function
// it returns, when Run ends, closes every one of them and waits until
// they are closed.
func (p *perClient) run(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	p.mu.Lock()
	p.ctx = ctx
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.ctx = nil
		p.mu.Unlock()
		p.endSessionless()
		cancel()
		p.wg.Wait()
	}
}

// ClientStarted opens, in the background, the upstream session of a client
// whose session has just started, so that the server's initialize already
// sees the client's roots. It does nothing unless the connector was made
// with OptPerClient and runs, or when the client has a session already;
// beyond the limit of OptPerClient the client's calls are refused. With
// OptOAuthPerUser it opens only the session of a client whose user holds
// a token already (the others open at the first call, which can ask the
// user). It makes the connector a [bridge.ClientObserver].
func (c *Connector) ClientStarted(_ context.Context, cl bridge.Client) {
	if cl != nil {
		c.up.clientStarted(cl)
	}
}

// clientStarted opens the upstream session of cl in the background.
func (p *perClient) clientStarted(cl bridge.Client) {
	if _, err := p.openClient(cl); err != nil {
		p.warn(p.c, err)
	}
}

// warnEvery is the least time between two log lines saying that clients
// got no upstream session: a flood of sessions beyond the limit makes one
// line a minute, with how many there were.
const warnEvery = time.Minute

// warn logs that a client got no upstream session, at most once every
// warnEvery.
func (p *perClient) warn(c *Connector, err error) {
	p.mu.Lock()
	now := time.Now()
	if !p.warned.IsZero() && now.Sub(p.warned) < warnEvery {
		p.unwarned++
		p.mu.Unlock()
		return
	}
	more := p.unwarned
	p.warned, p.unwarned = now, 0
	p.mu.Unlock()
	args := []any{"error", err}
	if more > 0 {
		args = append(args, "refused_since_last", more)
	}
	c.logger.Warn("no upstream session for a client", args...)
}

var _ bridge.ClientObserver = (*Connector)(nil)

// ClientSessions returns how many upstream sessions of clients
// (OptPerClient) are open or opening, and how many were opened since the
// connector was made.
func (c *Connector) ClientSessions() (open int, opened int64) {
	p := c.clientSessions()
	if p == nil {
		return 0, 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.by), p.opened.Load()
}

// clientOf returns the client whose call ctx is, or nil.
func clientOf(ctx context.Context) bridge.Client {
	cc, ok := toolkit.SessionAs[bridge.ClientCarrier](toolkit.SessionFromContext(ctx))
	if !ok {
		return nil
	}
	return cc.Client()
}

// session returns the upstream session of the client whose call ctx is,
// opened if needed: the one shared by a principal's calls without a
// client session, or, for an in-process call (no client, no principal),
// the connector's own.
func (p *perClient) session(ctx context.Context) (context.Context, *live, error) {
	c := p.c
	cl := clientOf(ctx)
	if cl == nil {
		principal := toolkit.PrincipalFromContext(ctx)
		if principal == "" {
			if s := toolkit.SessionFromContext(ctx); s.ID() != "" || s.ClientInfo() != nil {
				return ctx, nil, fmt.Errorf("%w: server %s keeps an upstream session per client (OptPerClient, per_client) and the call has neither a client session nor a principal to keep it for: connect with a session (a protocol before 2026-07-28) or authenticate", ErrNoClientSession, c.serverName())
			}
			// An in-process call.
			l, err := c.acquire(ctx)
			return ctx, l, err
		}
		// A client without a session (2026-07-28, stateless HTTP): the
		// principal's calls share one upstream session.
		cl = p.sessionlessClient(principal)
	}
	up, err := p.readyClient(ctx, cl)
	if err != nil {
		return ctx, nil, err
	}
	if errors.Is(up.err, ErrTooManyClientSessions) {
		return ctx, nil, up.err
	}
	if up.err != nil {
		return ctx, nil, fmt.Errorf("%w: server %s: the client's session: %v", errs.ErrUnavailable, c.serverName(), up.err)
	}
	return ctx, up.l, nil
}

// again reports false: a request that failed is never sent again for
// the client's sake.
func (p *perClient) again(error) bool { return false }

// readyClient returns the upstream session of cl, opened if needed, once
// it is open or failed to open (its err), or fails when ctx ends first.
func (p *perClient) readyClient(ctx context.Context, cl bridge.Client) (*clientUpstream, error) {
	up, err := p.openClient(cl)
	if err != nil {
		return nil, err
	}
	up.touch(p.c)
	select {
	case <-up.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if up.err == nil {
		// A session opened before its client's principal was known
		// takes its lease at the principal's first call.
		if err := p.holdLease(ctx, up); err != nil {
			p.remove(up)
			up.end("beyond its principal's share")
			return nil, err
		}
	}
	return up, nil
}

// touch records that a call of up's client starts.
func (up *clientUpstream) touch(c *Connector) { up.used.Store(c.now().UnixNano()) }

// openClient returns the upstream session of cl, starting to open it when
// it has none.
func (p *perClient) openClient(cl bridge.Client) (*clientUpstream, error) {
	c := p.c
	p.mu.Lock()
	defer p.mu.Unlock()
	if up := p.by[cl]; up != nil {
		if up.principal == "" {
			if principal := principalOf(cl); principal != "" {
				if err := p.adopt(c, up, principal); err != nil {
					return nil, err
				}
			}
		}
		return up, nil
	}
	if p.ctx == nil {
		return nil, fmt.Errorf("%w: connector %s is not running", errs.ErrClosed, c.label())
	}
	select {
	case <-cl.Done():
		return nil, fmt.Errorf("%w: the client's session has ended", errs.ErrClosed)
	default:
	}
	principal := principalOf(cl)
	if err := p.makeRoom(c, principal); err != nil {
		return nil, err
	}
	up := &clientUpstream{client: cl, principal: principal, ready: make(chan struct{}), stop: make(chan struct{})}
	up.ctx, up.cancel = context.WithCancel(p.ctx)
	up.touch(c)
	up.sdk = p.clientSDK(up)
	p.by[cl] = up
	p.opened.Add(1)
	p.wg.Add(1)
	go p.serveClient(p.ctx, up)
	return up, nil
}

// serveClient opens the upstream session of up and keeps it until its
// client's session ends, the server drops it, a call finds it broken or
// the connector stops; then it closes it (reaping a stdio server).
func (p *perClient) serveClient(ctx context.Context, up *clientUpstream) {
	c := p.c
	defer p.wg.Done()
	defer up.cancel()
	dctx, cancel := context.WithTimeout(ctx, c.o.connectTimeout)
	go func() {
		// A client that leaves while its session opens ends the attempt.
		select {
		case <-up.client.Done():
			cancel()
		case <-dctx.Done():
		}
	}()
	uctx, err := dctx, p.holdLease(dctx, up)
	if err == nil && p.dial != nil {
		uctx, err = p.dial(dctx, up.client)
	}
	var l *live
	if err == nil {
		l, err = c.dialWith(uctx, up.sdk)
	}
	if err == nil {
		c.requestLogLevel(dctx, l)
	}
	cancel()
	up.l, up.err = l, toolkit.RedactError(err)
	close(up.ready)
	if err != nil {
		p.remove(up)
		p.releaseLease(ctx, up)
		if ctx.Err() == nil && (p.dial == nil || !errors.Is(err, ErrAuthorizationPending)) {
			p.warn(c, up.err)
		}
		if c.o.hooks.clientClosed != nil {
			c.o.hooks.clientClosed()
		}
		return
	}
	c.logger.Debug("client's upstream session opened", "transport", l.transport)
	unwatch := up.client.OnRootsChanged(up.rootsChanged)
	idle := time.NewTimer(p.idle)
	defer idle.Stop()
	var renew <-chan time.Time
	if p.leases != nil {
		t := time.NewTicker(clientLeaseTTL / 3)
		defer t.Stop()
		renew = t.C
	}
	var why string
	for why == "" {
		select {
		case <-renew:
			p.renewLease(ctx, up)
		case <-up.client.Done():
			why = "the client's session ended"
		case <-ctx.Done():
			why = "the connector stopped"
		case <-l.done:
			why = "the server closed the session"
		case <-l.exited():
			why = "the server exited"
		case <-up.stop:
			why = up.why
		case <-idle.C:
			if left := p.idleLeft(c, up); left > 0 {
				idle.Reset(left)
			} else {
				why = "no call for the idle time"
			}
		}
	}
	unwatch()
	p.remove(up)
	p.releaseLease(ctx, up)
	up.cancel()
	l.close()
	c.logger.Debug("client's upstream session closed", "reason", why)
	if c.o.hooks.clientClosed != nil {
		c.o.hooks.clientClosed()
	}
}

// remove forgets up, when it is still the session of its client.
func (p *perClient) remove(up *clientUpstream) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.by[up.client] == up {
		delete(p.by, up.client)
	}
}

// lose reports whether l is a client's upstream session, which is then
// closed: the client's next call opens another.
func (p *perClient) lose(l *live) bool {
	p.mu.Lock()
	var found *clientUpstream
	for _, up := range p.by {
		select {
		case <-up.ready:
			if up.l == l {
				found = up
			}
		default:
		}
	}
	if found != nil {
		delete(p.by, found.client)
	}
	p.mu.Unlock()
	if found == nil {
		return false
	}
	found.end("the session broke")
	return true
}

// end closes up's session, for the reason why.
func (up *clientUpstream) end(why string) {
	up.stopOnce.Do(func() {
		up.why = why
		close(up.stop)
	})
}

// rootsMarker is a root the SDK client of a client's upstream session
// holds and drops in turn so that the SDK sends
// notifications/roots/list_changed on that session alone: the connector
// answers roots/list itself, so the SDK client's own roots are never seen.
const rootsMarker = "file:///.toolkit-roots-changed"

// rootsChanged tells up's server that the client's roots changed.
func (up *clientUpstream) rootsChanged() {
	up.rootsMu.Lock()
	defer up.rootsMu.Unlock()
	if up.rootsFlip {
		up.sdk.RemoveRoots(rootsMarker)
	} else {
		up.sdk.AddRoots(&sdk.Root{URI: rootsMarker})
	}
	up.rootsFlip = !up.rootsFlip
}

// clientSDK returns the SDK client of up's upstream session: it
// advertises what up's client offers, and sends that client the server's
// requests.
func (p *perClient) clientSDK(up *clientUpstream) *sdk.Client {
	c := p.c
	caps := up.client.Capabilities()
	if caps == nil {
		caps = &sdk.ClientCapabilities{}
	}
	copts := &sdk.ClientOptions{
		Logger:                      c.logger,
		Capabilities:                &sdk.ClientCapabilities{Extensions: c.clientExtensions(caps)},
		LoggingMessageHandler:       c.handleLog,
		ProgressNotificationHandler: c.handleProgress,
	}
	if caps.Sampling != nil || c.o.sampling != nil {
		copts.CreateMessageHandler = func(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			if req.Params == nil {
				req.Params = new(sdk.CreateMessageParams)
			}
			return answerFor(c, up, ctx, req.Session, kindSampling, req.Params, bridge.ServerRequestHandler.CreateMessage, c.o.sampling)
		}
	}
	if caps.Elicitation != nil || c.o.elicitation != nil {
		copts.ElicitationHandler = func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			if req.Params == nil {
				req.Params = new(sdk.ElicitParams)
			}
			return answerFor(c, up, ctx, req.Session, kindElicitation, req.Params, bridge.ServerRequestHandler.Elicit, c.o.elicitation)
		}
	}
	roots := caps.RootsV2 != nil || c.o.roots != nil
	if roots {
		copts.Capabilities.RootsV2 = &sdk.RootCapabilities{ListChanged: true}
	}
	cl := sdk.NewClient(c.link.impl, copts)
	cl.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			switch method {
			case kindRoots.method:
				r, ok := req.(*sdk.ListRootsRequest)
				if !roots || !ok {
					return nil, c.refuse(kindRoots, 0)
				}
				if r.Params == nil {
					r.Params = new(sdk.ListRootsParams)
				}
				var own func(context.Context, *sdk.ListRootsParams) (*sdk.ListRootsResult, error)
				if c.o.roots != nil {
					own = c.ownRoots
				}
				return answerFor(c, up, ctx, r.Session, kindRoots, r.Params, bridge.RootsLister.ListRoots, own)
			case kindSampling.method:
				if copts.CreateMessageHandler == nil {
					return nil, c.refuse(kindSampling, 0)
				}
			case kindElicitation.method:
				if copts.ElicitationHandler == nil {
					return nil, c.refuse(kindElicitation, 0)
				}
			}
			return next(ctx, method, req)
		}
	})
	return cl
}

// clientRequestTimeout bounds a request of a client's upstream server that
// goes to the client outside any of its calls.
const clientRequestTimeout = 5 * time.Minute

// answerFor answers a request of the server on cs, the upstream session
// of up's client: for sampling and elicitation the client's call the
// request came for answers first (over HTTP it travels on that call's
// stream), else the only call of the client in flight there; then (and
// for roots, always) the client itself; when the client cannot
// (an error wrapping toolkit.ErrNotImplemented), own answers (nil when the
// connector has no handler of its own). Every call on cs is the client's,
// so a request never needs telling apart from another client's.
func answerFor[PP sdk.Params, H, R any](c *Connector, up *clientUpstream, ctx context.Context, cs *sdk.ClientSession, kind *requestKind, params PP, ask func(H, context.Context, PP) (R, error), own func(context.Context, PP) (R, error)) (R, error) {
	// Nothing waits for an answer longer than the session lives.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(up.ctx, cancel)()
	var sess toolkit.Session
	in := c.untag(params)
	leave, err := c.enterServerRequest(ctx, in, kind.what)
	if err != nil {
		var zero R
		return zero, err
	}
	defer leave()
	switch {
	case kind == kindRoots:
		// Roots are the client's, not a call's: a server asks for them
		// when it likes, and a call that ends meanwhile would cancel the
		// question.
	case in != nil:
		sess = in.session
	default:
		if s, n := c.calls.soleOn(cs); n == 1 {
			sess = s
		}
	}
	if h, ok := toolkit.SessionAs[H](sess); ok {
		var r R
		if r, err = ask(h, ctx, params); err == nil || !errors.Is(err, toolkit.ErrNotImplemented) {
			return r, err
		}
	}
	if h, ok := any(up.client).(H); ok {
		actx, cancel := context.WithTimeout(ctx, clientRequestTimeout)
		defer cancel()
		var r R
		if r, err = ask(h, actx, params); err == nil || !errors.Is(err, toolkit.ErrNotImplemented) {
			return r, err
		}
	}
	if own != nil {
		return own(ctx, params)
	}
	if err != nil {
		c.hint(kind, fmt.Sprintf("the client cannot answer %s requests: %v", kind.what, err))
		var zero R
		return zero, err
	}
	var zero R
	return zero, c.refuse(kind, 0)
}

// requestLogLevel asks the server of l for OptLogLevel's log messages, as the
// connector's own session does, when the server logs.
func (c *Connector) requestLogLevel(ctx context.Context, l *live) {
	init := l.sess.InitializeResult()
	if c.o.logLevel == "" || init == nil || init.Capabilities == nil || init.Capabilities.Logging == nil {
		return
	}
	if err := l.sess.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: sdk.LoggingLevel(c.o.logLevel)}); err != nil {
		c.logger.Debug("server refused the log level", "error", err)
	}
}

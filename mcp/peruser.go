package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// DefaultUserAuthorizationWait is how long, at most, a call of a connector
// made with OptOAuthPerUser waits for its user to authorize access
// through URL elicitation, unless Timeouts.UserAuthorization says otherwise
// (the call's own context may end it sooner).
const DefaultUserAuthorizationWait = 5 * time.Minute

// ErrNoUser, message "denied by policy: no authenticated user to act
// for", is wrapped by the error of a call refused by a connector made
// with OptOAuthPerUser because its caller is no
// authenticated user: an anonymous client, or a call without a client
// session (in-process, stateless HTTP). Such a call never falls back to
// other credentials. It matches toolkit.ErrDenied.
var ErrNoUser = fmt.Errorf("%w: no authenticated user to act for", errs.ErrDenied)

// AuthorizationRequiredError is the error of a call of a connector made
// with OptOAuthPerUser whose user must authorize access first but whose
// client cannot be asked to open a URL (it lacks URL elicitation, MCP
// 2025-11-25). It wraps ErrAuthorizationPending and the JSON-RPC error
// the spec names for it, URL elicitation required (code -32042,
// sdk.CodeURLElicitationRequired, with the elicitation in its data), which
// an MCP server face passes on to the client as the call's error: the
// client opens the URL, and calls again once the user has authorized.
type AuthorizationRequiredError struct {
	// Elicitation is the URL-mode elicitation: the authorization URL and
	// its elicitation ID.
	Elicitation *sdk.ElicitParams
	rpc         error
}

// Error implements error; it never quotes the URL.
func (e *AuthorizationRequiredError) Error() string {
	return "authorization pending: the user must authorize access at the URL given with the error (URL elicitation required)"
}

// Unwrap returns ErrAuthorizationPending and the JSON-RPC error.
func (e *AuthorizationRequiredError) Unwrap() []error {
	return []error{ErrAuthorizationPending, e.rpc}
}

// UserAuthorizationCode is the flow of OptOAuthPerUser that makes an HTTP
// connector act upstream with each user's own OAuth credentials,
// authorized with the authorization code flow of cfg (see oauth.Config),
// for a program that serves many users (a
// gateway): each principal of its clients (toolkit.PrincipalFromContext
// of their calls; bridge.ClientPrincipal of their sessions) has its own
// oauth.Handler and tokens, kept by (principal, issuer, resource) in
// cfg.Store, which must then be an oauth.PrincipalTokenStore
// (oauth.FileTokenStore is one): a restart keeps each user's token. The
// sessions of one principal share one authorization; no token of one
// principal ever serves another. OptOAuthPerUser implies OptPerClient
// (with its default bounds unless OptPerClient gives them): each client's
// calls go on
// an upstream session of its own, authorized as its user.
//
// A user with no token yet is asked to authorize on their own session,
// through URL-mode elicitation (MCP 2025-11-25): the connector sends the
// authorization URL to the client that called, as an elicitation/create
// request of mode "url", and the call waits (at most
// Timeouts.UserAuthorization, and its own context) until the authorization
// server's redirect reaches cb at cfg's redirect URL, which is
// cb.RedirectURL (cfg.RedirectURL must be empty or the same;
// cfg.Authorize must be nil: the connector asks). The program serves cb
// at that URL's path. Once authorized, the client is sent
// notifications/elicitation/complete and the call goes on. A client that
// does not offer URL elicitation gets an AuthorizationRequiredError at
// once (JSON-RPC error -32042, carrying the elicitation through a server
// face): it opens the URL itself and calls again. A user who declines the
// elicitation fails the authorization (its retry waits as oauth.Handler
// says). Replicas of a program that share cfg.Store and cfg.Flights
// (oauth.FlightRegistry) ask a user once between them: a replica whose
// user is asked already by another sends the same URL, and goes on once
// the token that authorization brings is in cfg.Store. A call whose
// caller is no authenticated user fails with ErrNoUser. A client's
// upstream session opens at its first call. The calls of a user that
// come without a client session of their own (a client of protocol
// 2026-07-28, which keeps none; a stateless HTTP request) share one
// upstream session of that user, closed ten minutes after the last of
// them started; the user is asked through the call.
//
// The connector's own session (listing, subscriptions, list changes, and
// the calls of nobody's client session, which are refused) keeps the
// connector's own credentials: none, or those of OptOAuth and its kin, or
// OptHeader.
func UserAuthorizationCode(cfg oauth.Config, cb *oauth.Callback) (UserFlow, error) {
	switch {
	case cb == nil:
		return nil, fmt.Errorf("%w: UserAuthorizationCode: nil callback", errs.ErrBadParameter)
	case cfg.Authorize != nil:
		return nil, fmt.Errorf("%w: UserAuthorizationCode: Config.Authorize must be nil: the connector asks each user", errs.ErrBadParameter)
	case cfg.RedirectURL != "" && cfg.RedirectURL != cb.RedirectURL():
		return nil, fmt.Errorf("%w: UserAuthorizationCode: Config.RedirectURL is not the callback's", errs.ErrBadParameter)
	}
	cfg.RedirectURL = cb.RedirectURL()
	check := cfg
	check.Authorize = func(context.Context, *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) { return nil, nil }
	if _, err := oauth.AuthorizationCode(check); err != nil {
		return nil, oauthOptionError("UserAuthorizationCode", err)
	}
	if cfg.Store != nil {
		if _, ok := cfg.Store.(oauth.PrincipalTokenStore); !ok {
			return nil, fmt.Errorf("%w: UserAuthorizationCode: the token store %T keeps no tokens per principal (see oauth.PrincipalTokenStore)", errs.ErrBadParameter, cfg.Store)
		}
	}
	return func(u *User) (*oauth.Flow, error) {
		c := cfg
		c.Authorize = u.AuthorizeByURL(cb)
		return oauth.AuthorizationCode(c)
	}, nil
}

// UserFlow returns the OAuth flow of one user of a connector made with
// OptOAuthPerUser.
type UserFlow func(u *User) (*oauth.Flow, error)

// OptOAuthPerUser makes an HTTP connector act upstream as each user of a
// program that serves many (a gateway), with that user's own OAuth
// credentials: flow returns the OAuth flow of one user, called once per
// principal, the first time one of the user's clients needs an upstream
// session; it is given with the error of its constructor, as in
// OptOAuthPerUser(UserTokenExchange(cfg)): UserAuthorizationCode (each
// user authorizes through URL elicitation), UserTokenExchange and
// UserEnterprise (the user's own token is exchanged), or a function of the
// application's own (with a nil error). A non-nil err makes New fail with
// it, naming the option.
//
// Each principal of its clients (toolkit.PrincipalFromContext of their
// calls; bridge.ClientPrincipal of their sessions) has its own
// oauth.Handler and tokens, stored under the principal (see
// oauth.HandlerConfig.Principal); no token of one principal ever serves
// another. A flow that asks the user to authorize at a URL uses
// [User.AuthorizeByURL]; others need only [User.Principal] or
// [User.SubjectToken]. A flow that fails to be made fails the user's calls
// with its error. It implies OptPerClient (with its default bounds unless
// OptPerClient gives them): each client's calls go on an upstream session
// of their own, authorized as their user. A call whose caller is no
// authenticated user fails with ErrNoUser.
//
// The connector's own session (listing, subscriptions, list changes, and
// the calls of nobody's client session, which are refused) keeps the
// connector's own credentials: none, or those of OptOAuth, or OptHeader.
func OptOAuthPerUser(flow UserFlow, err error) Option {
	return func(o *options) error {
		if err == nil && flow == nil {
			err = fmt.Errorf("%w: nil flow", errs.ErrBadParameter)
		}
		if err != nil {
			return oauthOptionError("OptOAuthPerUser", err)
		}
		o.perUser = flow
		if o.perClient == 0 {
			o.perClient = DefaultMaxClientSessions
		}
		return nil
	}
}

// perUser is the upstream of a connector made with OptOAuthPerUser:
// the calls of each client go on an upstream session of that client's
// own (clients), dialed with the credentials of the client's user.
type perUser struct {
	c       *Connector
	clients *perClient
	flow    UserFlow
	wait    time.Duration

	mu    sync.Mutex
	users map[string]*User
}

// User is one principal of a connector made with OptOAuthPerUser or
// OptOAuthPerUser: its flow is made for it, its tokens and
// authorizations are its own.
type User struct {
	principal string
	c         *Connector
	flow      UserFlow

	once sync.Once
	h    *oauth.Handler
	err  error // the flow could not be made

	mu      sync.Mutex
	pending *urlRequest   // the URL the user is asked to open, while asked
	changed chan struct{} // closed and replaced when ask changes
	bearer  string        // the token of the user's latest call; never logged (peruser_exchange.go)
}

// urlRequest is a URL the user is asked to open to authorize access.
type urlRequest struct {
	params   *sdk.ElicitParams
	redirect *oauth.Expected // its redirect (nil: another replica's); once it came, nobody need open the URL
	done     chan struct{}   // closed when the user no longer needs to open it
	cancel   context.CancelCauseFunc

	mu       sync.Mutex
	elicited []bridge.Client // asked; told when it completes
}

// errDeclined ends the authorization of a user who declined to open the
// URL.
var errDeclined = errors.New("the user declined to authorize access")

// Principal returns the user's principal.
func (u *User) Principal() string { return u.principal }

// AuthorizeByURL returns an auth.AuthorizationCodeFetcher (for
// oauth.Config.Authorize) that asks the user to open the authorization
// URL through URL-mode elicitation on their own session, as described at
// OptOAuthPerUser, and returns the code of the redirect that reaches cb
// (cb.RedirectURL must be the flow's redirect URL). It fails when cb
// already waits for as many authorizations as it may, when the user
// declines, or when ctx ends.
func (u *User) AuthorizeByURL(cb *oauth.Callback) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		// The redirect of another replica's authorization is that
		// replica's: nobody waits for it here.
		following := oauth.Follows(ctx)
		var e *oauth.Expected
		if !following {
			var err error
			if e, err = cb.Expect(u.principal, args.URL); err != nil {
				return nil, err
			}
			defer e.Close()
		}
		wctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		ask := &urlRequest{
			params: &sdk.ElicitParams{
				Mode:          "url",
				Message:       fmt.Sprintf("Authorize access to %s: open the URL and sign in.", u.c.serverName()),
				URL:           args.URL,
				ElicitationID: newElicitationID(),
			},
			redirect: e,
			done:     make(chan struct{}),
			cancel:   cancel,
		}
		u.setURLRequest(ask)
		var res *auth.AuthorizationResult
		var err error
		if following {
			<-wctx.Done()
			err = context.Cause(wctx)
		} else {
			res, err = e.Wait(wctx)
		}
		if h := u.c.o.hooks.redirectTaken; h != nil && err == nil {
			h()
		}
		u.setURLRequest(nil)
		close(ask.done)
		if following && u.authorized() {
			// The other replica's authorization brought the token.
			ask.complete(ctx)
		}
		if err != nil {
			if c := context.Cause(wctx); c != nil && errors.Is(c, errDeclined) {
				return nil, errDeclined
			}
			return nil, err
		}
		ask.complete(ctx)
		return res, nil
	}
}

// newElicitationID returns a random elicitation ID.
func newElicitationID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// complete tells the clients asked that the elicitation has completed.
func (a *urlRequest) complete(ctx context.Context) {
	a.mu.Lock()
	asked := a.elicited
	a.mu.Unlock()
	for _, cl := range asked {
		ec, ok := cl.(bridge.ElicitationCompleter)
		if !ok {
			continue
		}
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = ec.ElicitationComplete(nctx, a.params.ElicitationID)
		cancel()
	}
}

// markElicited notes that cl is asked, and reports whether nobody was:
// one URL is sent once, to one of the user's clients; the calls of the
// others wait for it.
func (a *urlRequest) markElicited(cl bridge.Client) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.elicited) > 0 {
		return false
	}
	a.elicited = append(a.elicited, cl)
	return true
}

// unmark forgets that cl was asked: its elicitation failed.
func (a *urlRequest) unmark(cl bridge.Client) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.elicited = slices.DeleteFunc(a.elicited, func(c bridge.Client) bool { return c == cl })
}

// setURLRequest sets what the user is asked to open, and wakes those waiting.
func (u *User) setURLRequest(a *urlRequest) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.pending = a
	close(u.changed)
	u.changed = make(chan struct{})
}

// current returns what the user is asked to open, and a channel closed
// when that changes.
func (u *User) current() (*urlRequest, <-chan struct{}) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.pending, u.changed
}

// authorized reports whether the user's OAuth handler holds a token.
func (u *User) authorized() bool {
	u.mu.Lock()
	h := u.h
	u.mu.Unlock()
	return h != nil && h.Authorized()
}

// handler returns the user's OAuth handler, made at the first call.
func (u *User) handler() (*oauth.Handler, error) {
	u.once.Do(func() {
		c := u.c
		flow, err := u.flow(u)
		if err != nil {
			u.err = fmt.Errorf("%w: server %s: the user's OAuth flow: %v", errs.ErrBadParameter, c.serverName(), err)
			return
		}
		h := oauth.NewHandler(context.Background(), flow, oauth.HandlerConfig{
			Resource:   c.url,
			Principal:  u.principal,
			Logger:     c.logger,
			HTTPClient: c.link.httpClient,
			Allow:      c.o.oauthAllow,
		})
		u.mu.Lock()
		u.h = h
		u.mu.Unlock()
	})
	return u.h, u.err
}

// userOf returns the user of cl, or an error wrapping ErrNoUser.
func (p *perUser) userOf(c *Connector, cl bridge.Client) (*User, error) {
	principal := ""
	if cp, ok := cl.(bridge.ClientPrincipal); ok && cl != nil {
		principal = cp.Principal()
	}
	if principal == "" {
		return nil, fmt.Errorf("%w: server %s acts with each user's own credentials, and the client is anonymous", ErrNoUser, c.serverName())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	u := p.users[principal]
	if u == nil {
		u = &User{principal: principal, c: c, flow: p.flow, changed: make(chan struct{})}
		p.users[principal] = u
	}
	return u, nil
}

// authorized reports whether the user of cl holds a token: its session
// may open at once.
func (p *perUser) authorized(c *Connector, cl bridge.Client) bool {
	u, err := p.userOf(c, cl)
	if err != nil {
		return false
	}
	h, err := u.handler()
	return err == nil && h.Authorized()
}

// stop ends the users' authorizations in flight.
func (p *perUser) stop() {
	p.mu.Lock()
	hs := make([]*oauth.Handler, 0, len(p.users))
	for _, u := range p.users {
		u.mu.Lock()
		if u.h != nil {
			hs = append(hs, u.h)
		}
		u.mu.Unlock()
	}
	p.mu.Unlock()
	for _, h := range hs {
		h.Stop()
	}
}

// userHandlerKey is the context key of the OAuth handler a client's
// upstream session dials with.
type userHandlerKey struct{}

// userHandlerOf returns the OAuth handler of the user ctx dials for, or
// nil.
func userHandlerOf(ctx context.Context) *oauth.Handler {
	h, _ := ctx.Value(userHandlerKey{}).(*oauth.Handler)
	return h
}

// dialContext returns ctx for dialing the upstream session of cl: with
// its user's OAuth handler, never waiting for the user (the call waits,
// in acquireUser).
func (p *perUser) dialContext(ctx context.Context, cl bridge.Client) (context.Context, error) {
	u, err := p.userOf(p.c, cl)
	if err != nil {
		return nil, err
	}
	h, err := u.handler()
	if err != nil {
		return nil, err
	}
	return oauth.NoWait(context.WithValue(ctx, userHandlerKey{}, h)), nil
}

// session returns the upstream session of the client whose call ctx is
// (the one shared by a principal's calls without a client session),
// authorized as its user, and ctx made so that a token refused
// mid-session fails the request at once rather than waiting for the user
// (again sends it once more, after the user was asked).
func (p *perUser) session(ctx context.Context) (context.Context, *live, error) {
	ctx = oauth.NoWait(ctx)
	cl := clientOf(ctx)
	if cl == nil {
		if principal := toolkit.PrincipalFromContext(ctx); principal != "" {
			cl = p.clients.sessionlessClient(principal)
		}
	}
	l, err := p.acquire(ctx, cl)
	return ctx, l, err
}

// again reports whether a request that failed with err goes once more:
// it was refused before the server saw it, for the user's authorization,
// which the next session asks for.
func (p *perUser) again(err error) bool { return errors.Is(err, ErrAuthorizationPending) }

// lose closes l when it is a client's upstream session.
func (p *perUser) lose(l *live) bool { return p.clients.lose(l) }

// run starts the clients' sessions with Run's ctx; the function it returns
// ends the users' authorizations in flight and the sessions.
func (p *perUser) run(ctx context.Context) func() {
	stop := p.clients.run(ctx)
	return func() {
		p.stop()
		stop()
	}
}

// clientStarted opens the upstream session of cl when its user holds a
// token: the others authorize at their first call, which can ask them.
func (p *perUser) clientStarted(cl bridge.Client) {
	if p.authorized(p.c, cl) {
		p.clients.clientStarted(cl)
	}
}

// acquire returns the upstream session of cl, the client of a call
// made in ctx, authorized as its user: when the user must authorize
// first, the client is asked (or the call fails with an
// AuthorizationRequiredError), and the call waits.
func (p *perUser) acquire(ctx context.Context, cl bridge.Client) (*live, error) {
	c := p.c
	if cl == nil {
		// A call with a principal has a client (session).
		return nil, fmt.Errorf("%w: server %s acts with each user's own credentials, and the call has no client session nor principal", ErrNoUser, c.serverName())
	}
	u, err := p.userOf(c, cl)
	if err != nil {
		return nil, err
	}
	if p := toolkit.PrincipalFromContext(ctx); p != "" && p != u.principal {
		// A server face binds a session to its principal: never act for
		// one with the credentials of another.
		return nil, fmt.Errorf("%w: server %s: the call's principal is not its session's", ErrNoUser, c.serverName())
	}
	u.noteBearer(ctx)
	h, err := u.handler()
	if err != nil {
		return nil, err
	}
	for try := 0; ; try++ {
		var l *live
		if _, perr := h.Pending(); perr == nil {
			up, err := p.clients.readyClient(ctx, cl)
			if err != nil {
				return nil, err
			}
			if up.err == nil {
				l = up.l
			} else if _, perr := h.Pending(); perr == nil || try >= 2 {
				return nil, fmt.Errorf("%w: server %s: the client's session: %w", errs.ErrUnavailable, c.serverName(), unwired(up.err))
			}
		}
		if l != nil {
			return l, nil
		}
		if try >= 2 {
			_, perr := h.Pending()
			return nil, fmt.Errorf("%w: server %s", perr, c.serverName())
		}
		if err := p.awaitUser(ctx, u, h, cl); err != nil {
			return nil, err
		}
	}
}

// noteBearer keeps the bearer token of the user's call made in ctx, when
// the call's principal is the user: it replaces the one kept.
func (u *User) noteBearer(ctx context.Context) {
	if toolkit.PrincipalFromContext(ctx) != u.principal {
		return
	}
	cc, ok := toolkit.SessionAs[bridge.CallCredentials](toolkit.SessionFromContext(ctx))
	if !ok {
		return
	}
	tok := cc.BearerToken()
	if tok == "" {
		return
	}
	u.mu.Lock()
	u.bearer = tok
	u.mu.Unlock()
}

// awaitUser waits until the user of cl is no longer asked to authorize:
// it asks the client to open the URL (unless another client of the user
// was asked already: one URL per authorization), or fails
// with an AuthorizationRequiredError when the client cannot be asked, or
// with the pending authorization's error after a failed one.
func (p *perUser) awaitUser(ctx context.Context, u *User, h *oauth.Handler, cl bridge.Client) error {
	c := p.c
	timer := time.NewTimer(p.wait)
	defer timer.Stop()
	for {
		ask, changed := u.current()
		if ask == nil {
			pending, perr := h.Pending()
			var pe *oauth.PendingError
			switch {
			case perr == nil:
				return nil
			case errors.As(perr, &pe) && !pe.RetryAt.IsZero():
				// A failed authorization is waited out.
				return fmt.Errorf("%w: server %s", perr, c.serverName())
			}
			select {
			case <-changed:
			case <-pending:
			case <-ctx.Done():
				return fmt.Errorf("server %s: waiting for the user to authorize: %w", c.serverName(), context.Cause(ctx))
			case <-timer.C:
				return fmt.Errorf("%w: server %s: still waiting for the user to authorize", perr, c.serverName())
			}
			continue
		}
		// Once the redirect came, the user has opened the URL: the call
		// waits for the flow to end, nobody is asked again.
		switch {
		case ask.redirect.Arrived():
		case !urlCapable(ctx, cl):
			p := *ask.params
			return &AuthorizationRequiredError{Elicitation: &p, rpc: sdk.URLElicitationRequiredError([]*sdk.ElicitParams{&p})}
		case ask.markElicited(cl):
			if err := p.elicitURL(ctx, cl, ask); err != nil {
				if !errors.Is(err, errDeclined) {
					// Another call may ask again.
					ask.unmark(cl)
				}
				return err
			}
		}
		if c.o.hooks.userWaiting != nil {
			c.o.hooks.userWaiting()
		}
		select {
		case <-ask.done:
		case <-ctx.Done():
			return fmt.Errorf("server %s: waiting for the user to authorize: %w", c.serverName(), context.Cause(ctx))
		case <-timer.C:
			return fmt.Errorf("%w: server %s: still waiting for the user to authorize", ErrAuthorizationPending, c.serverName())
		}
	}
}

// urlCapable reports whether the client of a call made in ctx, whose
// lasting session (if any) is cl, offers URL elicitation.
func urlCapable(ctx context.Context, cl bridge.Client) bool {
	caps := toolkit.SessionFromContext(ctx).Capabilities()
	if caps == nil {
		caps = cl.Capabilities()
	}
	return caps != nil && caps.Elicitation != nil && caps.Elicitation.URL != nil
}

// elicitURL asks cl, through the call of ctx when it can, else through
// the client's session, to open the URL of ask; a user who declines ends
// the authorization.
func (pu *perUser) elicitURL(ctx context.Context, cl bridge.Client, ask *urlRequest) error {
	c := pu.c
	p := *ask.params
	var res *sdk.ElicitResult
	err := error(toolkit.ErrNotImplemented)
	if h, ok := toolkit.SessionAs[bridge.ServerRequestHandler](toolkit.SessionFromContext(ctx)); ok {
		res, err = h.Elicit(ctx, &p)
	}
	if errors.Is(err, toolkit.ErrNotImplemented) {
		res, err = cl.Elicit(ctx, &p)
	}
	if err != nil {
		var we *jsonrpc.Error
		if errors.As(err, &we) || errors.Is(err, toolkit.ErrNotImplemented) {
			// The client cannot be asked: it opens the URL itself.
			return &AuthorizationRequiredError{Elicitation: &p, rpc: sdk.URLElicitationRequiredError([]*sdk.ElicitParams{&p})}
		}
		return fmt.Errorf("%w: server %s: asking the user to authorize: %v", ErrAuthorizationPending, c.serverName(), err)
	}
	if res == nil || res.Action != "accept" {
		ask.cancel(errDeclined)
		return fmt.Errorf("%w: server %s: %w", ErrAuthorizationPending, c.serverName(), errDeclined)
	}
	return nil
}

// UserAuthorizations counts the users of a connector made with
// OptOAuthPerUser by the state of their
// authorization: those that hold a token, those asked to authorize now
// (or whose token is being exchanged), and those whose last authorization
// or exchange failed (the next attempt waits).
// Users seen but in none of these states are not counted. It names
// nobody and shows no token.
func (c *Connector) UserAuthorizations() (authorized, pending, failed int) {
	p, ok := c.up.(*perUser)
	if !ok {
		return 0, 0, 0
	}
	p.mu.Lock()
	users := make([]*User, 0, len(p.users))
	for _, u := range p.users {
		users = append(users, u)
	}
	p.mu.Unlock()
	for _, u := range users {
		u.mu.Lock()
		h := u.h
		u.mu.Unlock()
		if h == nil {
			continue
		}
		_, err := h.Pending()
		exchanging, exchangeFailed := h.Exchanges()
		var pe *oauth.PendingError
		switch {
		case errors.As(err, &pe) && !pe.RetryAt.IsZero():
			failed++
		case err != nil:
			pending++
		case h.Authorized():
			authorized++
		case exchanging:
			pending++
		case exchangeFailed:
			failed++
		}
	}
	return authorized, pending, failed
}

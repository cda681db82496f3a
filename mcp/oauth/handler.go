package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/llmkit/toolkit/internal/errs"
)

// ErrAuthorizationPending, message "unavailable: waiting for the user to
// authorize access", is wrapped by the error of a request that cannot be
// sent because an authorization is pending: the user is being asked to
// authorize access, or a failed authorization is being waited out (see
// [PendingError], [Handler.Pending]). A connector fails its calls with it
// at once rather than making them wait for a person. Test with errors.Is;
// it also matches toolkit.ErrUnavailable.
var ErrAuthorizationPending = fmt.Errorf("%w: waiting for the user to authorize access", errs.ErrUnavailable)

// HandlerConfig is what a [Handler] needs from the program that uses it.
type HandlerConfig struct {
	// Resource is the URL of the MCP server whose requests the handler
	// authorizes: the protected resource. Tokens are stored under it.
	Resource string
	// Principal, when set, is the user the handler acts for, one of
	// several a program acts for each with their own tokens: the handler's
	// tokens are stored under it too, and its authorizations are its own
	// (one at a time per resource, store and principal). Its flow's
	// [Config.Store], if any, must then be a [PrincipalTokenStore], or
	// every request fails with an error wrapping toolkit.ErrBadParameter:
	// a store that cannot keep users apart would hand one user's token to
	// another. Empty: the program's own tokens.
	Principal string
	// Logger receives what the handler does, never a token (nil
	// discards).
	Logger *slog.Logger
	// HTTPClient makes the requests to the authorization server and the
	// metadata requests, unless [Config.HTTPClient] is set (default: a
	// client with http.DefaultTransport).
	HTTPClient *http.Client
	// Allow names the destinations the flow's requests may reach although
	// they are not public https ones (see [ErrDestinationRefused]); the
	// protected resource's own origin needs no entry. Nil allows none.
	Allow *AllowList
	// OnWait, when set, is called when the user is asked to authorize,
	// with a line saying so (naming the authorization server's host), and
	// returns the function called once the user answered.
	OnWait func(ctx context.Context, status string) (done func())
	// OnChange, when set, is called (from any goroutine, and must not
	// block) after what [Handler.Pending] reports may have changed: the
	// user is asked, answered, an authorization ended, the wait after a
	// failed one is over.
	OnChange func()
}

// Handler is an auth.OAuthHandler that runs a [Flow] for one protected
// resource, for the SDK's streamable HTTP transport (its OAuthHandler) or
// a [Transport]. Around the SDK's handlers it adds:
//
//   - One authorization at a time for the resource and its token store,
//     across the process. A request that needs an authorization while
//     one is in flight joins it and uses its token, unless the user is
//     being asked: then it fails at once with a [PendingError]. The
//     authorization runs on its own, bounded to ten minutes, whatever
//     becomes of the request that started it (which waits for it, within
//     its context, unless sent with [NoWait]); [Handler.Stop] ends it.
//     One authorization asks the user once, with one URL; the replicas
//     of a fleet that share [Config.Flights] ask once between them.
//   - Failed authorizations are retried no sooner than one second after
//     the first failure, doubling with each further failure up to five
//     minutes, or later when the authorization server asked for it with
//     Retry-After (on 429 Too Many Requests or 503 Service Unavailable,
//     up to an hour). Meanwhile requests fail at once with a
//     [PendingError]; [Handler.Pending] and [HandlerConfig.OnChange]
//     tell the application.
//   - Tokens that end are renewed or asked for again (authorization
//     code flow): a token is refreshed ten seconds before it expires and,
//     once, when the server answers 401 to it; a token that expired
//     without a refresh token, whose refresh failed, or that the server
//     refuses after a refresh (revoked) is dropped, and the server's 401
//     starts a new authorization, reported with the reason.
//   - Dynamic client registration once per authorization server and
//     redirect URI, kept with the tokens (see [RegistrationStore]), with
//     the token endpoint authentication method the server supports.
//   - Tokens kept in a [TokenStore], and errors that never quote a token
//     or an authorization server's answer ([ServerError]).
//
// Every request of the flow (metadata discovery, registration, token
// requests, refreshes) goes only to public https destinations — checked
// on the URL and again on the address the connection is made to — unless
// it goes to the protected resource's own origin (scheme, host and port)
// or [HandlerConfig.Allow] names it; others fail with
// [ErrDestinationRefused], and so does the authorization that needed
// them. Such a refusal is logged at warn level. The requests of a flow
// made with [FromHandler] are its handler's own, and not checked.
type Handler struct {
	inner    auth.OAuthHandler
	err      error // the handler could not be made
	store    TokenStore
	resource string
	logger   *slog.Logger
	clock    clock
	key      gateKey // of its gate (flight.go)

	principal string // HandlerConfig.Principal

	legacy *legacyDiscovery // AuthorizationCode: the 2025-03-26 fallback
	reg    *registrar       // AuthorizationCode with dynamic registration

	refused atomic.Pointer[error] // the last request refused (guard.go)

	issuer atomic.Pointer[string]       // of the metadata fetched last (tokens.go)
	owns   bool                         // the handler keeps the tokens (authorization code flow)
	ts     atomic.Pointer[savingSource] // its token, when it owns them
	reason atomic.Pointer[string]       // why the next authorization is needed
	// dead is the access token the server refused last, which a stored
	// token never brings back (tokens.go: stored).
	dead   atomic.Pointer[string]
	metaMu sync.Mutex                     // guards meta
	meta   map[string]*authServerMetadata // by registration endpoint

	onWait   func(ctx context.Context, status string) (done func())
	onChange func()
	shared   FlightRegistry // Config.Flights (flight_shared.go)

	mu      sync.Mutex
	flights map[*flight]bool // those it runs
}

// NewHandler returns the handler that runs f for the resource of hc. It
// loads the token stored for the resource, if any (ctx bounds that);
// nothing else happens before the first request is refused.
func NewHandler(ctx context.Context, f *Flow, hc HandlerConfig) *Handler {
	logger := hc.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	client := hc.HTTPClient
	if f.cfg != nil && f.cfg.HTTPClient != nil {
		client = f.cfg.HTTPClient
	}
	if client == nil {
		client = &http.Client{}
	}
	h := &Handler{resource: hc.Resource, logger: logger, clock: realClock{}, onWait: hc.OnWait, onChange: hc.OnChange, flights: map[*flight]bool{}}
	h.principal = hc.Principal
	allow := hc.Allow
	if f.enterprise != nil {
		// The IdP is the application's choice, not the server's.
		allow = allow.with(f.enterprise.IdPIssuer, f.enterprise.IdPTokenURL)
	}
	client = guardClient(client, hc.Resource, allow, h.noteRefused)
	switch {
	case f.handler != nil:
		h.inner = f.handler
	case f.enterprise != nil:
		h.inner = newSubjectHandler(&enterpriseFlow{cfg: f.enterprise}, hc.Resource, client, h.clockOf, f.enterprise.Timeout, f.enterprise.MaxSubjects, h.exchangeFailed)
	case f.exchange != nil:
		h.inner = newSubjectHandler(exchangeFlow{cfg: f.exchange}, hc.Resource, client, h.clockOf, f.exchange.Timeout, f.exchange.MaxSubjects, h.exchangeFailed)
	case f.clientCreds != nil:
		hc := client
		if f.assertion != nil {
			hc = f.assertion.client(hc)
		}
		inner, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{Credentials: f.clientCreds, HTTPClient: hc})
		if err != nil { // validated by ClientCredentials
			h.err = err
		}
		h.inner = inner
	default:
		cfg := f.cfg
		h.owns = true
		h.store = cfg.Store
		h.shared = cfg.Flights
		if h.principal != "" && h.store != nil {
			ps, ok := h.store.(PrincipalTokenStore)
			if !ok {
				h.err = fmt.Errorf("the token store %T keeps no tokens per principal (see PrincipalTokenStore)", h.store)
				h.store = nil
			} else {
				h.store = principalStore{ps, h.principal}
			}
		}
		if !cfg.NoDynamicRegistration {
			h.reg = newRegistrar(h, cfg.RedirectURL, cfg.Store)
		}
		// build makes the SDK's handler on hc (see legacy.go).
		build := func(hc *http.Client) (auth.OAuthHandler, error) {
			sc := cfg.sdkConfig(h.observe(hc))
			sc.AuthorizationCodeFetcher = h.fetch(sc.AuthorizationCodeFetcher)
			sc.NewTokenSource = h.newTokenSource
			return auth.NewAuthorizationCodeHandler(sc)
		}
		h.legacy = &legacyDiscovery{base: client, build: build}
		if h.store != nil {
			if s := h.load(ctx, h.observe(client)); s != nil {
				h.ts.Store(s)
			} else if st, _ := h.store.LoadToken(ctx, h.resource); st != nil && st.Token != nil {
				h.setReason("the stored access token expired and there is no refresh token")
			}
		}
		inner, err := build(h.legacy.watch(client))
		if err != nil {
			h.err = err
		} else {
			h.inner = inner
		}
	}
	h.key = h.gateKeyOf()
	return h
}

// TokenSource implements auth.OAuthHandler.
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	if h.owns {
		return handlerSource{h}, nil
	}
	inner := h.current()
	if inner == nil {
		return nil, nil
	}
	ts, err := inner.TokenSource(ctx)
	if err != nil || ts == nil {
		return ts, cleanError(err)
	}
	return quietSource{ts}, nil
}

// Authorized reports whether the handler holds a token to send: it was
// loaded from the store or given by an authorization, and is not known to
// be refused; for the flows that exchange a user's own token
// ([TokenExchange], [Enterprise]), whether it holds an unexpired token of
// any subject. For the other flows it reports false.
func (h *Handler) Authorized() bool {
	if sh, ok := h.subjects(); ok {
		held, _, _ := sh.summary()
		return held
	}
	return h != nil && h.owns && h.ts.Load() != nil
}

// Exchanges tells, for the flows that exchange a user's own token
// ([TokenExchange], [Enterprise]), whether an exchange is in flight, and
// whether the last exchange of a subject failed and waits to be tried
// again (see [Handler.Authorized] for the tokens held); false for the
// other flows, whose state [Handler.Pending] tells.
func (h *Handler) Exchanges() (exchanging, failed bool) {
	sh, ok := h.subjects()
	if !ok {
		return false, false
	}
	_, exchanging, failed = sh.summary()
	return exchanging, failed
}

// subjects returns the handler of the flows that exchange a user's own
// token, if h runs one.
func (h *Handler) subjects() (*subjectHandler, bool) {
	if h == nil {
		return nil, false
	}
	sh, ok := h.inner.(*subjectHandler)
	return sh, ok
}

// Authorize implements auth.OAuthHandler: it refreshes the token the
// server refused, when it can, or runs an authorization (or joins the one
// in flight), as described at [Handler].
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if h.err != nil {
		discard(resp)
		return fmt.Errorf("%w: OAuth: %v", errs.ErrBadParameter, h.err)
	}
	if sh, ok := h.inner.(*subjectHandler); ok {
		// Tokens per subject, nobody asked: no gate (subjects.go).
		return sh.Authorize(ctx, req, resp)
	}
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	code, description := challengeError(challenges)
	if resp.StatusCode == http.StatusForbidden && code != "insufficient_scope" {
		// Not a matter of authorization: the request is sent again and
		// the server's answer reaches its caller.
		discard(resp)
		return nil
	}
	if resp.StatusCode == http.StatusForbidden && h.owns {
		// Step-up authorization (insufficient_scope), for the token sent.
		why := "the server asks for more scopes (" + oneLine(strings.TrimSuffix(code+": "+description, ": "), MaxErrorDescription) + ")"
		if s := h.ts.Load(); s != nil && s.current(bearerOf(req)) && h.refusedSoon(s, why) {
			// The scopes an authorization just gave do not do either:
			// that one failed, and the next one waits.
			discard(resp)
			_, err := h.Pending()
			return err
		}
		h.setReason(why)
	}
	if resp.StatusCode == http.StatusUnauthorized && h.owns {
		sent := bearerOf(req)
		if h.ts.Load() == nil {
			if s := h.stored(sent); s != nil {
				// Another handler of the store was authorized.
				h.ts.Store(s)
				discard(resp)
				return nil
			}
		}
		if s := h.ts.Load(); s != nil {
			retry, refused := s.after401(sent)
			if retry {
				discard(resp)
				return nil
			}
			if refused {
				h.dead.Store(&sent)
				why := "the server refused the access token"
				if code != "" {
					why += " (" + oneLine(strings.TrimSuffix(code+": "+description, ": "), MaxErrorDescription) + ")"
				}
				if h.reason.Load() == nil {
					h.setReason(why)
				}
				if h.ts.CompareAndSwap(s, nil) && h.refusedSoon(s, why) {
					discard(resp)
					_, err := h.Pending()
					return err
				}
			}
		}
	}
	reason := h.takeReason()
	f, own, pe := h.join(reason)
	if pe != nil {
		discard(resp)
		return pe
	}
	if own {
		f.sent = bearerOf(req)
		// The authorization reads the challenge only; it outlives the
		// request, whose body goes now.
		r := *resp
		r.Body = http.NoBody
		discard(resp)
		// Canceled by Stop or when it takes too long, never once over:
		// token sources keep the context they are made with.
		fctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
		f.cancel = func() { cancel(errStopped) }
		f.stopTimer = h.clock.AfterFunc(authorizeTimeout, func() { cancel(errAuthorizeTimeout) })
		h.mu.Lock()
		h.flights[f] = true
		h.mu.Unlock()
		go h.run(fctx, f, req, &r)
	} else {
		discard(resp)
	}
	return h.await(ctx, f, own)
}

// await waits for f, the flight a request joined (own: it started it),
// to end, or until ctx ends, or until the user is asked when the request
// may not wait for the user.
func (h *Handler) await(ctx context.Context, f *flight, own bool) error {
	var asked <-chan struct{}
	if !own || noWait(ctx) {
		asked = f.asked
	}
	for {
		select {
		case <-f.done:
			if f.err == nil {
				if f.owner != h {
					h.adopt()
				}
				return nil
			}
			if own {
				return fmt.Errorf("authorization failed: %w", f.err)
			}
			return h.pendingNow()
		case <-asked:
			if _, err := h.Pending(); err != nil {
				return err
			}
			asked = nil // the user answered already
		case <-ctx.Done():
			return fmt.Errorf("%w (the authorization goes on)", context.Cause(ctx))
		}
	}
}

// pendingNow returns the PendingError of now, or ErrAuthorizationPending
// if there is none any more.
func (h *Handler) pendingNow() error {
	if _, err := h.Pending(); err != nil {
		return err
	}
	return ErrAuthorizationPending
}

// run runs f, an authorization for req, refused with resp, with ctx.
func (h *Handler) run(ctx context.Context, f *flight, req *http.Request, resp *http.Response) {
	defer func() {
		h.mu.Lock()
		delete(h.flights, f)
		h.mu.Unlock()
	}()
	col := &noted{}
	ctx = context.WithValue(context.WithValue(ctx, flightKey{}, f), notedKey{}, col)
	inner := h.current()
	if h.legacy != nil {
		h.legacy.reset()
	}
	h.refused.Store(nil)
	err := inner.Authorize(ctx, req, resp)
	if err != nil && f.elsewhere.Load() {
		err = nil // the token is another process's authorization's
	}
	if err != nil && h.legacy != nil && inner == h.inner && ctx.Err() == nil {
		// A 2025-03-26 server's metadata may name an issuer the SDK's
		// discovery refuses.
		if lh := h.legacy.fallback(req.URL.String()); lh != nil {
			h.logger.Info("OAuth: the server publishes no resource metadata; using the authorization server its root metadata names (2025-03-26)", "issuer", h.legacy.issuerOf())
			r := *resp
			r.Body = http.NoBody
			if err = lh.Authorize(ctx, req, &r); err == nil {
				h.legacy.use(lh)
			}
		}
	}
	f.stopTimer()
	h.end(f)
	stopped := errors.Is(context.Cause(ctx), errStopped)
	if err != nil && ctx.Err() != nil {
		err = context.Cause(ctx) // stopped, or too long
	}
	if err != nil {
		err = h.flightError(err, col)
		h.logger.Warn("OAuth authorization failed", "error", err)
	} else {
		h.reason.Store(nil)
	}
	h.land(f, err, stopped)
}

// flightError is the error of an authorization that failed with err: the
// authorization server's answer when it gave one (dropping the
// registration it rejected), or err without a token endpoint's answer.
func (h *Handler) flightError(err error, col *noted) error {
	if se := col.get(); se != nil {
		if se.Code == "invalid_client" && se.Endpoint == "token" {
			if p := h.issuer.Load(); p != nil {
				col.mu.Lock()
				id := col.clientID
				col.mu.Unlock()
				h.reg.forget(context.Background(), *p, id)
			}
		}
		return se
	}
	err = cleanError(err)
	if r := h.refused.Load(); r != nil && !errors.Is(err, ErrDestinationRefused) {
		// The SDK does not always keep the cause in its errors.
		if strings.Contains(err.Error(), (*r).Error()) {
			return withCause{err, *r}
		}
		return fmt.Errorf("%w; %w", err, *r)
	}
	return err
}

// adopt takes the token another handler of the same store got.
func (h *Handler) adopt() {
	if !h.owns || h.store == nil {
		return
	}
	if s := h.load(context.Background(), h.observe(h.legacy.base)); s != nil {
		h.ts.Store(s)
	}
}

// setReason notes why the next authorization is needed.
func (h *Handler) setReason(r string) { h.reason.Store(&r) }

// takeReason returns (and forgets) why the authorization starting now is
// needed.
func (h *Handler) takeReason() string {
	if p := h.reason.Swap(nil); p != nil {
		return *p
	}
	return "the server asks for authorization"
}

// current returns the SDK's handler in use.
func (h *Handler) current() auth.OAuthHandler {
	if h.legacy != nil {
		if lh := h.legacy.active.Load(); lh != nil {
			return *lh
		}
	}
	return h.inner
}

// fetch wraps the application's authorization function: the wait is
// reported.
func (h *Handler) fetch(fetch auth.AuthorizationCodeFetcher) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		host := hostOf(args.URL)
		msg := "waiting for the user to authorize access"
		if host != "" {
			msg += " at " + host
		}
		var answered func()
		if f := flightOf(ctx); f != nil {
			answered = h.ask(f, host)
		}
		done := func() {}
		if h.onWait != nil {
			done = h.onWait(ctx, msg)
		}
		h.logger.Info("OAuth authorization needed", "authorization_server", host)
		var res *auth.AuthorizationResult
		var err error
		if owner := h.begin(ctx, flightOf(ctx), args.URL); owner != "" {
			res, err = h.follow(ctx, flightOf(ctx), fetch, args, owner)
		} else {
			res, err = fetch(ctx, args)
		}
		done()
		if answered != nil {
			answered()
		}
		return res, err
	}
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Host
	}
	return ""
}

// clockOf returns the handler's clock.
func (h *Handler) clockOf() clock { return h.clock }

// exchangeFailed logs a failed token exchange.
func (h *Handler) exchangeFailed(err error) {
	h.logger.Warn("OAuth token exchange failed", "error", err)
}

// noteRefused notes and logs a request the rules refused.
func (h *Handler) noteRefused(err error) {
	h.refused.Store(&err)
	h.logger.Warn("OAuth request refused", "error", err)
}

// discard closes resp's body after reading a bounded part of it, so that
// its connection can be used again.
func discard(resp *http.Response) {
	if resp != nil && resp.Body != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}
}

// challengeError returns the error and error_description of the Bearer
// challenge among cs.
func challengeError(cs []oauthex.Challenge) (code, description string) {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["error"] != "" {
			return errorCode(c.Params["error"]), c.Params["error_description"]
		}
	}
	return "", ""
}

// bearerOf returns the access token req carried.
func bearerOf(req *http.Request) string {
	scheme, tok, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// withCause is err with cause, which its text already tells, back in its
// chain.
type withCause struct{ err, cause error }

func (e withCause) Error() string   { return e.err.Error() }
func (e withCause) Unwrap() []error { return []error{e.err, e.cause} }

// quietSource turns a token endpoint's refusal, or a token endpoint the
// rules refuse, into "no token": the request then goes out without one and
// the server's 401 starts a new authorization, where the SDK would fail
// the request (it does so only for invalid_grant).
type quietSource struct{ ts oauth2.TokenSource }

func (q quietSource) Token() (*oauth2.Token, error) {
	t, err := q.ts.Token()
	var re *oauth2.RetrieveError
	if errors.As(err, &re) || errors.Is(err, ErrDestinationRefused) {
		return nil, nil
	}
	return t, cleanError(err)
}

// cleanError replaces the answer of a token endpoint, which
// oauth2.RetrieveError quotes in full, with its status and error code.
func cleanError(err error) error {
	var re *oauth2.RetrieveError
	if err == nil || !errors.As(err, &re) {
		return err
	}
	msg := "token endpoint answered"
	if re.Response != nil {
		msg += " " + re.Response.Status
	}
	if re.ErrorCode != "" {
		msg += ": " + errorCode(re.ErrorCode)
		if re.ErrorDescription != "" {
			msg += " (" + oneLine(re.ErrorDescription, MaxErrorDescription) + ")"
		}
	}
	return errors.New(msg)
}

package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"golang.org/x/oauth2"

	"github.com/llmkit/toolkit/internal/errs"
)

// ErrAuthorizationPending, message "unavailable: waiting for the user to
// authorize access", is the error of a request that cannot be sent
// because the user is being asked to authorize access (see
// [Handler.Waiting]): a connector fails its calls with it at once rather
// than making them wait for a person. Test with errors.Is; it also
// matches toolkit.ErrUnavailable.
var ErrAuthorizationPending = fmt.Errorf("%w: waiting for the user to authorize access", errs.ErrUnavailable)

// HandlerConfig is what a [Handler] needs from the program that uses it.
type HandlerConfig struct {
	// Resource is the URL of the MCP server whose requests the handler
	// authorizes: the protected resource. Tokens are stored under it.
	Resource string
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
}

// Handler is an auth.OAuthHandler that runs a [Flow] for one protected
// resource, for the SDK's streamable HTTP transport (its OAuthHandler) or
// a [Transport]. Around the SDK's handlers it adds: one authorization at a
// time (requests that wait for one use its token rather than asking the
// user again), the wait for the user reported ([Handler.Waiting],
// [HandlerConfig.OnWait]), tokens kept in a [TokenStore], and errors that
// never quote a token endpoint's answer. A token endpoint that refuses to
// refresh a token makes the request go out without one, so that the
// server's 401 starts a new authorization.
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

	legacy *legacyDiscovery // AuthorizationCode: the 2025-03-26 fallback

	refused atomic.Pointer[error] // the last request refused (guard.go)

	issuer  atomic.Pointer[string] // of the metadata fetched last (tokens.go)
	sem     chan struct{}          // one authorization at a time
	gen     atomic.Uint64          // counts the token sources made by authorizations
	waiting atomic.Bool            // the user is being asked to authorize
	onWait  func(ctx context.Context, status string) (done func())
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
	h := &Handler{resource: hc.Resource, logger: logger, onWait: hc.OnWait, sem: make(chan struct{}, 1)}
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
		h.inner = &enterpriseHandler{cfg: f.enterprise, hc: client}
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
		hc := client
		if cfg.Store != nil {
			h.store = cfg.Store
		}
		// build makes the SDK's handler on hc (see legacy.go).
		build := func(hc *http.Client, initial oauth2.TokenSource) (auth.OAuthHandler, error) {
			if h.store != nil {
				hc = h.recordIssuer(hc)
			}
			sc := cfg.sdkConfig(hc)
			sc.AuthorizationCodeFetcher = h.fetch(cfg.Authorize)
			if h.store != nil {
				sc.NewTokenSource = h.newTokenSource
				sc.InitialTokenSource = initial
			}
			return auth.NewAuthorizationCodeHandler(sc)
		}
		h.legacy = &legacyDiscovery{base: hc, build: func(hc *http.Client) (auth.OAuthHandler, error) { return build(hc, nil) }}
		var initial oauth2.TokenSource
		if h.store != nil {
			if ts := h.load(ctx, h.recordIssuer(hc)); ts != nil {
				initial = ts
			}
		}
		inner, err := build(h.legacy.watch(hc), initial)
		if err != nil {
			h.err = err
		} else {
			h.inner = inner
		}
	}
	return h
}

// TokenSource implements auth.OAuthHandler.
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
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

// Authorize implements auth.OAuthHandler.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if h.err != nil {
		resp.Body.Close()
		return fmt.Errorf("%w: OAuth: %v", errs.ErrBadParameter, h.err)
	}
	gen := h.gen.Load()
	select {
	case h.sem <- struct{}{}:
		defer func() { <-h.sem }()
	case <-ctx.Done():
		resp.Body.Close()
		return ctx.Err()
	}
	if h.gen.Load() != gen && resp.StatusCode == http.StatusUnauthorized {
		// Another request authorized while this one waited: retry with
		// its token instead of asking the user again.
		resp.Body.Close()
		return nil
	}
	actx, stop := detachAfter(ctx)
	inner := h.current()
	if h.legacy != nil {
		h.legacy.reset()
	}
	h.refused.Store(nil)
	err := inner.Authorize(actx, req, resp)
	if err != nil && h.legacy != nil && inner == h.inner {
		// A 2025-03-26 server's metadata may name an issuer the SDK's
		// discovery refuses.
		if lh := h.legacy.fallback(req.URL.String()); lh != nil {
			h.logger.Info("OAuth: the server publishes no resource metadata; using the authorization server its root metadata names (2025-03-26)", "issuer", h.legacy.issuerOf())
			if err = lh.Authorize(actx, req, resp); err == nil {
				h.legacy.use(lh)
			}
		}
	}
	stop()
	if err != nil {
		err = cleanError(err)
		if r := h.refused.Load(); r != nil && !errors.Is(err, ErrDestinationRefused) {
			// The SDK does not always keep the cause in its errors.
			if strings.Contains(err.Error(), (*r).Error()) {
				err = withCause{err, *r}
			} else {
				err = fmt.Errorf("%w; %w", err, *r)
			}
		}
		return fmt.Errorf("authorization failed: %w", err)
	}
	h.gen.Add(1)
	return nil
}

// Waiting reports whether the handler is waiting for the user to
// authorize access (in [Config.Authorize]). Requests sent meanwhile would
// wait for the person: fail them with [ErrAuthorizationPending] instead.
func (h *Handler) Waiting() bool {
	return h != nil && h.waiting.Load()
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

// detachAfter returns a context with the values of ctx that is canceled
// with ctx until stop is called, and never after: the SDK's handlers keep
// the context of Authorize in the token sources they make
// (extauth.ClientCredentialsHandler does), which must go on working once
// the request that authorized is over.
func detachAfter(ctx context.Context) (context.Context, func() bool) {
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return dctx, context.AfterFunc(ctx, cancel)
}

// fetch wraps the application's authorization function: the wait is
// reported.
func (h *Handler) fetch(f auth.AuthorizationCodeFetcher) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		h.waiting.Store(true)
		defer h.waiting.Store(false)
		msg := "waiting for the user to authorize access"
		if u, err := url.Parse(args.URL); err == nil && u.Host != "" {
			msg += " at " + u.Host
		}
		done := func() {}
		if h.onWait != nil {
			done = h.onWait(ctx, msg)
		}
		h.logger.Info("OAuth authorization needed", "authorization_server", hostOf(args.URL))
		res, err := f(ctx, args)
		done()
		return res, err
	}
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Host
	}
	return ""
}

// noteRefused notes and logs a request the rules refused.
func (h *Handler) noteRefused(err error) {
	h.refused.Store(&err)
	h.logger.Warn("OAuth request refused", "error", err)
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
		msg += ": " + re.ErrorCode
		if re.ErrorDescription != "" {
			msg += " (" + re.ErrorDescription + ")"
		}
	}
	return errors.New(msg)
}

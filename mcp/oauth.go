package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
)

// OAuthConfig configures OAuth 2.1 authorization of an HTTP
// connector with the authorization code flow (see OptOAuth). The flow is the
// one of the MCP Go SDK's auth.AuthorizationCodeHandler: protected resource
// metadata discovery (RFC 9728, from the WWW-Authenticate challenge, then the
// well-known locations), authorization server metadata (RFC 8414 and OpenID
// discovery, with the 2025-03-26 fallbacks: default endpoints at the
// server's root, and, for a server without resource metadata, the issuer
// its root metadata names on its own origin), PKCE (S256), resource indicators
// (RFC 8707), scope selection from the challenge or the resource's
// scopes_supported, step-up authorization on insufficient_scope, the RFC 9207
// iss check, refresh tokens and the token endpoint authentication method the
// server supports.
//
// The client is identified, in this order of preference, by its client ID
// metadata document (ClientMetadataURL, when the server supports them), by a
// pre-registered client (ClientID), or by dynamic client registration
// (RFC 7591, unless NoDynamicRegistration is set).
type OAuthConfig struct {
	// Authorize lets the user authorize the client: it is given the
	// authorization URL and returns the code, state and iss of the redirect
	// to RedirectURL. Required. LoopbackAuthorizer.Authorize is one for
	// command-line programs.
	Authorize auth.AuthorizationCodeFetcher
	// RedirectURL is where the authorization server sends the user back.
	// Required.
	RedirectURL string

	// ClientMetadataURL is the https URL of the client's ID metadata
	// document, used as its client ID by servers that support them.
	ClientMetadataURL string
	// ClientID and ClientSecret identify a client registered with the
	// authorization server beforehand (ClientSecret is empty for a public
	// client).
	ClientID, ClientSecret string
	// ClientName is the client name sent in a dynamic client registration
	// (default: none).
	ClientName string
	// NoDynamicRegistration disables dynamic client registration.
	NoDynamicRegistration bool

	// Scopes, when set, chooses the scopes to ask for from those the server
	// names (in its challenge or its resource metadata).
	Scopes func(discovered []string) []string
	// NoRefreshToken stops the client from asking for offline_access when
	// the authorization server supports it.
	NoRefreshToken bool

	// Store keeps tokens across restarts (nil: in memory only). See
	// NewFileTokenStore.
	Store TokenStore
	// HTTPClient makes the requests to the authorization server and the
	// metadata requests (default: the connector's HTTP client, without the
	// headers of OptHeader).
	HTTPClient *http.Client
}

// ErrAuthorizationPending is wrapped by the error of a call made while the
// connector waits for the user to authorize it. It also wraps
// toolkit.ErrUnavailable.
var ErrAuthorizationPending = fmt.Errorf("%w: waiting for the user to authorize access", errs.ErrUnavailable)

// OptOAuth makes an HTTP connector authorize itself with OAuth when
// the server answers 401 Unauthorized (or 403 Forbidden with
// insufficient_scope), as described at OAuthConfig. While the user
// authorizes, the connector's state says so in LastError and calls fail at
// once with ErrAuthorizationPending. The whole authorization of one
// connection attempt must finish within OptConnectTimeout: give a longer one
// when a person authorizes. Tokens never appear in logs, errors or the
// connector's state. It applies to streamable HTTP and to the legacy
// HTTP+SSE transport alike (the SDK's SSE transport has no OAuth handler:
// the connector adds the token to its requests and, on a 401, authorizes
// and sends the request once more); stdio connectors and OptDialer ignore
// the option.
func OptOAuth(cfg OAuthConfig) Option {
	return func(o *options) error {
		if _, err := auth.NewAuthorizationCodeHandler(cfg.sdkConfig(nil)); err != nil {
			return fmt.Errorf("%w: OptOAuth: %v", errs.ErrBadParameter, err)
		}
		o.oauth = &oauthSetup{cfg: &cfg}
		return nil
	}
}

// OptOAuthClientCredentials makes an HTTP connector authorize
// itself with the OAuth client credentials grant (no user involved), with
// the SDK's extauth.ClientCredentialsHandler: the token endpoint is found
// through the resource's and the authorization server's metadata.
func OptOAuthClientCredentials(clientID, clientSecret string) Option {
	return func(o *options) error {
		creds := &oauthex.ClientCredentials{ClientID: clientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: clientSecret}}
		if _, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{Credentials: creds}); err != nil {
			return fmt.Errorf("%w: OptOAuthClientCredentials: %v", errs.ErrBadParameter, err)
		}
		o.oauth = &oauthSetup{clientCreds: creds}
		return nil
	}
}

// OptOAuthHandler sets the OAuth handler of an HTTP connector
// directly, for flows the other OAuth options do not configure. The connector cannot tell when such a handler
// waits for a user, so it reports no pending authorization; errors of the
// token endpoint still reach the state without its answer.
func OptOAuthHandler(h auth.OAuthHandler) Option {
	return func(o *options) error {
		o.oauth = &oauthSetup{handler: h}
		return errs.Given("OptOAuthHandler", h != nil, "handler")
	}
}

// sdkConfig returns the configuration of the SDK's handler.
func (cfg *OAuthConfig) sdkConfig(hc *http.Client) *auth.AuthorizationCodeHandlerConfig {
	sc := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              cfg.RedirectURL,
		AuthorizationCodeFetcher: cfg.Authorize,
		ScopeFilter:              cfg.Scopes,
		RequestRefreshToken:      !cfg.NoRefreshToken,
		Client:                   hc,
	}
	if cfg.ClientMetadataURL != "" {
		sc.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: cfg.ClientMetadataURL}
	}
	if cfg.ClientID != "" {
		sc.PreregisteredClient = &oauthex.ClientCredentials{ClientID: cfg.ClientID}
		if cfg.ClientSecret != "" {
			sc.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: cfg.ClientSecret}
		}
	}
	if !cfg.NoDynamicRegistration && cfg.RedirectURL != "" {
		grants := []string{"authorization_code"}
		if !cfg.NoRefreshToken {
			grants = append(grants, "refresh_token")
		}
		sc.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs: []string{cfg.RedirectURL},
				ClientName:   cfg.ClientName,
				GrantTypes:   grants,
			},
		}
	}
	return sc
}

// oauthSetup is the OAuth configuration of one connector and, once the
// connector first dials, its handler.
type oauthSetup struct {
	cfg         *OAuthConfig
	clientCreds *oauthex.ClientCredentials
	assertion   *clientAssertion  // OptOAuthClientCredentialsJWT
	enterprise  *EnterpriseConfig // OptOAuthEnterprise
	handler     auth.OAuthHandler // OptOAuthHandler

	once  sync.Once
	built atomic.Pointer[oauthHandler]
}

// oauthHandler returns the OAuth handler of the connector's HTTP
// transport, or nil without OAuth.
func (c *Connector) oauthHandler(ctx context.Context) auth.OAuthHandler {
	s := c.o.oauth
	if s == nil {
		return nil
	}
	s.once.Do(func() { s.built.Store(c.buildOAuth(ctx, s)) })
	return s.built.Load()
}

func (c *Connector) buildOAuth(ctx context.Context, s *oauthSetup) *oauthHandler {
	h := &oauthHandler{c: c, sem: make(chan struct{}, 1)}
	switch {
	case s.handler != nil:
		h.inner = s.handler
	case s.enterprise != nil:
		hc := wrapClient(c.httpClient, nil)
		h.inner = &enterpriseHandler{cfg: s.enterprise, hc: hc}
	case s.clientCreds != nil:
		hc := c.httpClient
		if s.assertion != nil {
			hc = s.assertion.client(hc)
		}
		inner, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{Credentials: s.clientCreds, HTTPClient: hc})
		if err != nil { // validated by the option
			h.err = err
		}
		h.inner = inner
	default:
		cfg := s.cfg
		hc := cfg.HTTPClient
		if hc == nil {
			hc = c.httpClient
		}
		if cfg.Store != nil {
			h.store = cfg.Store
		}
		// build makes the SDK's handler on hc (see oauth_legacy.go).
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

// oauthHandler wraps the SDK's handler of a connector: one authorization
// at a time, the pending authorization reported, stored tokens, and errors
// without the token endpoint's answer.
type oauthHandler struct {
	c     *Connector
	inner auth.OAuthHandler
	err   error // the handler could not be made
	store TokenStore

	legacy *legacyDiscovery // OptOAuth: the 2025-03-26 fallback

	issuer  atomic.Pointer[string] // of the metadata fetched last (oauth_store.go)
	sem     chan struct{}          // one authorization at a time
	gen     atomic.Uint64          // counts the token sources made by authorizations
	waiting atomic.Bool            // the user is being asked to authorize
}

// TokenSource implements auth.OAuthHandler.
func (h *oauthHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	inner := h.current()
	if inner == nil {
		return nil, nil
	}
	ts, err := inner.TokenSource(ctx)
	if err != nil || ts == nil {
		return ts, cleanOAuthError(err)
	}
	return quietSource{ts}, nil
}

// Authorize implements auth.OAuthHandler.
func (h *oauthHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
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
	err := inner.Authorize(actx, req, resp)
	if err != nil && h.legacy != nil && inner == h.inner {
		// A 2025-03-26 server's metadata may name an issuer the SDK's
		// discovery refuses.
		if lh := h.legacy.fallback(req.URL.String()); lh != nil {
			h.c.logger.Info("OAuth: the server publishes no resource metadata; using the authorization server its root metadata names (2025-03-26)", "issuer", h.legacy.issuerOf())
			if err = lh.Authorize(actx, req, resp); err == nil {
				h.legacy.use(lh)
			}
		}
	}
	stop()
	if err != nil {
		return fmt.Errorf("authorization failed: %w", cleanOAuthError(err))
	}
	h.gen.Add(1)
	return nil
}

// current returns the SDK's handler in use.
func (h *oauthHandler) current() auth.OAuthHandler {
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

// pending returns ErrAuthorizationPending (with the server's name) while the
// user is asked to authorize.
func (h *oauthHandler) pending() error {
	if h != nil && h.waiting.Load() {
		return fmt.Errorf("%w: server %s", ErrAuthorizationPending, h.c.label())
	}
	return nil
}

// fetch wraps the application's authorization function: the connector's
// state reports the wait.
func (h *oauthHandler) fetch(f auth.AuthorizationCodeFetcher) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		h.waiting.Store(true)
		defer h.waiting.Store(false)
		msg := "waiting for the user to authorize access"
		if u, err := url.Parse(args.URL); err == nil && u.Host != "" {
			msg += " at " + u.Host
		}
		c := h.c
		st := c.setState(func(s *toolkit.ConnectorState) { s.LastError = msg })
		if st.Status != toolkit.StatusReady {
			// A connection attempt, on the supervising goroutine: the
			// state callback learns it in order. A session that needs a
			// new authorization (the goroutine of a call) shows it in
			// State only, so that callbacks keep coming from one
			// goroutine.
			c.report(ctx, st)
		}
		c.logger.Info("OAuth authorization needed", "authorization_server", hostOf(args.URL))
		res, err := f(ctx, args)
		c.setState(func(s *toolkit.ConnectorState) {
			if s.Status == toolkit.StatusReady && s.LastError == msg {
				s.LastError = ""
			}
		})
		return res, err
	}
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Host
	}
	return ""
}

// quietSource turns a token endpoint's refusal into "no token": the request
// then goes out without one and the server's 401 starts a new
// authorization, where the SDK would fail the request (it does so only for
// invalid_grant).
type quietSource struct{ ts oauth2.TokenSource }

func (q quietSource) Token() (*oauth2.Token, error) {
	t, err := q.ts.Token()
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return nil, nil
	}
	return t, cleanOAuthError(err)
}

// cleanOAuthError replaces the answer of a token endpoint, which
// oauth2.RetrieveError quotes in full, with its status and error code.
func cleanOAuthError(err error) error {
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

// oauthPending returns ErrAuthorizationPending while the connector waits for
// the user to authorize it.
func (c *Connector) oauthPending() error {
	if s := c.o.oauth; s != nil {
		return s.built.Load().pending()
	}
	return nil
}

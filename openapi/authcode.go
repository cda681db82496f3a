package openapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// UserAuthorization makes the calls of an oauth2 scheme act with each
// user's own token, authorized with the scheme's authorization code flow
// (PKCE, S256): the user is toolkit.PrincipalFromContext of the call. A
// user with a token in Store has it used, refreshed and saved again. A
// user without one is asked to open the authorization URL: when the
// call's MCP client offers URL elicitation (MCP 2025-11-25, through the
// call's toolkit.Session), by an elicitation/create request of mode
// "url", the call waiting (within its own context: the connector's
// CallTimeout) for the token; otherwise the call fails at once with an
// [AuthorizationRequiredError] carrying the URL. The redirect reaching
// Callback (its state bound to that user, once) is exchanged for the
// token, which is saved in Store under the user, and the client asked is
// sent notifications/elicitation/complete. One URL is sent once: the
// other calls of the user wait for it, and a call made once the redirect
// came waits for the exchange. A user who declines ends the
// authorization ([ErrDeclined]). A call without a principal is refused
// with toolkit.ErrDenied; no user's token ever serves another. With
// Flights, the replicas of a fleet ask a user once between them.
type UserAuthorization struct {
	// ClientID and ClientSecret identify the client registered with the
	// authorization server (ClientSecret is empty for a public client).
	ClientID, ClientSecret string
	// AuthURL and TokenURL are the authorization server's endpoints
	// (default: the authorizationUrl and tokenUrl of the scheme's
	// authorizationCode flow in the document).
	AuthURL, TokenURL string
	// Scopes are the scopes asked for (default: those of the operation's
	// security requirement).
	Scopes []string
	// Callback receives the redirects; its RedirectURL is the flow's.
	Callback *oauth.Callback
	// Store keeps each user's tokens, under Resource (nil: in memory, for
	// the life of ua).
	Store oauth.PrincipalTokenStore
	// Resource is the key of the tokens in Store (the API's URL, say).
	// Required.
	Resource string
	// Flights, for a program run as several replicas that share Store
	// and relay their redirects to one another (oauth.CallbackConfig's
	// Relay), shares their authorizations in flight, as
	// oauth.Config.Flights does: a user asked by one replica is shown
	// the same URL by the others, whose calls go on once the token it
	// brings is in Store. Nil, or failing (a warning is logged): each
	// replica asks on its own.
	Flights oauth.FlightRegistry

	mu      sync.Mutex
	pending map[string]*pendingAuthorization // waiting, by principal
	tokens  map[string]*oauth.StoredToken    // without Store, by principal
	closed  bool
	down    bool               // Flights failed; said once
	life    context.Context    // ends when ua is closed
	stop    context.CancelFunc // ends life
	waits   sync.WaitGroup
}

// Close ends the authorizations waiting for their redirect and waits
// until they are over; later ones are refused. The owner of ua calls it
// when the connectors using it are done.
func (ua *UserAuthorization) Close() {
	ua.mu.Lock()
	ua.closed = true
	if ua.stop != nil {
		ua.stop()
	}
	ua.mu.Unlock()
	ua.waits.Wait()
}

// AuthorizationRequiredError is the error of a call whose user must
// authorize access first, at URL. It wraps oauth.ErrAuthorizationPending
// (toolkit.ErrUnavailable) and, as a per-user MCP upstream's
// mcp.AuthorizationRequiredError does, the JSON-RPC error URL elicitation
// required (code -32042, the URL in its data), which an MCP server face
// passes on to its client. Its message never quotes the URL.
type AuthorizationRequiredError struct {
	// URL is the authorization URL the user opens.
	URL string
	// ElicitationID identifies the elicitation (one per authorization).
	ElicitationID string
}

// Error implements error.
func (e *AuthorizationRequiredError) Error() string {
	return "openapi: authorization pending: the user must authorize access at the URL given with the error"
}

// Unwrap returns oauth.ErrAuthorizationPending and the JSON-RPC error.
func (e *AuthorizationRequiredError) Unwrap() []error {
	return []error{oauth.ErrAuthorizationPending, sdk.URLElicitationRequiredError([]*sdk.ElicitParams{e.elicitation()})}
}

// elicitation returns the URL-mode elicitation that asks the user to
// authorize.
func (e *AuthorizationRequiredError) elicitation() *sdk.ElicitParams {
	return &sdk.ElicitParams{
		Mode:          "url",
		Message:       "Authorize access to the API: open the URL and sign in.",
		URL:           e.URL,
		ElicitationID: e.ElicitationID,
	}
}

// pendingAuthorization is the authorization of one user waiting for its
// redirect, then for its code's exchange.
type pendingAuthorization struct {
	err      *AuthorizationRequiredError
	expected *oauth.Expected
	done     chan struct{}           // closed once it is over, token saved or not
	cancel   context.CancelCauseFunc // ends it
	// followed: the other replica's authorization it followed is over,
	// so a new call no longer shares it, even before done.
	followed atomic.Bool

	mu     sync.Mutex
	asking bool                        // a client was asked, or is
	asked  bridge.ElicitationCompleter // that client, told once authorized
}

// ErrTokenType is wrapped by the error of an authorization whose token
// endpoint answers with a token type other than Bearer.
var ErrTokenType = errors.New("openapi: the token endpoint issued a token that is not a bearer token")

// authCodeURLs returns the endpoints of a scheme's authorization code flow.
func authCodeURLs(s *openapi3.SecurityScheme) (authURL, tokenURL string) {
	if s.Flows == nil || s.Flows.AuthorizationCode == nil {
		return "", ""
	}
	return s.Flows.AuthorizationCode.AuthorizationURL, s.Flows.AuthorizationCode.TokenURL
}

// checkEndpoint refuses an endpoint that is not an absolute http(s) URL.
func checkEndpoint(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.Fragment != "" {
		return fmt.Errorf("%w: openapi: the %s is not an absolute http(s) URL", toolkit.ErrBadParameter, what)
	}
	return nil
}

// config returns the oauth2 configuration of ua for scheme s.
func (ua *UserAuthorization) config(s *openapi3.SecurityScheme, scopes []string) (*oauth2.Config, error) {
	au, tu := authCodeURLs(s)
	if ua.AuthURL != "" {
		au = ua.AuthURL
	}
	if ua.TokenURL != "" {
		tu = ua.TokenURL
	}
	if err := checkEndpoint("authorization URL", au); err != nil {
		return nil, err
	}
	if err := checkEndpoint("token URL", tu); err != nil {
		return nil, err
	}
	if len(ua.Scopes) > 0 {
		scopes = ua.Scopes
	}
	return &oauth2.Config{
		ClientID: ua.ClientID, ClientSecret: ua.ClientSecret,
		Endpoint:    oauth2.Endpoint{AuthURL: au, TokenURL: tu},
		RedirectURL: ua.Callback.RedirectURL(),
		Scopes:      scopes,
	}, nil
}

// source returns the token source of the call's user. hc makes the token
// requests (the connector's guarded client).
func (ua *UserAuthorization) source(ctx context.Context, s *openapi3.SecurityScheme, scopes []string, hc *http.Client) (oauth2.TokenSource, error) {
	principal := toolkit.PrincipalFromContext(ctx)
	if principal == "" {
		return nil, fmt.Errorf("%w: openapi: no authenticated user to act for", toolkit.ErrDenied)
	}
	resource := ua.Resource
	cfg, err := ua.config(s, scopes)
	if err != nil {
		return nil, err
	}
	hctx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, hc)
	for {
		st, err := ua.load(ctx, principal, resource)
		if err != nil {
			return nil, fmt.Errorf("%w: openapi: loading the user's token failed", toolkit.ErrUnavailable)
		}
		if st != nil && st.Token != nil {
			return &userSource{ua: ua, ctx: hctx, principal: principal, resource: resource, cfg: cfg,
				src: cfg.TokenSource(hctx, st.Token), last: st.Token.AccessToken}, nil
		}
		p, err := ua.start(hctx, cfg, principal, resource)
		if err != nil {
			return nil, err
		}
		// Once the redirect came, the token is on its way; before, the
		// user is asked, by the client when it can.
		if !p.expected.Arrived() {
			asked, err := p.ask(ctx)
			if err != nil {
				return nil, err
			}
			if !asked {
				return nil, p.err
			}
		}
		select {
		case <-p.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: openapi: waiting for the user's authorization: %w", toolkit.ErrUnavailable, ctx.Err())
		}
	}
}

// load returns the token of principal, from Store or memory.
func (ua *UserAuthorization) load(ctx context.Context, principal, resource string) (*oauth.StoredToken, error) {
	if ua.Store != nil {
		return ua.Store.LoadPrincipalToken(ctx, principal, resource)
	}
	ua.mu.Lock()
	defer ua.mu.Unlock()
	return ua.tokens[principal], nil
}

// start returns the authorization of principal waiting, begun if there
// is none: its redirect is awaited and exchanged in the background.
func (ua *UserAuthorization) start(ctx context.Context, cfg *oauth2.Config, principal, resource string) (*pendingAuthorization, error) {
	ua.mu.Lock()
	defer ua.mu.Unlock()
	if ua.closed {
		return nil, fmt.Errorf("%w: openapi: the user authorization is closed", toolkit.ErrUnavailable)
	}
	if p, ok := ua.pending[principal]; ok && !p.followed.Load() {
		return p, nil
	}
	verifier := oauth2.GenerateVerifier()
	state := oauth2.GenerateVerifier() // 32 random bytes, URL-safe
	authURL := cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))
	key := principal + "\x00" + resource
	shown, recorded := ua.begin(ctx, key, authURL)
	var e *oauth.Expected
	if shown == authURL {
		var err error
		if e, err = ua.Callback.Expect(principal, authURL); err != nil {
			if recorded {
				ua.end(key)
			}
			return nil, err
		}
	}
	if ua.pending == nil {
		ua.pending = map[string]*pendingAuthorization{}
		ua.life, ua.stop = context.WithCancel(context.Background())
	}
	wctx, cancel := context.WithCancelCause(ctx)
	p := &pendingAuthorization{
		err:      &AuthorizationRequiredError{URL: shown, ElicitationID: oauth2.GenerateVerifier()},
		expected: e,
		done:     make(chan struct{}),
		cancel:   cancel,
	}
	ua.pending[principal] = p
	stop := context.AfterFunc(ua.life, func() { cancel(nil) })
	ua.waits.Add(1)
	go func() {
		defer ua.waits.Done()
		defer cancel(nil)
		defer stop()
		defer func() {
			if e != nil {
				e.Close()
			}
			if recorded {
				ua.end(key) // once the token, if any, is saved
			}
			ua.mu.Lock()
			if ua.pending[principal] == p {
				delete(ua.pending, principal)
			}
			ua.mu.Unlock()
			close(p.done)
		}()
		if e == nil {
			// Another replica's authorization: its token comes to Store.
			if ua.follow(wctx, key, principal, resource, authURL, &p.followed) {
				p.completed(wctx)
			}
			return
		}
		res, err := e.Wait(wctx)
		if err == nil {
			err = ua.exchange(wctx, cfg, principal, resource, res.Code, verifier)
		}
		if err != nil {
			if cause := context.Cause(wctx); cause != nil && cause != context.Canceled {
				err = cause
			}
			slog.Warn("openapi: a user's authorization failed", "principal", principal, "resource", resource, "error", err)
			return
		}
		p.completed(wctx)
	}()
	return p, nil
}

// begin records the authorization at authURL under key in Flights, and
// returns the URL to show the user (another replica's, when it recorded
// one first) and whether the record is this one's; ua.mu is held.
func (ua *UserAuthorization) begin(ctx context.Context, key, authURL string) (shown string, recorded bool) {
	if ua.Flights == nil {
		return authURL, false
	}
	owner, mine, err := ua.Flights.Begin(ctx, key, authURL, oauth.DefaultRedirectExpiry)
	switch {
	case err != nil:
		if !ua.down {
			ua.down = true
			slog.Warn("openapi: user authorizations are shared by this process alone until the fleet's record of them answers", "error", err)
		}
		return authURL, false
	case mine:
		ua.down = false
		return authURL, true
	case !oauth.SameAuthorization(authURL, owner):
		slog.Warn("openapi: the fleet's record of an authorization in flight is not one of this API's; ignored")
		return authURL, false
	}
	ua.down = false
	return owner, false
}

// end forgets the record under key this process made in Flights.
func (ua *UserAuthorization) end(key string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ua.Flights.End(ctx, key); err != nil {
		slog.Debug("openapi: the fleet's record of an authorization could not be removed; it expires", "error", err)
	}
}

// follow waits for the token of principal that another replica's
// authorization, recorded under key, brings to Store, and reports
// whether it came; false when that authorization ended without one (the
// user's next call asks at a URL of this replica's) or ctx ended. It sets
// over as soon as that authorization is seen over, token or not.
func (ua *UserAuthorization) follow(ctx context.Context, key, principal, resource, authURL string, over *atomic.Bool) bool {
	stored := func() bool {
		st, err := ua.load(ctx, principal, resource)
		return err == nil && st != nil && st.Token != nil
	}
	got := false
	oauth.FollowFlight(ctx, ua.Flights, key, func() bool {
		if got = stored(); got {
			over.Store(true)
			return true
		}
		if _, mine, err := ua.Flights.Begin(ctx, key, authURL, oauth.DefaultRedirectExpiry); err != nil || !mine {
			return false
		}
		// Over: the token, if it came, was saved before the record went.
		ua.end(key)
		got = stored()
		over.Store(true)
		return true
	})
	return got
}

// exchange trades code for the user's token and saves it.
func (ua *UserAuthorization) exchange(ctx context.Context, cfg *oauth2.Config, principal, resource, code, verifier string) error {
	tok, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return fmt.Errorf("%w: openapi: the token request failed", toolkit.ErrUnavailable)
	}
	if !strings.EqualFold(tok.Type(), "Bearer") {
		return ErrTokenType
	}
	return ua.save(ctx, cfg, principal, resource, tok)
}

// save stores the token of principal, in Store or memory.
func (ua *UserAuthorization) save(ctx context.Context, cfg *oauth2.Config, principal, resource string, tok *oauth2.Token) error {
	st := &oauth.StoredToken{
		Resource: resource, Principal: principal, Issuer: originOf(cfg.Endpoint.TokenURL),
		AuthURL: cfg.Endpoint.AuthURL, TokenURL: cfg.Endpoint.TokenURL,
		ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, Scopes: cfg.Scopes, Token: tok,
	}
	if ua.Store != nil {
		return ua.Store.SaveToken(ctx, st)
	}
	ua.mu.Lock()
	defer ua.mu.Unlock()
	if ua.tokens == nil {
		ua.tokens = map[string]*oauth.StoredToken{}
	}
	ua.tokens[principal] = st
	return nil
}

// originOf returns the scheme and host of raw.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// userSource is a user's token source: it refreshes the token when it
// expires and saves the new one.
type userSource struct {
	ua                  *UserAuthorization
	ctx                 context.Context
	principal, resource string
	cfg                 *oauth2.Config
	src                 oauth2.TokenSource

	mu   sync.Mutex
	last string
}

// Token implements oauth2.TokenSource.
func (s *userSource) Token() (*oauth2.Token, error) {
	tok, err := s.src.Token()
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(tok.Type(), "Bearer") {
		return nil, ErrTokenType
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok.AccessToken != s.last {
		s.last = tok.AccessToken
		if err := s.ua.save(s.ctx, s.cfg, s.principal, s.resource, tok); err != nil {
			slog.Warn("openapi: saving a user's refreshed token failed", "principal", s.principal, "error", err)
		}
	}
	return tok, nil
}

package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// refreshMargin is how long before its expiry an access token is
// refreshed: a token about to expire is not sent.
const refreshMargin = 10 * time.Second

// errExpired is the error of a token source whose access token expired
// without a refresh token.
var errExpired = errors.New("the access token expired and there is no refresh token")

// newTokenSource is the SDK handler's NewTokenSource: the handler keeps the
// token (and saves it, and each refreshed one, with a store).
func (h *Handler) newTokenSource(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
	tok = h.onClock(tok)
	now := h.clock.Now()
	if !tok.Expiry.IsZero() && !tok.Expiry.After(now) {
		return nil, errors.New("the authorization server issued an access token that had already expired")
	}
	s := h.savingSource(ctx, cfg, tok, h.issuerOf(cfg))
	s.born, s.obtained = now, now
	s.save(tok)
	h.ts.Store(s)
	return s, nil
}

func (h *Handler) savingSource(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token, issuer string) *savingSource {
	return &savingSource{
		h:   h,
		cfg: cfg,
		ctx: ctx,
		tok: tok,
		rec: StoredToken{
			Resource:     h.resource,
			Issuer:       issuer,
			AuthURL:      cfg.Endpoint.AuthURL,
			TokenURL:     cfg.Endpoint.TokenURL,
			ClientID:     cfg.ClientID,
			ClientSecret: cfg.ClientSecret,
			AuthStyle:    cfg.Endpoint.AuthStyle,
			Scopes:       cfg.Scopes,
		},
	}
}

// load returns a token source for the token stored for the resource, or nil
// when there is none worth using.
func (h *Handler) load(ctx context.Context, hc *http.Client) *savingSource {
	st, err := h.store.LoadToken(ctx, h.resource)
	if err != nil {
		h.logger.Warn("could not load the stored OAuth token", "error", err)
		return nil
	}
	if st == nil || st.Token == nil || st.TokenURL == "" {
		return nil
	}
	if st.Token.RefreshToken == "" && !fresh(st.Token, time.Time{}, h.clock.Now()) {
		return nil
	}
	cfg := &oauth2.Config{
		ClientID:     st.ClientID,
		ClientSecret: st.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: st.AuthURL, TokenURL: st.TokenURL, AuthStyle: st.AuthStyle},
		Scopes:       st.Scopes,
	}
	// Refreshes outlive the connection attempt.
	rctx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)
	return h.savingSource(rctx, cfg, st.Token, st.Issuer)
}

// stored returns a token source for the token stored for the resource
// when it is another than sent (the token the server refused) and can be
// sent: one that another handler, or process, of the same store got. The
// token the server last refused is never brought back: the store holds it
// until an authorization replaces it, and a request sent without a token
// meanwhile would be retried with it once and fail for good.
func (h *Handler) stored(sent string) *savingSource {
	if h.store == nil {
		return nil
	}
	s := h.load(context.Background(), h.observe(h.legacy.base))
	if s == nil || s.tok.AccessToken == sent || !s.fresh() {
		return nil
	}
	if d := h.dead.Load(); d != nil && s.tok.AccessToken == *d {
		return nil
	}
	return s
}

// fresh reports whether tok, obtained at obtained (zero: unknown), can be
// sent at now: it has an access token that does not expire within the
// refresh margin, refreshMargin or, for a token that lives less than four
// times that, a quarter of its life.
func fresh(tok *oauth2.Token, obtained, now time.Time) bool {
	if tok == nil || tok.AccessToken == "" {
		return false
	}
	if tok.Expiry.IsZero() {
		return true
	}
	margin := refreshMargin
	if !obtained.IsZero() {
		margin = min(margin, tok.Expiry.Sub(obtained)/4)
	}
	return now.Add(margin).Before(tok.Expiry)
}

// savingSource is the token of an authorization: it refreshes it shortly
// before it expires (with golang.org/x/oauth2's refresh grant), and
// saves each new token.
type savingSource struct {
	h   *Handler
	cfg *oauth2.Config
	ctx context.Context // of refreshes: holds the HTTP client
	rec StoredToken

	mu  sync.Mutex
	tok *oauth2.Token
	// refreshed401 is the access token a refresh after a 401 gave: a 401 for
	// it asks for a new authorization rather than another refresh.
	refreshed401 string
	// born is when an authorization gave the token (zero for a stored
	// one): a token refused right after is a failure of that
	// authorization.
	born time.Time
	// obtained is when the current token was obtained (zero: unknown).
	obtained time.Time
}

// fresh reports whether the current token can be sent; s.mu is held, or
// s is not shared yet.
func (s *savingSource) fresh() bool { return fresh(s.tok, s.obtained, s.h.clock.Now()) }

// Token implements oauth2.TokenSource.
func (s *savingSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fresh() {
		return s.tok, nil
	}
	if s.tok.RefreshToken == "" {
		return nil, errExpired
	}
	return s.refreshLocked()
}

// refreshLocked refreshes the token; s.mu is held.
func (s *savingSource) refreshLocked() (*oauth2.Token, error) {
	col := &noted{}
	ctx := context.WithValue(s.ctx, notedKey{}, col)
	t, err := s.cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: s.tok.RefreshToken}).Token()
	if err != nil {
		if se := col.get(); se != nil {
			if se.Code == "invalid_client" {
				s.h.reg.forget(context.Background(), s.rec.Issuer, s.rec.ClientID)
			}
			return nil, se
		}
		return nil, err
	}
	t = s.h.onClock(t)
	s.tok, s.obtained = t, s.h.clock.Now()
	s.save(t)
	return t, nil
}

// onClock returns tok with its expiry, which golang.org/x/oauth2 computes
// from the system's clock, on the handler's clock.
func (h *Handler) onClock(tok *oauth2.Token) *oauth2.Token {
	if _, real := h.clock.(realClock); real || tok == nil || tok.Expiry.IsZero() {
		return tok
	}
	t := *tok
	t.Expiry = h.clock.Now().Add(time.Until(tok.Expiry))
	return &t
}

// current reports whether sent is the current access token.
func (s *savingSource) current(sent string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sent != "" && s.tok.AccessToken == sent
}

// after401 handles the server's 401 Unauthorized to a request that
// carried sent, an access token (or none): a request that did not carry
// the current token is sent again with it (retry), and the current token
// refused is refreshed, once (retry, when that works). refused reports
// the current token refused and not renewed: it must be dropped.
func (s *savingSource) after401(sent string) (retry, refused bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok.AccessToken != sent {
		// Sent without a token, or another request got a new one.
		return s.fresh(), false
	}
	if sent == s.refreshed401 || s.tok.RefreshToken == "" {
		return false, true
	}
	t, err := s.refreshLocked()
	if err != nil {
		s.h.setReason("the server refused the access token and refreshing it failed: " + refreshFailure(err))
		return false, true
	}
	s.refreshed401 = t.AccessToken
	return true, false
}

func (s *savingSource) save(t *oauth2.Token) {
	if s.h.store == nil {
		return
	}
	rec := s.rec
	rec.Token = t
	if err := s.h.store.SaveToken(context.Background(), &rec); err != nil {
		s.h.logger.Warn("could not store the OAuth token", "error", err)
	}
}

// refreshFailure says why a refresh failed, on one line.
func refreshFailure(err error) string {
	return oneLine(cleanError(err).Error(), 2*MaxErrorDescription)
}

// handlerSource is the token source of a Handler of the authorization
// code flow: the current token, or none. A token that cannot be used (it
// expired without a refresh token, the token endpoint refused to refresh
// it, or the rules refuse its token endpoint) is dropped: the request
// goes out without one, and the server's 401 starts a new authorization.
type handlerSource struct{ h *Handler }

// Token implements oauth2.TokenSource.
func (hs handlerSource) Token() (*oauth2.Token, error) {
	h := hs.h
	s := h.ts.Load()
	if s == nil {
		return nil, nil
	}
	t, err := s.Token()
	if err == nil {
		return t, nil
	}
	var se *ServerError
	var re *oauth2.RetrieveError
	switch {
	case errors.Is(err, errExpired):
		h.setReason(errExpired.Error())
	case errors.As(err, &se), errors.As(err, &re), errors.Is(err, ErrDestinationRefused):
		h.setReason("refreshing the access token failed: " + refreshFailure(err))
	default:
		// The token endpoint could not be reached: the token may be good.
		return nil, cleanError(err)
	}
	h.ts.CompareAndSwap(s, nil)
	return nil, nil
}

// issuerOf returns the issuer of the authorization server whose endpoints
// cfg holds: the one its metadata named during the authorization, else the
// origin of its token endpoint.
func (h *Handler) issuerOf(cfg *oauth2.Config) string {
	if p := h.issuer.Load(); p != nil {
		return *p
	}
	if u, err := url.Parse(cfg.Endpoint.TokenURL); err == nil && u.Host != "" {
		return u.Scheme + "://" + u.Host
	}
	return ""
}

// maxMetadata bounds the authorization server metadata a Handler reads
// (the SDK's own bound).
const maxMetadata = 1 << 20

// observe returns hc with a transport that watches the requests the SDK's
// handler makes: it notes the authorization server metadata (the issuer,
// under which tokens are stored; the registration endpoint and the
// authentication methods, for registrations), answers or completes
// registrations (see registrar), and reads the error answers of the
// authorization server (see ServerError), so that nothing quotes their
// bodies.
func (h *Handler) observe(hc *http.Client) *http.Client {
	return wrapClient(hc, h.watch)
}

// watch is the [middleware] of [Handler.observe].
func (h *Handler) watch(base http.RoundTripper, req *http.Request) (*http.Response, error) {
	endpoint := "token"
	var resp *http.Response
	var err error
	if isRegistration(req) {
		endpoint = "registration"
		if h.reg != nil {
			resp, err = h.reg.register(base, req, h.metadataFor(req.URL))
		} else {
			resp, err = base.RoundTrip(req)
		}
	} else {
		resp, err = base.RoundTrip(req)
	}
	if err != nil {
		return nil, err
	}
	if req.Method == http.MethodGet {
		m, resp, err := peekAuthServerMetadata(req, resp)
		if m != nil && m.Issuer != "" {
			h.issuer.Store(&m.Issuer)
			h.noteMetadata(m)
		}
		return resp, err
	}
	if resp.StatusCode >= 400 {
		se := readServerError(endpoint, resp, h.clock.Now())
		if col, _ := req.Context().Value(notedKey{}).(*noted); col != nil {
			col.set(se, requestClientID(req))
		}
		h.logger.Info("the OAuth authorization server refused a request", "error", se)
	}
	return resp, nil
}

// noteMetadata keeps m, by its registration endpoint.
func (h *Handler) noteMetadata(m *authServerMetadata) {
	if m.RegistrationEndpoint == "" {
		return
	}
	h.metaMu.Lock()
	defer h.metaMu.Unlock()
	if h.meta == nil {
		h.meta = map[string]*authServerMetadata{}
	}
	if len(h.meta) > 16 {
		clear(h.meta) // bounded: a server could name endless endpoints
	}
	h.meta[m.RegistrationEndpoint] = m
}

// metadataFor returns the metadata that named u as registration endpoint.
func (h *Handler) metadataFor(u *url.URL) *authServerMetadata {
	h.metaMu.Lock()
	defer h.metaMu.Unlock()
	return h.meta[u.String()]
}

// requestClientID returns the client ID a token request authenticates
// with (Basic authentication or the form).
func requestClientID(req *http.Request) string {
	if id, _, ok := req.BasicAuth(); ok {
		if u, err := url.QueryUnescape(id); err == nil {
			return u
		}
		return id
	}
	if req.GetBody == nil {
		return ""
	}
	body, err := req.GetBody()
	if err != nil {
		return ""
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, 64<<10))
	if err != nil {
		return ""
	}
	v, err := url.ParseQuery(string(b))
	if err != nil {
		return ""
	}
	return v.Get("client_id")
}

// notedKey is the context key of the noted of a request.
type notedKey struct{}

// noted is the error answer an authorization server gave to a request of
// a flow or a refresh.
type noted struct {
	mu       sync.Mutex
	err      *ServerError
	clientID string
}

func (n *noted) set(err *ServerError, clientID string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.err, n.clientID = err, clientID
}

func (n *noted) get() *ServerError {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

// authServerMetadata is what a Handler reads of the authorization
// server metadata the SDK's handlers fetch.
type authServerMetadata struct {
	Issuer               string   `json:"issuer"`
	TokenEndpoint        string   `json:"token_endpoint"`
	RegistrationEndpoint string   `json:"registration_endpoint"`
	AuthMethods          []string `json:"token_endpoint_auth_methods_supported"`
}

// peekAuthServerMetadata reads the authorization server metadata (RFC 8414
// or OpenID discovery) that resp answers to req, if it is such an answer,
// and returns it with a response whose body can be read again. Other
// responses are returned as they are, with nil metadata.
func peekAuthServerMetadata(req *http.Request, resp *http.Response) (*authServerMetadata, *http.Response, error) {
	if req.Method != http.MethodGet || resp.StatusCode != http.StatusOK ||
		!(strings.Contains(req.URL.Path, "/.well-known/oauth-authorization-server") || strings.Contains(req.URL.Path, "/.well-known/openid-configuration")) {
		return nil, resp, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata+1))
	resp.Body.Close()
	if err != nil {
		return nil, nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var m authServerMetadata
	if len(body) > maxMetadata || json.Unmarshal(body, &m) != nil {
		return nil, resp, nil
	}
	return &m, resp, nil
}

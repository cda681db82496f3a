package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"golang.org/x/oauth2"
)

// newTokenSource is the SDK handler's NewTokenSource with a store: the
// token is saved now and whenever it is refreshed.
func (h *Handler) newTokenSource(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
	s := h.savingSource(ctx, cfg, tok, h.issuerOf(cfg))
	s.save(tok)
	return s, nil
}

func (h *Handler) savingSource(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token, issuer string) *savingSource {
	return &savingSource{
		h:    h,
		ts:   cfg.TokenSource(ctx, tok),
		last: tok.AccessToken,
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
func (h *Handler) load(ctx context.Context, hc *http.Client) oauth2.TokenSource {
	st, err := h.store.LoadToken(ctx, h.resource)
	if err != nil {
		h.logger.Warn("could not load the stored OAuth token", "error", err)
		return nil
	}
	if st == nil || st.Token == nil || st.TokenURL == "" || (!st.Token.Valid() && st.Token.RefreshToken == "") {
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

// savingSource saves each new token of its source.
type savingSource struct {
	h   *Handler
	ts  oauth2.TokenSource
	rec StoredToken

	mu   sync.Mutex
	last string // the access token saved last
}

// Token implements oauth2.TokenSource.
func (s *savingSource) Token() (*oauth2.Token, error) {
	t, err := s.ts.Token()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	changed := t.AccessToken != s.last
	s.last = t.AccessToken
	s.mu.Unlock()
	if changed {
		s.save(t)
	}
	return t, nil
}

func (s *savingSource) save(t *oauth2.Token) {
	rec := s.rec
	rec.Token = t
	if err := s.h.store.SaveToken(context.Background(), &rec); err != nil {
		s.h.logger.Warn("could not store the OAuth token", "error", err)
	}
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

// recordIssuer returns hc with a transport that notes the issuer of the
// authorization server metadata the SDK's handler fetches, so that tokens
// are stored under it.
func (h *Handler) recordIssuer(hc *http.Client) *http.Client {
	return wrapClient(hc, h.noteIssuer)
}

// noteIssuer is the [middleware] of [Handler.recordIssuer].
func (h *Handler) noteIssuer(base http.RoundTripper, req *http.Request) (*http.Response, error) {
	resp, err := base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	m, resp, err := peekAuthServerMetadata(req, resp)
	if m != nil && m.Issuer != "" {
		h.issuer.Store(&m.Issuer)
	}
	return resp, err
}

// authServerMetadata is what a Handler reads of the authorization
// server metadata the SDK's handlers fetch.
type authServerMetadata struct {
	Issuer        string `json:"issuer"`
	TokenEndpoint string `json:"token_endpoint"`
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

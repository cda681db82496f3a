package main

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// checkPerUser checks what oauth.per_user of server i needs of the rest of
// the configuration: a gateway that authenticates its clients, per_client
// upstream sessions, and a public redirect URL whose path is free.
func (v *validator) checkPerUser(c *Config, s *Server, i int) {
	o := s.OAuth
	if o == nil || !o.PerUser {
		return
	}
	at := func(path ...any) []any { return append([]any{"servers", i, "oauth"}, path...) }
	if c.Auth == nil {
		v.fail("per_user needs the gateway to authenticate its clients (auth: jwt or bearer): an anonymous client has no credentials of its own", at("per_user")...)
	}
	if s.UpstreamSessions != upstreamPerClient {
		v.fail("per_user needs upstream_sessions: per_client (each client's calls go on a session authorized as its user)", "servers", i, "upstream_sessions")
	}
	if o.RedirectURL == "" {
		v.fail("missing: per_user needs the gateway's public URL that the authorization server sends users back to, such as https://gateway.example.com/oauth/callback", at()...)
		return
	}
	cb, err := oauth.NewCallback(o.RedirectURL, oauth.CallbackConfig{})
	if err != nil {
		v.fail(strings.TrimPrefix(err.Error(), "bad parameter: "), at("redirect_url")...)
		return
	}
	p := cb.Path()
	if p == c.Path || (c.SSEPath != "" && p == c.SSEPath) || slices.Contains(reservedPaths, p) || strings.HasPrefix(p, "/.well-known/") {
		v.fail(fmt.Sprintf("the path %s is the gateway's for something else", p), at("redirect_url")...)
	}
}

// callback returns the callback of the per_user redirect URL redirect,
// made if needed, and served at once when the gateway serves already. Two
// redirect URLs with one path are an error.
func (a *authorizers) callback(redirect string) (*oauth.Callback, error) {
	cb, err := oauth.NewCallback(redirect, oauth.CallbackConfig{})
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if have, ok := a.callbacks[cb.Path()]; ok {
		if have.RedirectURL() != cb.RedirectURL() {
			return nil, fmt.Errorf("its path is that of %s already", have.RedirectURL())
		}
		return have, nil
	}
	if a.callbacks == nil {
		a.callbacks = map[string]*oauth.Callback{}
	}
	a.callbacks[cb.Path()] = cb
	if a.mux != nil {
		a.mux.Handle(cb.Path(), cb)
	}
	return cb, nil
}

// mount serves the callbacks on mux, and those made later.
func (a *authorizers) mount(mux *http.ServeMux) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mux = mux
	for p, cb := range a.callbacks {
		mux.Handle(p, cb)
	}
}

// perUserOptions are the connector options of a per_user upstream, after
// opts (its allow list).
func (g *gateway) perUserOptions(s Server, opts []mcp.Option) ([]mcp.Option, error) {
	o := s.OAuth
	cb, err := g.logins.callback(o.RedirectURL)
	if err != nil {
		return nil, err
	}
	cfg := oauth.Config{
		ClientMetadataURL:     o.ClientMetadataURL,
		ClientID:              o.ClientID,
		ClientSecret:          o.secret,
		ClientName:            o.ClientName,
		NoDynamicRegistration: o.NoDynamicRegistration,
	}
	if o.ClientName == "" {
		cfg.ClientName = gatewayName
	}
	if scopes := slices.Clone(o.Scopes); len(scopes) > 0 {
		cfg.Scopes = func([]string) []string { return scopes }
	}
	if dir := g.config().TokenDir; dir != "" {
		cfg.Store = g.logins.store(tokenFile(dir, s.Name))
	}
	return append(opts, mcp.OptOAuthPerUser(cfg, cb)), nil
}

// userAuthorizations counts the users of a per_user upstream by the state
// of their authorization (never naming one).
type userAuthorizations struct {
	Authorized int `json:"authorized"`
	Pending    int `json:"pending"`
	Failed     int `json:"failed"`
}

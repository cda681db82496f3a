package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"

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
		v.fail(perUserNeedsAuth, at("per_user")...)
	}
	if s.UpstreamSessions != upstreamPerClient {
		v.fail("per_user needs upstream_sessions: per_client (each client's calls go on a session authorized as its user)", "servers", i, "upstream_sessions")
	}
	if o.exchanges() {
		// Nobody is sent to an authorization server: no redirect.
		return
	}
	v.checkCallback(c, o.RedirectURL, at)
}

// perUserNeedsAuth is the error of per_user in a gateway that does not
// authenticate its clients.
const perUserNeedsAuth = "per_user needs the gateway to authenticate its clients (auth: jwt or bearer): an anonymous client has no credentials of its own"

// checkCallback checks the redirect URL of a per_user section at at: it
// is given, is a callback's URL, and its path is not the gateway's for
// something else.
func (v *validator) checkCallback(c *Config, redirect string, at func(...any) []any) {
	if redirect == "" {
		v.fail("missing: per_user needs the gateway's public URL that the authorization server sends users back to, such as https://gateway.example.com/oauth/callback", at()...)
		return
	}
	cb, err := oauth.NewCallback(redirect, oauth.CallbackConfig{})
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
	cb, err := oauth.NewCallback(redirect, oauth.CallbackConfig{Relay: a.relay})
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
	if a.relay != nil {
		// Redirects of authorizations started here may reach another
		// replica, and theirs this one.
		if a.relayCtx == nil {
			a.relayCtx, a.stopRelay = context.WithCancel(context.Background())
		}
		a.listening.Add(1)
		go func() {
			defer a.listening.Done()
			if err := cb.ListenRelay(a.relayCtx); err != nil && a.relayCtx.Err() == nil {
				a.logger.Error("relaying authorization redirects between replicas stopped", "error", err)
			}
		}()
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
	cb, err := g.logins.callback(s.OAuth.RedirectURL)
	if err != nil {
		return nil, err
	}
	// The upstream's own session, which lists, is authorized by the
	// gateway's operator, as a shared upstream's is: most servers that
	// want a user's token want one for everything, listing included.
	own := g.authCodeConfig(s)
	own.Authorize, own.RedirectURL = g.logins.operatorAuthorize(cb), cb.RedirectURL()
	users := g.authCodeConfig(s)
	users.Flights = g.sharedFlights()
	return append(opts, mcp.OptOAuth(oauth.AuthorizationCode(own)), mcp.OptOAuthPerUser(mcp.UserAuthorizationCode(users, cb))), nil
}

// operatorAuthorize lets the gateway's operator authorize the own session
// of a per_user upstream: the authorization URL is printed on standard
// error (with a log record pointing at it), as for a shared upstream, and
// the authorization server's redirect comes back to cb, the users'
// callback, under no user's name.
func (a *authorizers) operatorAuthorize(cb *oauth.Callback) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		e, err := cb.Expect("", args.URL)
		if err != nil {
			return nil, err
		}
		defer e.Close()
		fmt.Fprintf(promptWriter{a.logger, os.Stderr}, "\nTo let the gateway list the tools of an upstream whose users act as themselves, open this URL in a browser and authorize:\n\n%s\n\n", args.URL)
		return e.Wait(ctx)
	}
}

// userAuthorizations counts the users of a per_user upstream by the state
// of their authorization (never naming one).
type userAuthorizations struct {
	Authorized int `json:"authorized"`
	Pending    int `json:"pending"`
	Failed     int `json:"failed"`
}

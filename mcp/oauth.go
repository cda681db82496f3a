package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// ErrAuthorizationPending is wrapped by the error of a call made while the
// connector waits for an authorization (see OptOAuth). It also wraps
// toolkit.ErrUnavailable. It is oauth.ErrAuthorizationPending.
var ErrAuthorizationPending = oauth.ErrAuthorizationPending

// OptOAuth makes an HTTP connector authorize itself with OAuth when the
// server answers 401 Unauthorized (or 403 Forbidden with
// insufficient_scope), with flow, one of the oauth package's flows, given
// with the error of its constructor, as in
// OptOAuth(oauth.ClientCredentials(id, secret)):
// oauth.AuthorizationCode (a user authorizes, see oauth.Config),
// oauth.ClientCredentials and oauth.ClientCredentialsJWT (no user
// involved), oauth.Enterprise (SEP-990, "cross-app access"),
// oauth.TokenExchange (RFC 8693: the user's own token, carried by the
// context given to Run, is exchanged for one of the server) or
// oauth.FromHandler (an auth.OAuthHandler of the application's own, which
// the connector cannot tell waits for a user: it reports no pending
// authorization). A non-nil err makes New fail with it, naming the
// option.
//
// While the user authorizes, and after a failed authorization until the
// next attempt, the connector's state is toolkit.StatusNeedsAuthorization
// with the reason in LastError, and calls fail at once with
// ErrAuthorizationPending; the connector goes on by itself once
// authorized. The person's part is not bound by Timeouts.Connect (an
// authorization takes at most ten minutes, then a new one asks again).
// Tokens never appear in logs, errors or the connector's state. It
// applies to streamable HTTP and to the legacy HTTP+SSE transport alike
// (the SDK's SSE transport has no OAuth handler: the connector authorizes
// its requests with an oauth.Transport); stdio connectors and OptDialer
// ignore the option. The requests of the flow go through the connector's
// HTTP client (OptHTTPClient) without the headers of OptHeader, unless the
// flow's configuration sets an HTTP client, and only to public https
// destinations or the server's own origin, unless OptOAuthAllow allows
// others.
func OptOAuth(flow *oauth.Flow, err error) Option {
	return func(o *options) error {
		if err == nil && flow == nil {
			err = fmt.Errorf("%w: nil flow", errs.ErrBadParameter)
		}
		if err != nil {
			return oauthOptionError("OptOAuth", err)
		}
		o.oauth = &oauthSetup{flow: flow}
		return nil
	}
}

// OptOAuthAllow lets the requests of the connector's OAuth flow reach
// destinations it otherwise refuses. Every request of the flow (metadata
// discovery, registration, token requests, refreshes) goes only to public
// https destinations or to the server's own origin (scheme, host and
// port), whatever the server's metadata names: a server cannot make the
// connector send requests to services on its network. Give here an
// authorization server on a private network, or on the loopback interface:
// an origin ("http://127.0.0.1:8080", "https://login.corp.example") allows
// that origin, a host ("localhost", "10.1.2.3") every port and scheme of
// it (see oauth.NewAllowList). A refused request fails the authorization
// with an error wrapping oauth.ErrDestinationRefused, which names the
// destination and why. An entry that is neither an origin nor a host is
// an error naming the option.
func OptOAuthAllow(destinations ...string) Option {
	return func(o *options) error {
		l, err := oauth.NewAllowList(destinations...)
		if err != nil {
			return oauthOptionError("OptOAuthAllow", err)
		}
		o.oauthAllow = l
		return nil
	}
}

// oauthOptionError names the option in err, an error of the oauth package
// that wraps ErrBadParameter, as the connector's other options do.
func oauthOptionError(name string, err error) error {
	return fmt.Errorf("%w: %s: %s", errs.ErrBadParameter, name, strings.TrimPrefix(err.Error(), errs.ErrBadParameter.Error()+": "))
}

// oauthSetup is the OAuth flow of one connector and, once the connector
// first dials, its handler.
type oauthSetup struct {
	flow *oauth.Flow

	once  sync.Once
	built atomic.Pointer[oauth.Handler]
}

// oauthHandler returns the OAuth handler of the connector's HTTP
// transport, or nil without OAuth.
func (c *Connector) oauthHandler(ctx context.Context) auth.OAuthHandler {
	if h := userHandlerOf(ctx); h != nil {
		// A client's upstream session, authorized as its user.
		return h
	}
	h := c.oauthHandlerOf(ctx)
	if h == nil {
		return nil
	}
	return h
}

// oauthHandlerOf returns the connector's OAuth handler, made at the first
// call, or nil without OAuth.
func (c *Connector) oauthHandlerOf(ctx context.Context) *oauth.Handler {
	s := c.o.oauth
	if s == nil {
		return nil
	}
	s.once.Do(func() {
		s.built.Store(oauth.NewHandler(ctx, s.flow, oauth.HandlerConfig{
			Resource:   c.url,
			Logger:     c.logger,
			HTTPClient: c.link.httpClient,
			Allow:      c.o.oauthAllow,
			OnChange:   c.oauthChanged,
		}))
	})
	return s.built.Load()
}

// oauthChanged applies to the state what the OAuth handler's Pending
// says now, and has the supervisor report it: a connector that waits for
// an authorization says so (and why) at once, and one whose session
// outlived the wait is ready again.
func (c *Connector) oauthChanged() {
	_, _, err := c.oauthWait()
	c.setState(func(s *toolkit.ConnectorState) {
		switch {
		case err != nil:
			s.Status, s.LastError = toolkit.StatusNeedsAuthorization, authReason(err)
		case s.Status == toolkit.StatusNeedsAuthorization && c.life.cur != nil:
			s.Status, s.LastError = toolkit.StatusReady, ""
		}
	})
	c.signal(sigAuth)
}

// oauthPending returns an error wrapping ErrAuthorizationPending, with
// the reason, while the connector waits for an authorization: the user is
// asked, or a failed one is waited out.
func (c *Connector) oauthPending() error {
	s := c.o.oauth
	if s == nil {
		return nil
	}
	if _, err := s.built.Load().Pending(); err != nil {
		return fmt.Errorf("%w: server %s", err, c.label())
	}
	return nil
}

// oauthWait returns, while the connector waits for an authorization, why
// (an error wrapping ErrAuthorizationPending), whether it is a failure
// waited out, and a channel closed when that changes; nil otherwise.
func (c *Connector) oauthWait() (changed <-chan struct{}, failed bool, err error) {
	s := c.o.oauth
	if s == nil {
		return nil, false, nil
	}
	changed, err = s.built.Load().Pending()
	var pe *oauth.PendingError
	if errors.As(err, &pe) {
		failed = !pe.RetryAt.IsZero()
	}
	return changed, failed, err
}

// oauthStop ends the authorization the connector has in flight, if any.
func (c *Connector) oauthStop() {
	if s := c.o.oauth; s != nil {
		if h := s.built.Load(); h != nil {
			h.Stop()
		}
	}
}

// authReason is the text of the state that waits for an authorization.
func authReason(err error) string {
	var pe *oauth.PendingError
	if errors.As(err, &pe) {
		return "needs authorization: " + pe.Reason
	}
	return err.Error()
}

package main

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// checkTokenExchange checks the oauth section of server i whose grant is
// token_exchange or enterprise: each user's own token, verified by
// auth.jwt, is exchanged for one of the upstream, so it needs per_user,
// the client's ID, and none of what goes with sending a person to
// authorize.
func (v *validator) checkTokenExchange(s *Server, i int) {
	o := s.OAuth
	at := func(path ...any) []any { return append([]any{"servers", i, "oauth"}, path...) }
	if o.ClientID == "" {
		v.fail(fmt.Sprintf("missing: the %s grant needs the client's ID", o.Grant), at("client_id")...)
	}
	if !o.PerUser {
		v.fail(fmt.Sprintf("the %s grant exchanges each user's own %s: it needs per_user: true", o.Grant, exchangedToken(o.Grant)), at("grant")...)
	} else if s.UpstreamSessions == "" {
		s.UpstreamSessions = upstreamPerClient
	}
	for _, k := range []struct {
		key string
		set bool
	}{{"redirect_url", o.RedirectURL != ""}, {"client_name", o.ClientName != ""}, {"client_metadata_url", o.ClientMetadataURL != ""}, {"no_dynamic_registration", o.NoDynamicRegistration}} {
		if k.set {
			v.fail(fmt.Sprintf("goes with grant authorization_code (%s sends nobody to authorize)", o.Grant), at(k.key)...)
		}
	}
}

// exchanges reports whether the grant exchanges each user's own token
// (token_exchange, enterprise): nobody is sent to authorize.
func (o *OAuth) exchanges() bool {
	return o.Grant == grantTokenExchange || o.Grant == grantEnterprise
}

// exchangedToken names the users' token a grant exchanges.
func exchangedToken(grant string) string {
	if grant == grantEnterprise {
		return "ID token"
	}
	return "access token"
}

// checkEnterprise checks the IdP fields of an oauth section: required
// with grant enterprise (idp_issuer an absolute URL, idp_client_id),
// refused with any other; idp_client_secret_env must name a set
// variable.
func (v *validator) checkEnterprise(o *OAuth, at func(path ...any) []any) {
	if o.Grant != grantEnterprise {
		for _, k := range []struct {
			key string
			set bool
		}{{"idp_issuer", o.IdPIssuer != ""}, {"idp_client_id", o.IdPClientID != ""}, {"idp_client_secret_env", o.IdPClientSecretEnv != ""}} {
			if k.set {
				v.fail("goes with grant enterprise", at(k.key)...)
			}
		}
		return
	}
	if u, err := url.Parse(o.IdPIssuer); err != nil || !u.IsAbs() || u.Host == "" {
		v.fail("missing: the enterprise grant needs the issuer URL of the identity provider", at("idp_issuer")...)
	}
	o.IdPClientID = v.expand(o.IdPClientID, at("idp_client_id")...)
	if o.IdPClientID == "" {
		v.fail("missing: the enterprise grant needs the gateway's client ID at the identity provider", at("idp_client_id")...)
	}
	o.idpSecret = ""
	if o.IdPClientSecretEnv != "" {
		val, ok := os.LookupEnv(o.IdPClientSecretEnv)
		if !ok || val == "" {
			v.fail(fmt.Sprintf("environment variable %s is not set", o.IdPClientSecretEnv), at("idp_client_secret_env")...)
		}
		o.idpSecret = val
	}
}

// checkTokenExchangeAuth checks that the users' tokens of a token_exchange
// upstream are access tokens of an identity provider: the gateway
// verifies them with auth.jwt (configured bearer tokens are the
// gateway's own, which no authorization server would exchange).
//
// Beside auth.bearer, only the clients authenticated by auth.jwt (the
// principals jwt:SUBJECT) can use such an upstream: a configured token is
// the gateway's own credential, never sent anywhere, so the calls of its
// clients (the principals token:N) are refused (mcp.ErrNoSubjectToken).
// That is allowed, and said as a warning.
func (v *validator) checkTokenExchangeAuth(c *Config, s *Server, i int) {
	o := s.OAuth
	if o == nil || !o.exchanges() || !o.PerUser || c.Auth == nil {
		return
	}
	if c.Auth.JWT == nil {
		v.fail(fmt.Sprintf("the %s grant exchanges the %ss the clients present: it needs auth.jwt (tokens of an identity provider the upstream's authorization server trusts)", o.Grant, exchangedToken(o.Grant)), "servers", i, "oauth", "grant")
		return
	}
	if o.Grant == grantEnterprise && o.IdPIssuer != "" && !sameIssuer(o.IdPIssuer, c.Auth.JWT.Issuer) {
		// The ID tokens auth.jwt accepts are its issuer's: sent to
		// another IdP, they would reach one that did not issue them.
		v.fail(fmt.Sprintf("the users' ID tokens are issued by auth.jwt.issuer %q: the enterprise grant exchanges them only at that identity provider", c.Auth.JWT.Issuer), "servers", i, "oauth", "idp_issuer")
	}
	if c.Auth.Bearer != nil {
		v.warn("only the clients authenticated by auth.jwt (principals jwt:*) can use this upstream: the calls of clients with a token of auth.bearer (principals token:N) are refused, since the gateway's own tokens are never sent to be exchanged", "servers", i, "oauth", "grant")
	}
}

// sameIssuer reports whether two issuer identifiers name the same
// issuer: equal but for a trailing slash.
func sameIssuer(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}

// tokenExchangeOptions are the connector options of an upstream whose
// grant is token_exchange or enterprise: each user's calls go with a
// token exchanged for the token of their own latest call (directly, or
// through an identity assertion grant of the IdP). The upstream's own
// session, which lists, authenticates as the client itself (client
// credentials) when the server wants a token for that too and a secret
// is configured; without one it goes without.
func tokenExchangeOptions(s Server) []mcp.Option {
	o := s.OAuth
	var opts []mcp.Option
	if o.secret != "" {
		opts = append(opts, mcp.OptOAuth(oauth.ClientCredentials(o.ClientID, o.secret)))
	}
	if o.Grant == grantEnterprise {
		return append(opts, mcp.OptOAuthPerUser(mcp.UserEnterprise(oauth.EnterpriseConfig{
			IdPIssuer:       o.IdPIssuer,
			IdPClientID:     o.IdPClientID,
			IdPClientSecret: o.idpSecret,
			ClientID:        o.ClientID,
			ClientSecret:    o.secret,
			Scopes:          slices.Clone(o.Scopes),
		})))
	}
	return append(opts, mcp.OptOAuthPerUser(mcp.UserTokenExchange(oauth.TokenExchangeConfig{
		ClientID:     o.ClientID,
		ClientSecret: o.secret,
		Audience:     o.Audience,
		Scopes:       slices.Clone(o.Scopes),
	})))
}

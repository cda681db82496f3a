package main

import (
	"slices"

	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// checkTokenExchange checks the oauth section of server i whose grant is
// token_exchange: each user's own access token, verified by auth.jwt, is
// exchanged for one of the upstream, so it needs per_user, the client's
// ID, and none of what goes with sending a person to authorize.
func (v *validator) checkTokenExchange(s *Server, i int) {
	o := s.OAuth
	at := func(path ...any) []any { return append([]any{"servers", i, "oauth"}, path...) }
	if o.ClientID == "" {
		v.fail("missing: the token_exchange grant needs the client's ID", at("client_id")...)
	}
	if !o.PerUser {
		v.fail("the token_exchange grant exchanges each user's own access token: it needs per_user: true", at("grant")...)
	} else if s.UpstreamSessions == "" {
		s.UpstreamSessions = upstreamPerClient
	}
	for _, k := range []struct {
		key string
		set bool
	}{{"redirect_url", o.RedirectURL != ""}, {"client_name", o.ClientName != ""}, {"client_metadata_url", o.ClientMetadataURL != ""}, {"no_dynamic_registration", o.NoDynamicRegistration}} {
		if k.set {
			v.fail("goes with grant authorization_code (token_exchange sends nobody to authorize)", at(k.key)...)
		}
	}
}

// checkTokenExchangeAuth checks that the users' tokens of a token_exchange
// upstream are access tokens of an identity provider: the gateway
// verifies them with auth.jwt (configured bearer tokens are the
// gateway's own, which no authorization server would exchange).
func (v *validator) checkTokenExchangeAuth(c *Config, s *Server, i int) {
	if o := s.OAuth; o != nil && o.Grant == grantTokenExchange && o.PerUser && c.Auth != nil && c.Auth.JWT == nil {
		v.fail("the token_exchange grant exchanges the access tokens the clients present: it needs auth.jwt (tokens of an identity provider the upstream's authorization server trusts)", "servers", i, "oauth", "grant")
	}
}

// tokenExchangeOptions are the connector options of an upstream whose
// grant is token_exchange: each user's calls go with a token exchanged
// for the access token of their own latest call. The upstream's own
// session, which lists, authenticates as the client itself (client
// credentials) when the server wants a token for that too and a secret
// is configured; without one it goes without.
func tokenExchangeOptions(s Server) []mcp.Option {
	o := s.OAuth
	var opts []mcp.Option
	if o.secret != "" {
		opts = append(opts, mcp.OptOAuthClientCredentials(o.ClientID, o.secret))
	}
	return append(opts, mcp.OptOAuthPerUserTokenExchange(oauth.TokenExchangeConfig{
		ClientID:     o.ClientID,
		ClientSecret: o.secret,
		Audience:     o.Audience,
		Scopes:       slices.Clone(o.Scopes),
	}))
}

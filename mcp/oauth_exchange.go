package mcp

import "github.com/llmkit/toolkit/mcp/oauth"

// OptOAuthTokenExchange makes an HTTP connector authorize itself with
// OAuth 2.0 token exchange (RFC 8693), as described at
// [oauth.TokenExchange]: when the server answers 401, the user's own
// access token ([oauth.TokenExchangeConfig.SubjectToken], by default the
// one [oauth.WithSubjectToken] put in the context) is exchanged at the
// server's authorization server, which trusts the identity provider that
// issued it, for a token of the server (requested_token_type
// access_token, resource the server's URL). Tokens are kept per user,
// never served for another, and exchanged again before they expire; a
// refused exchange fails the connection attempt or the call with an error
// wrapping [oauth.ErrExchangeRefused] that quotes no token.
//
// The user is the one the context of the connection carries: the context
// given to [Connector.Run] (its values reach each connection, and the
// calls of a connector share it). An application that acts for one user
// runs the connector with that user's token in its context, or gives a
// SubjectToken function that returns it; one connection serves one user.
// The requests of the flow go only where [OptOAuth] says (see
// [OptOAuthAllow]).
func OptOAuthTokenExchange(cfg oauth.TokenExchangeConfig) Option {
	return oauthOption("OptOAuthTokenExchange", func() (*oauth.Flow, error) { return oauth.TokenExchange(cfg) })
}

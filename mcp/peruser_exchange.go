package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// ErrNoSubjectToken is wrapped by the error of [User.SubjectToken] when
// none of the user's calls came with a bearer token an identity provider
// issued: the server face authenticates its clients some other way, or
// the user presented a credential of the program's own (such as a
// configured bearer token), which is never sent to anyone to exchange.
var ErrNoSubjectToken = errors.New("no token of the user that an identity provider issued is known: a credential of this program's own is never exchanged")

// maxUserSubjects is how many subject tokens of one user the handler of a
// connector made with OptOAuthPerUser with UserTokenExchange keeps the
// exchanged
// tokens of, unless its configuration says: a user's client presents a
// new token now and then, and the old ones expire.
const maxUserSubjects = 8

// UserTokenExchange is the flow of OptOAuthPerUser that makes an HTTP
// connector act upstream as each user of a program that serves many (a
// gateway), with a token obtained by exchanging the access token that
// user's client presented
// to the program (OAuth 2.0 token exchange, RFC 8693, see
// [oauth.TokenExchange]): for servers whose authorization server trusts
// the identity provider that issued the users' tokens. Nobody is asked
// to authorize anything.
//
// Each user's flow is oauth.TokenExchange(cfg) whose SubjectToken is
// [User.SubjectToken] (cfg.SubjectToken must be
// nil): each user's calls go on an upstream session of their client's
// own (OptPerClient is implied), authorized with the token exchanged for
// that user's own, never another's. The user's token is the bearer token
// of their latest call, as the server face verified it, when an identity
// provider issued it (a session that implements [bridge.CallCredentials]:
// an [github.com/llmkit/toolkit/mcp/mcpserver.Server] behind
// WithBearerAuth, over streamable HTTP, whose verifier named the token's
// issuer); a credential of the program's own never leaves it, so its
// users' calls fail with ErrNoSubjectToken. A newer token replaces the
// kept one, and is exchanged when
// the upstream token expires. A call whose caller is no authenticated
// user fails with ErrNoUser; one whose user's token is unknown fails
// with an error wrapping ErrNoSubjectToken; one whose token the
// authorization server refuses fails with an error wrapping
// [oauth.ErrExchangeRefused]. No token is logged or quoted in an error.
// cfg.MaxSubjects bounds the tokens kept per user (default 8).
//
// The connector's own session (listing, subscriptions) keeps the
// connector's own credentials, as with OptOAuthPerUser.
func UserTokenExchange(cfg oauth.TokenExchangeConfig) (UserFlow, error) {
	if cfg.SubjectToken != nil {
		return nil, fmt.Errorf("%w: UserTokenExchange: TokenExchangeConfig.SubjectToken must be nil: each user's token is the one their calls came with", errs.ErrBadParameter)
	}
	if _, err := oauth.TokenExchange(cfg); err != nil {
		return nil, oauthOptionError("UserTokenExchange", err)
	}
	if cfg.MaxSubjects == 0 {
		cfg.MaxSubjects = maxUserSubjects
	}
	return func(u *User) (*oauth.Flow, error) {
		c := cfg
		c.SubjectToken = u.SubjectToken
		return oauth.TokenExchange(c)
	}, nil
}

// SubjectToken returns the access token that the user's client presented
// with their latest call through a server face that verified it (see
// [bridge.CallCredentials]), of type [oauth.TokenTypeAccessToken], for
// [oauth.TokenExchangeConfig.SubjectToken]; ctx is not read. Without one,
// it fails with an error wrapping ErrNoSubjectToken. The token is the
// user's credential: never log it.
func (u *User) SubjectToken(context.Context) (token, tokenType string, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.bearer == "" {
		return "", "", fmt.Errorf("%w: server %s", ErrNoSubjectToken, u.c.serverName())
	}
	return u.bearer, oauth.TokenTypeAccessToken, nil
}

// UserEnterprise is the flow of OptOAuthPerUser that makes an HTTP
// connector act upstream as each user of a program that serves many (a
// gateway) with enterprise-managed authorization (SEP-990, "cross-app
// access", see [oauth.Enterprise]):
// the token that user's client presented to the program, which must be
// an OpenID Connect ID token of the enterprise identity provider (as the
// program's bearer authentication verified it), is exchanged at the IdP
// for an identity assertion grant (ID-JAG), which the server's
// authorization server turns into that user's access token. Nobody is
// asked to authorize anything.
//
// Each user's flow is oauth.Enterprise(cfg) whose IDToken is the user's
// token ([User.SubjectToken]; cfg.IDToken must be
// nil), under the rules of [UserTokenExchange]: each user's
// calls go on an upstream session of their client's own, with their own
// access token, never another's; a user whose token is unknown fails with
// an error wrapping ErrNoSubjectToken; one refused by the IdP or the
// authorization server with an error wrapping [oauth.ErrExchangeRefused].
// cfg.MaxSubjects bounds the tokens kept per user (default 8).
func UserEnterprise(cfg oauth.EnterpriseConfig) (UserFlow, error) {
	if cfg.IDToken != nil {
		return nil, fmt.Errorf("%w: UserEnterprise: EnterpriseConfig.IDToken must be nil: each user's ID token is the one their calls came with", errs.ErrBadParameter)
	}
	check := cfg
	check.IDToken = func(context.Context) (string, error) { return "", nil }
	if _, err := oauth.Enterprise(check); err != nil {
		return nil, oauthOptionError("UserEnterprise", err)
	}
	if cfg.MaxSubjects == 0 {
		cfg.MaxSubjects = maxUserSubjects
	}
	return func(u *User) (*oauth.Flow, error) {
		c := cfg
		c.IDToken = func(ctx context.Context) (string, error) {
			tok, _, err := u.SubjectToken(ctx)
			return tok, err
		}
		return oauth.Enterprise(c)
	}, nil
}

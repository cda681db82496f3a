package oauth

import (
	"crypto"
	"fmt"
	"net/http"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit/internal/errs"
)

// Config configures OAuth 2.1 authorization with the authorization code
// flow (see [AuthorizationCode]). The flow is the one of the MCP Go SDK's
// auth.AuthorizationCodeHandler: protected resource metadata discovery
// (RFC 9728, from the WWW-Authenticate challenge, then the well-known
// locations), authorization server metadata (RFC 8414 and OpenID
// discovery, with the 2025-03-26 fallbacks: default endpoints at the
// server's root, and, for a server without resource metadata, the issuer
// its root metadata names on its own origin), PKCE (S256), resource
// indicators (RFC 8707), scope selection from the challenge or the
// resource's scopes_supported, step-up authorization on
// insufficient_scope, the RFC 9207 iss check, refresh tokens and the token
// endpoint authentication method the server supports.
//
// The client is identified, in this order of preference, by its client ID
// metadata document (ClientMetadataURL, when the server supports them), by
// a pre-registered client (ClientID), or by dynamic client registration
// (RFC 7591, unless NoDynamicRegistration is set), made once per
// authorization server and redirect URI with the authentication method
// the server supports, and kept ([RegistrationStore]).
type Config struct {
	// Authorize lets the user authorize the client: it is given the
	// authorization URL and returns the code, state and iss of the redirect
	// to RedirectURL. Required. [LoopbackAuthorizer.Authorize] is one for
	// command-line programs.
	Authorize auth.AuthorizationCodeFetcher
	// RedirectURL is where the authorization server sends the user back.
	// Required.
	RedirectURL string

	// ClientMetadataURL is the https URL of the client's ID metadata
	// document, used as its client ID by servers that support them.
	ClientMetadataURL string
	// ClientID and ClientSecret identify a client registered with the
	// authorization server beforehand (ClientSecret is empty for a public
	// client).
	ClientID, ClientSecret string
	// ClientName is the client name sent in a dynamic client registration
	// (default: none).
	ClientName string
	// NoDynamicRegistration disables dynamic client registration.
	NoDynamicRegistration bool

	// Scopes, when set, chooses the scopes to ask for from those the server
	// names (in its challenge or its resource metadata).
	Scopes func(discovered []string) []string
	// NoRefreshToken stops the client from asking for offline_access when
	// the authorization server supports it. When it asks, the
	// authorization URL also asks the user to consent (prompt=consent), as
	// OpenID Connect Core §11 requires for offline_access to count: an
	// OpenID provider issues no refresh token otherwise.
	NoRefreshToken bool

	// Store keeps tokens across restarts (nil: in memory only), and the
	// client's dynamic registrations when it is a [RegistrationStore]
	// (else they are kept in memory). See [NewFileTokenStore].
	Store TokenStore
	// Flights, for a program run as several replicas that share Store,
	// shares their authorizations in flight (see [FlightRegistry]): a
	// user whose authorization is needed on several replicas at once is
	// asked once, with the URL of the first, and the others wait for the
	// token it brings to Store (Authorize is then called with that URL,
	// see [Follows]); a registry that is a [FlightWatcher] wakes them as
	// soon as it is there. It is a [Handler]'s own when nil, or when it
	// fails (a warning is logged).
	Flights FlightRegistry
	// HTTPClient makes the requests to the authorization server and the
	// metadata requests (default: [HandlerConfig.HTTPClient]). They go only
	// where the package's rules let them (see [HandlerConfig.Allow]).
	HTTPClient *http.Client
}

// sdkConfig returns the configuration of the SDK's handler.
func (cfg *Config) sdkConfig(hc *http.Client) *auth.AuthorizationCodeHandlerConfig {
	sc := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              cfg.RedirectURL,
		AuthorizationCodeFetcher: askConsentForOffline(cfg.Authorize),
		ScopeFilter:              cfg.Scopes,
		RequestRefreshToken:      !cfg.NoRefreshToken,
		Client:                   hc,
	}
	if cfg.ClientMetadataURL != "" {
		sc.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: cfg.ClientMetadataURL}
	}
	if cfg.ClientID != "" {
		sc.PreregisteredClient = &oauthex.ClientCredentials{ClientID: cfg.ClientID}
		if cfg.ClientSecret != "" {
			sc.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: cfg.ClientSecret}
		}
	}
	if !cfg.NoDynamicRegistration && cfg.RedirectURL != "" {
		grants := []string{"authorization_code"}
		if !cfg.NoRefreshToken {
			grants = append(grants, "refresh_token")
		}
		sc.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs: []string{cfg.RedirectURL},
				ClientName:   cfg.ClientName,
				GrantTypes:   grants,
			},
		}
	}
	return sc
}

// A Flow is how a client gets its access tokens: the authorization code
// flow ([AuthorizationCode]), the client credentials grant with a secret
// ([ClientCredentials]) or a private key ([ClientCredentialsJWT]),
// enterprise-managed authorization ([Enterprise]), token exchange
// ([TokenExchange]), or a handler of the
// SDK's ([FromHandler]). [NewHandler] runs it for one protected resource.
// A Flow holds configuration only: one may serve several handlers.
type Flow struct {
	cfg         *Config
	clientCreds *oauthex.ClientCredentials
	assertion   *clientAssertion     // ClientCredentialsJWT
	enterprise  *EnterpriseConfig    // Enterprise
	exchange    *TokenExchangeConfig // TokenExchange
	handler     auth.OAuthHandler    // FromHandler
}

// badParameter returns an error wrapping toolkit.ErrBadParameter.
func badParameter(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errs.ErrBadParameter, fmt.Sprintf(format, args...))
}

// AuthorizationCode returns the authorization code flow of cfg, as
// described at [Config]. A cfg the SDK's handler refuses (no Authorize or
// RedirectURL, for one) gives an error wrapping toolkit.ErrBadParameter.
func AuthorizationCode(cfg Config) (*Flow, error) {
	if _, err := auth.NewAuthorizationCodeHandler(cfg.sdkConfig(nil)); err != nil {
		return nil, badParameter("%v", err)
	}
	return &Flow{cfg: &cfg}, nil
}

// ClientCredentials returns the OAuth client credentials grant (no user
// involved) of the SDK's extauth.ClientCredentialsHandler: the token
// endpoint is found through the resource's and the authorization server's
// metadata, and the client authenticates with its secret.
func ClientCredentials(clientID, clientSecret string) (*Flow, error) {
	creds := &oauthex.ClientCredentials{ClientID: clientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: clientSecret}}
	if _, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{Credentials: creds}); err != nil {
		return nil, badParameter("%v", err)
	}
	return &Flow{clientCreds: creds}, nil
}

// ClientCredentialsJWT returns the OAuth client credentials grant, like
// [ClientCredentials], where the client authenticates at the token endpoint
// with a JWT signed with its private key instead of a secret (the
// private_key_jwt method, RFC 7523 §2.2): each token request carries a new
// assertion whose iss and sub are clientID, whose aud is the authorization
// server's issuer identifier (its token endpoint when it publishes no
// metadata), with a unique jti and an expiry five minutes ahead.
//
// alg is the JWS algorithm (for example "ES256", "RS256", "PS256",
// "EdDSA"); empty chooses it from the key: ES256, ES384 or ES512 for an
// ECDSA key of the matching curve, RS256 for RSA, EdDSA for Ed25519.
// [ParsePrivateKeyPEM] reads a key from PEM.
func ClientCredentialsJWT(clientID string, key crypto.Signer, alg string) (*Flow, error) {
	if clientID == "" || key == nil {
		return nil, badParameter("a client ID and a key are required")
	}
	a, err := newClientAssertion(clientID, key, jose.SignatureAlgorithm(alg))
	if err != nil {
		return nil, badParameter("%v", err)
	}
	// The SDK's handler wants a client secret; it gets a random stand-in
	// that the transport replaces with an assertion.
	creds := &oauthex.ClientCredentials{ClientID: clientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: a.standIn}}
	return &Flow{clientCreds: creds, assertion: a}, nil
}

// Enterprise returns enterprise-managed authorization (the MCP extension
// SEP-990, "cross-app access"): when the server answers 401, the handler
// finds the server's authorization server (protected resource metadata,
// RFC 9728, and its metadata, with the MCP Go SDK), exchanges the user's ID
// token at the IdP for an identity assertion grant (ID-JAG, with RFC 8693
// token exchange through the SDK's oauthex.ExchangeToken), and presents it
// to the authorization server (the JWT bearer grant, RFC 7523),
// authenticating with the client's secret as the server's metadata says
// (client_secret_basic unless it supports only client_secret_post).
//
// Tokens are kept per user, told apart by a hash of their ID token
// ([EnterpriseConfig.IDToken] is called with each request's context), as
// [TokenExchange] describes: the token of one user is never served for
// another, and one user's exchange never waits for another's. A step
// refused by the IdP or the authorization server gives an error wrapping
// [ErrExchangeRefused] and the [ServerError].
//
// Unlike the SDK's extauth.EnterpriseHandler, the IdP's metadata need not
// advertise PKCE (no authorization code flow happens at the IdP here).
func Enterprise(cfg EnterpriseConfig) (*Flow, error) {
	if cfg.IDToken == nil || (cfg.IdPIssuer == "" && cfg.IdPTokenURL == "") || cfg.IdPClientID == "" || cfg.ClientID == "" {
		return nil, badParameter("IDToken, IdPIssuer or IdPTokenURL, IdPClientID and ClientID are required")
	}
	return &Flow{enterprise: &cfg}, nil
}

// FromHandler returns the flow of an SDK handler, for flows the other
// constructors do not configure. A [Handler] cannot tell when such a
// handler waits for a user, so it never reports a pending authorization;
// errors of the token endpoint still reach its callers without its answer.
func FromHandler(h auth.OAuthHandler) (*Flow, error) {
	if h == nil {
		return nil, badParameter("nil handler")
	}
	return &Flow{handler: h}, nil
}

// Package oauth is OAuth 2.1 for MCP, in both roles: a client that gets
// access tokens for the remote MCP servers it connects to, and a resource
// server that checks the access tokens its own MCP clients present. It is
// built on the MCP Go SDK's auth, auth/extauth and oauthex packages, never
// a hand-written OAuth client, and imports neither face of the toolkit:
// the connector (package mcp) wires the client role into its HTTP
// transports with its OptOAuth options, the server face (package
// mcp/mcpserver) the resource-server role with WithBearerAuth and
// WithProtectedResource.
//
// # Client role
//
// A [Flow] says how a client gets its tokens:
//
//   - [AuthorizationCode]: a person authorizes access, as the MCP
//     authorization spec says (protected resource metadata, authorization
//     server metadata, client ID metadata documents, pre-registration or
//     dynamic registration, PKCE, resource indicators, scope step-up,
//     refresh tokens: offline_access, with prompt=consent as OpenID
//     Connect Core §11 requires), with the SDK's
//     auth.AuthorizationCodeHandler; see
//     [Config]. Servers of the 2025-03-26 spec without resource metadata,
//     whose root metadata names an issuer with a path on their own origin,
//     are authorized through that issuer.
//   - [ClientCredentials] and [ClientCredentialsJWT]: a service account,
//     authenticated with a secret or with a JWT signed with its private
//     key (RFC 7523, private_key_jwt; [ParsePrivateKeyPEM] reads the key).
//   - [Enterprise]: enterprise-managed authorization (SEP-990): the user's
//     ID token exchanged at the IdP for an identity assertion grant, then a
//     JWT bearer grant at the server's authorization server.
//   - [TokenExchange]: token exchange (RFC 8693) of the user's own access
//     token, issued by an identity provider the server's authorization
//     server trusts, for a token of the server.
//   - [FromHandler]: any handler of the SDK's.
//
// [NewHandler] runs a flow for one protected resource (an MCP server's
// URL) as an auth.OAuthHandler, the SDK's streamable HTTP transport's
// OAuthHandler; [Transport] does the same at the HTTP level for transports
// without one (the legacy SSE transport). It never puts a token, or an
// authorization server's answer, in a log or an error.
//
// # Authorizations over time
//
// What a [Handler] does at each moment of a resource's authorization:
//
//   - No token, or the server refuses the one sent (401): the token is
//     refreshed once when it can be; otherwise an authorization starts,
//     one at a time for the resource and its token store across the
//     process. It asks the user once, with one URL, through
//     [Config.Authorize]; meanwhile [Handler.Pending] returns a
//     [PendingError] that says why (no token yet, the token expired
//     without a refresh token, the refresh failed, the server refused the
//     token) and requests fail at once with it ([ErrAuthorizationPending]),
//     except the one that started the authorization, which waits for it
//     within its context (unless sent with [NoWait]). The authorization
//     goes on whatever becomes of that request; [Handler.Stop] ends it.
//   - An authorization fails (the user refused, the authorization server
//     answered an error, no answer within ten minutes): the next one waits
//     one second, then two, four, ... up to five minutes, or longer when
//     the authorization server said so with Retry-After (429, 503; at most
//     an hour). Requests fail at once with the [PendingError] meanwhile.
//   - A token about to expire (ten seconds before) is refreshed before it
//     is sent, and each new token is stored.
//   - Dynamic registration: the client registers once per authorization
//     server and redirect URI, with the token endpoint authentication
//     method the server's metadata lists (none, with PKCE, for a public
//     client such as a command-line program with a loopback redirect;
//     else client_secret_post, else client_secret_basic), and keeps the
//     registration (client ID, secret and its expiry) beside its tokens
//     ([RegistrationStore]), so that later authorizations and restarts use
//     it. It registers again only when the server rejects the client
//     (invalid_client) or the registration expired.
//   - The authorization server answers an error: it reaches people as a
//     [ServerError], one line with its error code and description (cut to
//     [MaxErrorDescription]), never its body.
//
// # Tokens per user
//
// [Enterprise] and [TokenExchange] act for a user who is already signed
// in, whose credential (ID token, access token) a function reads from each
// request's context ([WithSubjectToken] puts one there): nobody is asked.
// Their tokens are kept per user, told apart by a hash of that
// credential, and never served for another user; each user's exchange
// runs on its own (one at a time per user), outside the one-at-a-time
// gate above, and so does its failure: an error wrapping
// [ErrExchangeRefused] for that user's requests, remembered for a few
// seconds. A token about to expire is exchanged again before it is sent.
//
// # Where a client's requests may go
//
// The documents a remote server and its authorization server publish say
// where the next request of a flow goes, so a hostile server could point
// them at services of the client's own network. Every request a [Handler]
// sends — protected resource and authorization server metadata
// discovery, dynamic registration, token requests and refreshes — goes
// only to an https URL whose address is public: never a loopback,
// private (RFC 1918, RFC 4193), link-local (the cloud metadata address
// among them), carrier-grade NAT, multicast, unspecified or otherwise
// reserved address, nor an IPv6 address that carries such an IPv4 one.
// The rule is checked on the URL and again, when the connection is made,
// on the address its name resolved to (through a transport with its own
// dialer, on the address it connected to; behind a proxy, or through a
// transport that is not an *http.Transport, on the addresses the name
// resolves to before the request). Two kinds of destinations are exempt:
// the protected resource's own origin (its scheme, host and port: a
// server may be its own authorization server, on a private network or
// on the loopback interface), and those the application names in
// [HandlerConfig.Allow] ([NewAllowList]; the connector's OptOAuthAllow).
// The IdP of an [Enterprise] flow, named by the application, is allowed
// too. A refused request fails the authorization with an error wrapping
// [ErrDestinationRefused] that names the destination's origin (never its
// path or query) and why, and is logged at warn level; a refused refresh
// leaves the request without a token, so that the server's 401 starts a
// new authorization.
//
// # Token storage
//
// With [Config.Store], tokens survive restarts: a [TokenStore] keeps each
// one as a [StoredToken] under the MCP server's URL and the issuer of the
// authorization server that issued it, so that two servers of one
// authorization server never share a token and a server that moves to
// another never overwrites the first one's. A stored token is used at the
// next start (refreshed when it expired) without asking the user again.
// A store that is also a [RegistrationStore] keeps the client's dynamic
// registrations as [StoredRegistration] values. [FileTokenStore] is both,
// in one JSON file, mode 0600, replaced atomically;
// [DefaultTokenStorePath] is where command-line programs keep it.
//
// A program that acts for several users with each one's own tokens (a
// gateway) gives each user's [Handler] its principal
// ([HandlerConfig.Principal]): its tokens are stored under the principal
// too, in a [PrincipalTokenStore] ([FileTokenStore] is one), and its
// authorizations are its own. A user's token never serves the program
// itself ([TokenStore.LoadToken] returns none) nor another user; the
// client's registration is shared.
//
// # Loopback authorizer
//
// A command-line program lets its user authorize with a
// [LoopbackAuthorizer] (RFC 8252): it prints the authorization URL for the
// user to open in a browser and receives the authorization server's
// redirect on a loopback listener. Its RedirectURL and Authorize method go
// into a [Config]. Only the redirect that carries the state of the
// authorization in progress counts: any other (a request forged by another
// local program, or by a web page that knows the port) is answered 400
// and the authorizer keeps waiting for the genuine one.
//
// # Redirects of many users
//
// A server program whose users authorize from their own browsers serves a
// [Callback] at the path of its public redirect URL: each authorization
// registers the state of its URL ([Callback.Expect]) and waits for the
// redirect that carries it ([Expected.Wait]). A redirect whose state no
// authorization waits for (forged, used, expired, or of a previous run of
// the program), or that repeats a parameter, is answered 400 and ends
// nothing, as does one whose query is longer than [MaxRedirectQuery]
// (414); of copies of one redirect arriving at once exactly one counts.
// The waits are bounded per principal and in all, and expire.
//
// # Resource-server role
//
// A [JWTVerifier] checks JWT access tokens (RFC 9068) against the key set
// an authorization server publishes: signature (RS, PS, ES and EdDSA
// algorithms, never none or HMAC), issuer, audience, expiry and
// not-before with a leeway, a subject (a token without sub, or with an
// empty one, is refused: it would stand for nobody), and the typ header
// (at+jwt, JWT or none; only at+jwt with
// [JWTConfig.RequireAccessTokenType]; other explicit types, such as logout
// tokens, and a typ that is not a string are refused). The key set is cached, fetched again
// after [JWTConfig.MaxAge], and at once for a token naming an unknown key
// (at most once per [JWTConfig.RefreshInterval]), so key rotation needs no
// restart. Its Verify method is an auth.TokenVerifier. Why a token was
// refused goes to the debug log only; tokens never.
//
// A protected resource describes itself with its metadata (RFC 9728),
// served by [HandleProtectedResourceMetadata] at the well-known
// locations [ProtectedResourceMetadataURL] computes, so that clients find
// the authorization server to get a token from.
package oauth

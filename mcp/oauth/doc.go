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
// A command-line program lets its user authorize access to a server:
//
//	login, err := oauth.NewLoopbackAuthorizer("127.0.0.1:0", os.Stderr)
//	...
//	defer login.Close()
//	flow, err := oauth.AuthorizationCode(oauth.Config{
//		Authorize:   login.Authorize,
//		RedirectURL: login.RedirectURL(),
//		Store:       oauth.NewFileTokenStore(path),
//	})
//	...
//	h := oauth.NewHandler(ctx, flow, oauth.HandlerConfig{Resource: server})
//	transport := &sdk.StreamableClientTransport{Endpoint: server, OAuthHandler: h}
//
// # Flows
//
// A [Flow] says how a client gets its tokens:
//
//   - [AuthorizationCode]: a person authorizes access, as the MCP
//     authorization spec says (metadata discovery, client ID metadata
//     documents, pre-registration or dynamic registration, PKCE, resource
//     indicators, scope step-up, refresh tokens), with the SDK's
//     auth.AuthorizationCodeHandler; see [Config].
//   - [ClientCredentials] and [ClientCredentialsJWT]: a service account,
//     authenticated with a secret or with a JWT signed with its private
//     key (RFC 7523; [ParsePrivateKeyPEM] reads the key).
//   - [Enterprise]: enterprise-managed authorization (SEP-990): the user's
//     ID token exchanged at the IdP for an identity assertion grant, then a
//     JWT bearer grant at the server's authorization server.
//   - [TokenExchange]: token exchange (RFC 8693) of the user's own access
//     token ([WithSubjectToken]) for a token of the server.
//   - [FromHandler]: any handler of the SDK's.
//
// # Handlers
//
// [NewHandler] runs a flow for one protected resource (an MCP server's
// URL) as an auth.OAuthHandler, the SDK's streamable HTTP transport's
// OAuthHandler; [Transport] does the same at the HTTP level for transports
// without one (the legacy SSE transport). A [Handler] refreshes tokens
// before they expire, runs one authorization at a time per resource and
// token store, backs off after a failed one, and meanwhile fails requests
// at once with a [PendingError] ([ErrAuthorizationPending], [NoWait],
// [Handler.Pending], [Handler.Stop]). The tokens of [Enterprise] and
// [TokenExchange] are kept per user and never served for another
// ([ErrExchangeRefused]). A handler never puts a token, or an
// authorization server's answer, in a log or an error ([ServerError]).
//
// Every request a handler sends goes only to an https URL whose address is
// public, checked on the URL and again on the address connected to,
// unless it goes to the protected resource's own origin or
// [HandlerConfig.Allow] names it ([NewAllowList]); a refusal wraps
// [ErrDestinationRefused].
//
// # Token storage
//
// With [Config.Store] tokens survive restarts: a [TokenStore] keeps each
// as a [StoredToken] under the server's URL and its authorization server's
// issuer, and a [RegistrationStore] keeps the client's dynamic
// registrations ([StoredRegistration]). [FileTokenStore] is both, in one
// file only its owner may read; [DefaultTokenStorePath] is where
// command-line programs keep it. A program acting for several users (a
// gateway) gives each user's handler its principal
// ([HandlerConfig.Principal]), stored in a [PrincipalTokenStore].
//
// # Redirects
//
// A command-line program takes the authorization server's redirect on a
// [LoopbackAuthorizer] (RFC 8252); a server program whose users authorize
// from their own browsers serves a [Callback] at the path of its public
// redirect URL. Both count only the redirect that carries the state of an
// authorization in progress.
//
// # Resource-server role
//
// A [JWTVerifier] checks JWT access tokens (RFC 9068) against the key set
// an authorization server publishes, refetched on key rotation; its Verify
// method is an auth.TokenVerifier. A protected resource describes itself
// with its metadata (RFC 9728), served by
// [HandleProtectedResourceMetadata] at the well-known locations
// [ProtectedResourceMetadataURL] computes, so that clients find the
// authorization server to get a token from.
//
// The guide docs/connectors.md tells the long story of the client role
// (each moment of an authorization, acting as the user, each user's own
// credentials), docs/serving.md that of the resource server.
package oauth

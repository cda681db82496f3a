package bridge

// CallCredentials is implemented by the toolkit sessions of calls that
// came with a bearer token an MCP server face verified (see
// [github.com/llmkit/toolkit/mcp/mcpserver.WithBearerAuth]): BearerToken
// returns that token as the client presented it when an identity
// provider issued it (the verifier named its issuer), or "" when the call
// carried none or a credential of the server's own (a configured token),
// which must never leave the program. A connector that acts upstream as each user
// ([github.com/llmkit/toolkit/mcp.UserTokenExchange])
// exchanges it for a token of the upstream server (RFC 8693).
//
// The token is a credential of the caller: it must never be logged,
// quoted in an error, or sent anywhere but to an authorization server
// that is to exchange it.
type CallCredentials interface {
	BearerToken() string
}

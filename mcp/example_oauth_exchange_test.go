package mcp_test

import (
	"context"
	"log"
	"os"

	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// A service acts upstream as the user who signed in to it: the user's own
// access token, issued by the company's identity provider, is exchanged
// (RFC 8693) at the MCP server's authorization server, which trusts that
// provider, for a token of the MCP server. The connector runs with the
// user's token in its context.
func ExampleOptOAuth_tokenExchange() {
	c, err := mcp.New("https://mcp.example.com/mcp", "my-service", "1.0",
		mcp.OptOAuth(oauth.TokenExchange(oauth.TokenExchangeConfig{
			ClientID:     "my-service",
			ClientSecret: os.Getenv("MY_SERVICE_CLIENT_SECRET"),
			Scopes:       []string{"tools"},
		})))
	if err != nil {
		log.Fatal(err)
	}
	userToken := os.Getenv("USER_ACCESS_TOKEN") // the token the user's client presented
	ctx := oauth.WithSubjectToken(context.Background(), userToken, oauth.TokenTypeAccessToken)
	_ = ctx // run the connector as the user: c.Run(ctx)
	_ = c
}

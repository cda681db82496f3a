package mcp_test

import (
	"context"
	"log"
	"os"

	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// A service authenticates with a private key registered with the
// authorization server rather than a client secret: each token request
// carries a JWT it signs (private_key_jwt).
func ExampleOptOAuth_clientCredentialsJWT() {
	pemData, err := os.ReadFile("/etc/my-service/oauth-key.pem")
	if err != nil {
		log.Fatal(err)
	}
	key, err := oauth.ParsePrivateKeyPEM(pemData)
	if err != nil {
		log.Fatal(err)
	}
	c, err := mcp.New("https://mcp.example.com/mcp", "my-service", "1.0",
		mcp.OptOAuth(oauth.ClientCredentialsJWT("my-service-client", key, "ES256")))
	if err != nil {
		log.Fatal(err)
	}
	_ = c // add it to a toolkit, or run it: c.Run(ctx)
}

// In an enterprise, the user's single sign-on gives access to an MCP
// server: the ID token the IdP issued is exchanged for an identity
// assertion grant, which the server's authorization server turns into an
// access token.
func ExampleOptOAuth_enterprise() {
	idToken := func(ctx context.Context) (string, error) {
		return os.Getenv("MY_APP_ID_TOKEN"), nil // from the app's OIDC login
	}
	c, err := mcp.New("https://mcp.example.com/mcp", "my-app", "1.0",
		mcp.OptOAuth(oauth.Enterprise(oauth.EnterpriseConfig{
			IDToken:      idToken,
			IdPIssuer:    "https://acme.okta.example",
			IdPClientID:  "my-app-at-the-idp",
			ClientID:     "my-app-at-the-server",
			ClientSecret: os.Getenv("MY_APP_CLIENT_SECRET"),
		})))
	if err != nil {
		log.Fatal(err)
	}
	_ = c // add it to a toolkit, or run it: c.Run(ctx)
}

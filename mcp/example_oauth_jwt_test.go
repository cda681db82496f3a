package mcp_test

import (
	"log"
	"os"

	"github.com/llmkit/toolkit/mcp"
)

// A service authenticates with a private key registered with the
// authorization server rather than a client secret: each token request
// carries a JWT it signs (private_key_jwt).
func ExampleOptOAuthClientCredentialsJWT() {
	pemData, err := os.ReadFile("/etc/my-service/oauth-key.pem")
	if err != nil {
		log.Fatal(err)
	}
	key, err := mcp.ParsePrivateKeyPEM(pemData)
	if err != nil {
		log.Fatal(err)
	}
	c, err := mcp.New("https://mcp.example.com/mcp", "my-service", "1.0",
		mcp.OptOAuthClientCredentialsJWT("my-service-client", key, "ES256"))
	if err != nil {
		log.Fatal(err)
	}
	_ = c // add it to a toolkit, or run it: c.Run(ctx)
}

package mcpserver_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"net"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/mcpserver"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// A toolkit served as an OAuth 2.1 protected resource: clients present JWT
// access tokens issued by an authorization server, checked against its key
// set; a client without one is pointed at the resource metadata, which
// names the authorization server to get one from.
func ExampleWithProtectedResource() {
	const resource = "https://mcp.example.com/mcp" // where clients reach the server
	verifier, err := oauth.NewJWTVerifier(oauth.JWTConfig{
		JWKSURL:  "https://auth.example.com/.well-known/jwks.json",
		Issuer:   "https://auth.example.com",
		Audience: resource,
		Logger:   slog.Default(), // refusals are explained at debug level
	})
	if err != nil {
		log.Fatal(err)
	}
	tk, err := toolkit.New()
	if err != nil {
		log.Fatal(err)
	}
	srv, err := mcpserver.New(tk, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a real server runs until it is told to stop
	err = srv.ServeListener(ctx, ln,
		mcpserver.WithBearerAuth(verifier.Verify, &auth.RequireBearerTokenOptions{Scopes: []string{"mcp:tools"}}),
		mcpserver.WithProtectedResource(&oauthex.ProtectedResourceMetadata{
			Resource:             resource,
			AuthorizationServers: []string{"https://auth.example.com"},
			ScopesSupported:      []string{"mcp:tools"},
		}),
	)
	fmt.Println(err)
	// Output:
	// <nil>
}

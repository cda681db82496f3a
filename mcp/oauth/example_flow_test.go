package oauth_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/mcp/oauth"
)

// A command-line program lets its user authorize access to an MCP server
// behind OAuth: a loopback authorizer takes the browser's redirect, the
// tokens are kept in a file, and the handler authorizes the go-sdk's
// streamable HTTP transport. Nothing is sent before the server first
// refuses a request; the connector (mcp.OptOAuth) wires the same for
// itself.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "oauth-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	login, err := oauth.NewLoopbackAuthorizer("127.0.0.1:0", os.Stderr)
	if err != nil {
		log.Fatal(err)
	}
	defer login.Close()
	flow, err := oauth.AuthorizationCode(oauth.Config{
		Authorize:   login.Authorize,
		RedirectURL: login.RedirectURL(),
		Store:       oauth.NewFileTokenStore(filepath.Join(dir, "tokens.json")),
	})
	if err != nil {
		log.Fatal(err)
	}
	const server = "https://mcp.example.com/mcp"
	h := oauth.NewHandler(ctx, flow, oauth.HandlerConfig{Resource: server})
	defer h.Stop()
	transport := &sdk.StreamableClientTransport{Endpoint: server, OAuthHandler: h}

	fmt.Println(transport.Endpoint, "authorized:", h.Authorized())
	// Output:
	// https://mcp.example.com/mcp authorized: false
}

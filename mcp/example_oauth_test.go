package mcp_test

import (
	"log"
	"os"
	"time"

	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// A command-line program connects to a server that requires OAuth: the
// user opens the printed URL, the browser comes back to a loopback
// listener, and the tokens are kept in a file so that the next run does not
// ask again.
func ExampleOptOAuth() {
	login, err := oauth.NewLoopbackAuthorizer("127.0.0.1:0", os.Stderr)
	if err != nil {
		log.Fatal(err)
	}
	defer login.Close()
	path, err := oauth.DefaultTokenStorePath()
	if err != nil {
		log.Fatal(err)
	}
	c, err := mcp.New("https://mcp.example.com/mcp", "my-cli", "1.0",
		mcp.OptOAuth(oauth.AuthorizationCode(oauth.Config{
			Authorize:   login.Authorize,
			RedirectURL: login.RedirectURL(),
			ClientName:  "my-cli",
			Store:       oauth.NewFileTokenStore(path),
		})),
		// A person needs time to log in.
		mcp.OptTimeouts(mcp.Timeouts{Connect: 5 * time.Minute}),
	)
	if err != nil {
		log.Fatal(err)
	}
	_ = c // add it to a toolkit, or run it: c.Run(ctx)
}

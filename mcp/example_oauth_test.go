package mcp_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/oauth2"

	"github.com/llmkit/toolkit/mcp"
)

// A command-line program connects to a server that requires OAuth: the
// user opens the printed URL, the browser comes back to a loopback
// listener, and the tokens are kept in a file so that the next run does not
// ask again.
func ExampleOptOAuth() {
	login, err := mcp.NewLoopbackAuthorizer("127.0.0.1:0", os.Stderr)
	if err != nil {
		log.Fatal(err)
	}
	defer login.Close()
	path, err := mcp.DefaultTokenStorePath()
	if err != nil {
		log.Fatal(err)
	}
	c, err := mcp.New("https://mcp.example.com/mcp", "my-cli", "1.0",
		mcp.OptOAuth(mcp.OAuthConfig{
			Authorize:   login.Authorize,
			RedirectURL: login.RedirectURL(),
			ClientName:  "my-cli",
			Store:       mcp.NewFileTokenStore(path),
		}),
		// A person needs time to log in.
		mcp.OptConnectTimeout(5*time.Minute),
	)
	if err != nil {
		log.Fatal(err)
	}
	_ = c // add it to a toolkit, or run it: c.Run(ctx)
}

// The file token store keeps one token per MCP server, in a file only its
// owner may read.
func ExampleFileTokenStore() {
	ctx := context.Background()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("example-tokens-%d.json", os.Getpid()))
	defer os.Remove(path)
	store := mcp.NewFileTokenStore(path)
	err := store.SaveToken(ctx, &mcp.StoredToken{
		Resource: "https://mcp.example.com/mcp",
		Issuer:   "https://auth.example.com",
		TokenURL: "https://auth.example.com/token",
		ClientID: "my-cli",
		Token:    &oauth2.Token{AccessToken: "a secret", RefreshToken: "another secret"},
	})
	if err != nil {
		log.Fatal(err)
	}
	t, err := store.LoadToken(ctx, "https://mcp.example.com/mcp")
	if err != nil {
		log.Fatal(err)
	}
	fi, _ := os.Stat(path)
	fmt.Println(t) // secrets are left out
	fmt.Println(fi.Mode().Perm())
	// Output:
	// token for https://mcp.example.com/mcp from https://auth.example.com (client my-cli)
	// -rw-------
}

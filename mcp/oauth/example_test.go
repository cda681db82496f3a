package oauth_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"golang.org/x/oauth2"

	"github.com/llmkit/toolkit/mcp/oauth"
)

// The file token store keeps one token per MCP server, in a file only its
// owner may read.
func ExampleFileTokenStore() {
	ctx := context.Background()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("example-tokens-%d.json", os.Getpid()))
	defer os.Remove(path)
	store := oauth.NewFileTokenStore(path)
	err := store.SaveToken(ctx, &oauth.StoredToken{
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

// The metadata of a protected resource is served at the well-known path
// with the resource's own path appended.
func ExampleProtectedResourceMetadataURL() {
	u, err := oauth.ProtectedResourceMetadataURL("https://mcp.example.com/mcp")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u)
	// Output:
	// https://mcp.example.com/.well-known/oauth-protected-resource/mcp
}

package mcp

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// credentialSession is the toolkit session of a call that came with a
// bearer token.
type credentialSession struct{ token string }

func (credentialSession) ID() string                            { return "s" }
func (credentialSession) ClientInfo() *sdk.Implementation       { return nil }
func (credentialSession) Capabilities() *sdk.ClientCapabilities { return nil }
func (credentialSession) Meta() map[string]any                  { return nil }
func (credentialSession) Logger() *slog.Logger                  { return slog.New(slog.DiscardHandler) }
func (credentialSession) Progress(float64, float64, ...string) error {
	return nil
}
func (s credentialSession) BearerToken() string { return s.token }

// TestUserSubjectToken: a user's subject token is the one of their
// latest call; a call of another principal, or without a token, leaves
// it; a user whose calls brought none gets ErrNoSubjectToken, naming the
// server and quoting nothing.
func TestUserSubjectToken(t *testing.T) {
	c, err := New("https://up.example/mcp", "c", "1", OptOAuthPerUser(UserTokenExchange(oauth.TokenExchangeConfig{ClientID: "gw"})))
	if err != nil {
		t.Fatal(err)
	}
	u, err := c.up.(*perUser).userOf(c, principalClient{"alice"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := u.SubjectToken(context.Background()); !errors.Is(err, ErrNoSubjectToken) || !strings.Contains(err.Error(), "up.example") {
		t.Fatalf("SubjectToken of a user without calls = %v, want ErrNoSubjectToken", err)
	}
	call := func(principal, token string) {
		ctx := toolkit.ContextWithSession(toolkit.WithPrincipal(context.Background(), principal), credentialSession{token})
		u.noteBearer(ctx)
	}
	want := func(tok string) {
		t.Helper()
		got, typ, err := u.SubjectToken(context.Background())
		if err != nil || got != tok || typ != oauth.TokenTypeAccessToken {
			t.Fatalf("SubjectToken = %q, %q, %v; want %q", got, typ, err, tok)
		}
	}
	call("alice", "alice-1")
	want("alice-1")
	call("alice", "alice-2")
	want("alice-2")
	call("bob", "bob-1")
	call("", "nobody-1")
	call("alice", "")
	want("alice-2")
}

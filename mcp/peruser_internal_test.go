package mcp

import (
	"context"
	"errors"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// principalClient is a bridge.Client of a principal that answers nothing.
type principalClient struct{ principal string }

func (principalClient) CreateMessage(context.Context, *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	return nil, toolkit.ErrNotImplemented
}
func (principalClient) Elicit(context.Context, *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	return nil, toolkit.ErrNotImplemented
}
func (principalClient) ListRoots(context.Context, *sdk.ListRootsParams) (*sdk.ListRootsResult, error) {
	return nil, toolkit.ErrNotImplemented
}
func (principalClient) Capabilities() *sdk.ClientCapabilities { return nil }
func (principalClient) Done() <-chan struct{}                 { return nil }
func (principalClient) OnRootsChanged(func()) func()          { return func() {} }
func (c principalClient) Principal() string                   { return c.principal }

// TestAcquireUserRefusals: a per-user connector acts for nobody it cannot
// name: no client session, an anonymous client, or a call whose principal
// is not its session's; the flow is never made for them.
func TestAcquireUserRefusals(t *testing.T) {
	made := 0
	c, err := New("https://up.example/mcp", "c", "1", OptOAuthPerUser(func(u *User) (*oauth.Flow, error) {
		made++
		return oauth.ClientCredentials("id", "secret")
	}, nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, tc := range map[string]struct {
		ctx context.Context
		cl  *principalClient
	}{
		"no client":       {ctx, nil},
		"anonymous":       {ctx, &principalClient{}},
		"other principal": {toolkit.WithPrincipal(ctx, "jwt:mallory"), &principalClient{"jwt:alice"}},
	} {
		var err error
		if tc.cl == nil {
			_, err = c.up.(*perUser).acquire(tc.ctx, nil)
		} else {
			_, err = c.up.(*perUser).acquire(tc.ctx, tc.cl)
		}
		if !errors.Is(err, ErrNoUser) || !errors.Is(err, toolkit.ErrDenied) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if made != 0 {
		t.Errorf("the flow was made %d times", made)
	}
	if a, p, f := c.UserAuthorizations(); a+p+f != 0 {
		t.Errorf("UserAuthorizations = %d, %d, %d", a, p, f)
	}
}

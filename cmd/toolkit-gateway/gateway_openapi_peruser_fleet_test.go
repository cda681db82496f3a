//go:build unix

package main

import (
	"context"
	"encoding/base64"
	"slices"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/redistest"
)

// TestGatewayOpenAPIPerUserAcrossReplicas runs two gateway replicas that
// share their state on one Redis, with an openapi entry whose scheme is
// per_user and whose redirect URL is the fleet's one public callback,
// B's. Carol, whose client there cannot open URLs, calls through A: -32042
// with A's URL. Her call through B, whose client opens URLs, is asked
// with the same URL, one authorization for the fleet; she opens it (the
// redirect reaches B, which relays it to A) and B's call goes on, as her,
// with the token A stored; so does her next call through A. The
// authorization server sees one authorization.
func TestGatewayOpenAPIPerUserAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	t.Setenv("TEST_OA_REDIS_URL", srv.URL())
	t.Setenv("TEST_OA_KEYS", base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")))
	api := startUserAPI(t)
	addrA, addrB := freeAddr(t), freeAddr(t)
	redirect := "http://" + addrB + "/oauth/callback"
	id, secret := api.register(t, redirect)
	t.Setenv("OA_USER_SECRET", secret)
	replica := func(addr string) *gatewayProcess {
		g := startGateway(t, userAPIConfigWith(t, t.TempDir(), addr, redirect, id, api, `state:
  redis: {url_env: TEST_OA_REDIS_URL, timeout: 500ms}
  keys_env: TEST_OA_KEYS
`))
		g.waitLog(t, 0, upstreamReady("api"))
		return g
	}
	a, b := replica(addrA), replica(addrB)

	carolA := userClient(t, a, tokenC, "carol", false, nil)
	_, err := callTextErr(carolA, "whoami", map[string]any{})
	atA := urlElicitationOf(t, err, api.iss.URL)

	shown := make(chan string, 1)
	carolB := userClientWith(t, b, tokenC, "carol", &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			shown <- req.Params.URL
			if req.Params.URL != atA {
				return &sdk.ElicitResult{Action: "decline"}, nil
			}
			if err := openAuthorization("carol", req.Params.URL); err != nil {
				return nil, err
			}
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
	})
	got, err := callTextErr(carolB, "whoami", map[string]any{})
	if atB := within(t, shown); atB != atA {
		t.Fatalf("carol is sent to two authorizations:\n A: %s\n B: %s", atA, atB)
	}
	if err != nil || got != "carol" {
		t.Fatalf("carol through B once she authorized at A's URL: %q, %v", got, err)
	}
	if got, err := callTextErr(carolA, "whoami", map[string]any{}); err != nil || got != "carol" {
		t.Fatalf("carol through A: %q, %v", got, err)
	}
	if got, want := api.calls(), []string{"carol", "carol"}; !slices.Equal(got, want) {
		t.Errorf("the API saw %v, want %v", got, want)
	}
	if n := api.iss.Authorizations(); n != 1 {
		t.Errorf("%d authorizations, want 1 (one for the fleet)", n)
	}
}

//go:build unix

package main

import (
	"context"
	"encoding/base64"
	"slices"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/redistest"
)

// TestGatewayPerUserAcrossReplicas runs two gateway replicas that share
// their state on one Redis, with a per-user upstream whose redirect URL
// is the fleet's one public callback (here replica B's, as a load
// balancer would route it): Alice, calling through A, authorizes; her
// browser's redirect reaches B, which relays it to A; her next call,
// through B, acts as her with the token A stored, and nobody asks her
// again. Carol, whose client cannot open URLs, calls through A and then
// through B before she authorizes: both answer -32042 with the URL of
// one authorization, A's; she opens it once and then calls through both.
// The upstream's authorization server sees two authorizations, one per
// user.
func TestGatewayPerUserAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	t.Setenv("TEST_PU_REDIS_URL", srv.URL())
	t.Setenv("TEST_PU_KEYS", base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")))
	up := startUserServer(t)
	addrA, addrB := freeAddr(t), freeAddr(t)
	replica := func(addr string) *gatewayProcess {
		dir := t.TempDir()
		writeFile(t, dir, "client-tokens", tokenA+"\n"+tokenC+"\n")
		g := startGateway(t, perUserConfigWith(t, dir, addr, addrB, up, `state:
  redis: {url_env: TEST_PU_REDIS_URL, timeout: 500ms}
  keys_env: TEST_PU_KEYS
`))
		g.waitLog(t, 0, upstreamReady("up"))
		return g
	}
	a, b := replica(addrA), replica(addrB)

	var asked atomic.Int32
	if got, err := callTextErr(userClient(t, a, tokenA, "alice", true, &asked), "whoami", map[string]any{}); err != nil || got != "alice" {
		t.Fatalf("alice through A, her redirect at B: %q, %v", got, err)
	}
	if got, err := callTextErr(userClient(t, b, tokenA, "alice", true, &asked), "whoami", map[string]any{}); err != nil || got != "alice" {
		t.Fatalf("alice through B: %q, %v", got, err)
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("alice was asked %d times, want once", n)
	}

	// Carol calls through A, then through B, before she authorizes: both
	// send her to A's authorization, whose redirect reaches B.
	carolA, carolB := userClient(t, a, tokenC, "carol", false, nil), userClient(t, b, tokenC, "carol", false, nil)
	_, err := carolA.CallTool(context.Background(), &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	atA := urlElicitationOf(t, err, up)
	_, err = carolB.CallTool(context.Background(), &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if atB := urlElicitationOf(t, err, up); atB != atA {
		t.Errorf("carol is sent to two authorizations:\n A: %s\n B: %s", atA, atB)
	}
	if err := openAuthorization("carol", atA); err != nil {
		t.Fatal(err)
	}
	if got, err := callTextErr(carolA, "whoami", map[string]any{}); err != nil || got != "carol" {
		t.Fatalf("carol through A after authorizing: %q, %v", got, err)
	}
	if got, err := callTextErr(carolB, "whoami", map[string]any{}); err != nil || got != "carol" {
		t.Fatalf("carol through B: %q, %v", got, err)
	}

	if got, want := up.calls(), []string{"alice", "alice", "carol", "carol"}; !slices.Equal(got, want) {
		t.Errorf("the upstream saw %v, want %v", got, want)
	}
	if n := up.iss.Authorizations(); n != 2 {
		t.Errorf("%d authorizations, want 2 (one per user, for the fleet)", n)
	}
}

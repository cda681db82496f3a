//go:build unix

package main

import (
	"context"
	"encoding/base64"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	a, b, up := startPerUserFleet(t)

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
	atA := urlElicitationOf(t, err, up.iss.URL)
	_, err = carolB.CallTool(context.Background(), &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if atB := urlElicitationOf(t, err, up.iss.URL); atB != atA {
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

// TestGatewayPerUserElicitedAcrossReplicas: Alice's clients open URLs.
// Her call through A asks her client there, which has not answered yet
// when her call through B asks her client there: with the same URL. She
// opens it there, once (the redirect reaches B, which relays it to A);
// both calls then go on, as her, after one authorization.
func TestGatewayPerUserElicitedAcrossReplicas(t *testing.T) {
	a, b, up := startPerUserFleet(t)
	urls := make(chan string, 2)
	release := make(chan struct{})
	reply := sync.OnceFunc(func() { close(release) })
	defer reply() // before the clients close, should the test fail
	client := func(g *gatewayProcess, open bool) *sdk.ClientSession {
		return userClientWith(t, g, tokenA, "alice", &sdk.ClientOptions{
			Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
			ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				urls <- req.Params.URL
				if open {
					if err := openAuthorization("alice", req.Params.URL); err != nil {
						return nil, err
					}
				} else {
					select {
					case <-release:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return &sdk.ElicitResult{Action: "accept"}, nil
			},
		})
	}
	type answer struct {
		text string
		err  error
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // the calls end before the clients close, should the test fail
	call := func(cs *sdk.ClientSession) <-chan answer {
		ch := make(chan answer, 1)
		go func() {
			got, err := callTextCtx(ctx, cs, "whoami", map[string]any{})
			ch <- answer{got, err}
		}()
		return ch
	}
	atA := call(client(a, false))
	urlA := within(t, urls)
	atB := call(client(b, true))
	if urlB := within(t, urls); urlB != urlA {
		t.Errorf("alice is sent to two authorizations:\n A: %s\n B: %s", urlA, urlB)
	}
	if got := within(t, atB); got.err != nil || got.text != "alice" {
		t.Fatalf("alice through B: %q, %v", got.text, got.err)
	}
	reply()
	if got := within(t, atA); got.err != nil || got.text != "alice" {
		t.Fatalf("alice through A: %q, %v", got.text, got.err)
	}
	if n := up.iss.Authorizations(); n != 1 {
		t.Errorf("%d authorizations, want 1 (one for the fleet)", n)
	}
}

// startPerUserFleet starts two gateway replicas, A and B, that share their
// state on one Redis, with the per-user upstream it starts too, whose
// redirect URL is B's: the fleet's one public callback.
func startPerUserFleet(t *testing.T) (a, b *gatewayProcess, up *userServer) {
	t.Helper()
	srv := redistest.Start(t)
	t.Setenv("TEST_PU_REDIS_URL", srv.URL())
	t.Setenv("TEST_PU_KEYS", base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")))
	up = startUserServer(t)
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
	return replica(addrA), replica(addrB), up
}

// within returns the next value of ch, or fails the test after a minute.
func within[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatal("nothing came within a minute")
		panic("unreachable")
	}
}

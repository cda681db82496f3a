//go:build unix

package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/redistest"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// newSessionEcho returns an MCP server whose tool "session" answers with
// the ID of the upstream session it runs on: the state a stateful server
// keeps for a session is that session's.
func newSessionEcho() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "sessions", Version: "1.0.0"}, nil)
	s.AddTool(&sdk.Tool{Name: "session", InputSchema: testserver.ObjectSchema()}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: req.Session.ID()}}}, nil
	})
	return s
}

// perClientAuthGateway starts a gateway whose clients present tokenA,
// tokenB or tokenC, with the per_client upstream "up" serving
// newSessionEcho over stateful HTTP; extra is added to the upstream's
// entry.
func perClientAuthGateway(t *testing.T, extra string) *gatewayProcess {
	t.Helper()
	up := testserver.ServeHTTP(t, newSessionEcho(), testserver.Stateful)
	dir := t.TempDir()
	writeFile(t, dir, "client-tokens", tokenA+"\n"+tokenB+"\n"+tokenC+"\n")
	config := writeConfig(t, dir, fmt.Sprintf(`listen: 127.0.0.1:0
auth:
  bearer:
    tokens_file: client-tokens
servers:
  - name: up
    url: %s
    upstream_sessions: per_client
%s`, up.URL, extra))
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("up"))
	return g
}

// tokenClient connects to the gateway with token; with a protocol before
// 2026-07-28 the client has a session, with 2026-07-28 it has none.
func tokenClient(t *testing.T, g *gatewayProcess, token, protocol string) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "client", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: g.mcpURL, HTTPClient: &http.Client{Transport: bearerTransport(token)}, MaxRetries: -1},
		&sdk.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestGatewayPerClientPrincipalShare: one token cannot take every
// per_client upstream session. With max_upstream_sessions: 3 and
// max_upstream_sessions_per_principal: 1, the second session of token A
// is refused with an error naming the principal's share, while tokens B
// and C each still get one.
func TestGatewayPerClientPrincipalShare(t *testing.T) {
	g := perClientAuthGateway(t, "    max_upstream_sessions: 3\n    max_upstream_sessions_per_principal: 1\n")
	a1 := tokenClient(t, g, tokenA, "2025-11-25")
	if _, err := callTextErr(a1, "session", map[string]any{}); err != nil {
		t.Fatalf("A's first session: %v", err)
	}
	a2 := tokenClient(t, g, tokenA, "2025-11-25")
	_, err := callTextErr(a2, "session", map[string]any{})
	if err == nil || !strings.Contains(err.Error(), "max_upstream_sessions_per_principal") || !strings.Contains(err.Error(), `principal "token:1"`) {
		t.Fatalf("A's second session: %v, want refused by the principal's share", err)
	}
	for _, token := range []string{tokenB, tokenC} {
		cs := tokenClient(t, g, token, "2025-11-25")
		if _, err := callTextErr(cs, "session", map[string]any{}); err != nil {
			t.Errorf("another principal while A holds its share: %v", err)
		}
	}
}

// TestGatewayPerClientSessionlessIsolation: clients of protocol
// 2026-07-28 have no session; with per_client, the calls of each
// principal still go on an upstream session of its own (one per
// principal, whatever the client), never on one another principal uses.
func TestGatewayPerClientSessionlessIsolation(t *testing.T) {
	g := perClientAuthGateway(t, "")
	sessionOf := func(token string) string {
		t.Helper()
		cs := tokenClient(t, g, token, "2026-07-28")
		id, err := callTextErr(cs, "session", map[string]any{})
		if err != nil {
			t.Fatalf("call with %s: %v", token[:7], err)
		}
		return id
	}
	a, b, a2 := sessionOf(tokenA), sessionOf(tokenB), sessionOf(tokenA)
	if a == "" || a == b || a != a2 {
		t.Errorf("upstream sessions: A %q and %q, B %q; want A's own, the same for A's two clients, and B's apart", a, a2, b)
	}
}

// TestGatewayPerClientPrincipalShareAcrossReplicas: two replicas sharing
// their state on one Redis count a principal's per_client sessions
// together. Token A's session on replica A takes its share
// (max_upstream_sessions_per_principal: 1), so its session on replica B
// is refused with an error naming the share, while token B's is not; once
// A's first client leaves, its session on B is admitted.
func TestGatewayPerClientPrincipalShareAcrossReplicas(t *testing.T) {
	a, b, _ := startShareFleet(t)

	onA := tokenClient(t, a, tokenA, "2025-11-25")
	if _, err := callTextErr(onA, "session", map[string]any{}); err != nil {
		t.Fatalf("token A's session on replica A: %v", err)
	}
	onB := tokenClient(t, b, tokenA, "2025-11-25")
	_, err := callTextErr(onB, "session", map[string]any{})
	if err == nil || !strings.Contains(err.Error(), "max_upstream_sessions_per_principal") || !strings.Contains(err.Error(), `principal "token:1"`) {
		t.Fatalf("token A's session on replica B: %v, want refused by the principal's share", err)
	}
	if _, err := callTextErr(tokenClient(t, b, tokenB, "2025-11-25"), "session", map[string]any{}); err != nil {
		t.Errorf("token B on replica B while A holds its share: %v", err)
	}

	from := a.mark()
	onA.Close()
	a.waitLog(t, from, func(r map[string]any) bool { return r["msg"] == "client's upstream session closed" })
	if _, err := callTextErr(tokenClient(t, b, tokenA, "2025-11-25"), "session", map[string]any{}); err != nil {
		t.Errorf("token A on replica B once its session on A closed: %v", err)
	}
}

// startShareFleet starts two gateway replicas sharing their state on the
// Redis it starts, whose clients present tokenA or tokenB, with the
// per_client upstream "up" (newSessionEcho), a principal's share of which
// is one session (max_upstream_sessions_per_principal: 1).
func startShareFleet(t *testing.T) (a, b *gatewayProcess, srv *redistest.Server) {
	t.Helper()
	srv = redistest.Start(t)
	t.Setenv("TEST_SHARE_REDIS_URL", srv.URL())
	t.Setenv("TEST_SHARE_KEYS", base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")))
	up := testserver.ServeHTTP(t, newSessionEcho(), testserver.Stateful)
	replica := func() *gatewayProcess {
		dir := t.TempDir()
		writeFile(t, dir, "client-tokens", tokenA+"\n"+tokenB+"\n")
		g := startGateway(t, writeConfig(t, dir, fmt.Sprintf(`listen: 127.0.0.1:0
auth:
  bearer:
    tokens_file: client-tokens
state:
  redis: {url_env: TEST_SHARE_REDIS_URL, timeout: 500ms}
  keys_env: TEST_SHARE_KEYS
servers:
  - name: up
    url: %s
    upstream_sessions: per_client
    max_upstream_sessions: 3
    max_upstream_sessions_per_principal: 1
`, up.URL)))
		g.waitLog(t, 0, upstreamReady("up"))
		return g
	}
	return replica(), replica(), srv
}

// TestGatewayPerClientOverShareClosed: token A opens a per_client session
// on each of two replicas while their Redis is down: each admits it by
// its own count. Once Redis is back, the replica whose renewal finds the
// principal over its share across the fleet (one session) closes its
// session, saying so; the client's next call there is refused by the
// share, while the session on the other replica goes on.
func TestGatewayPerClientOverShareClosed(t *testing.T) {
	a, b, srv := startShareFleet(t)
	srv.Kill()
	onA, onB := tokenClient(t, a, tokenA, "2025-11-25"), tokenClient(t, b, tokenA, "2025-11-25")
	idA, err := callTextErr(onA, "session", map[string]any{})
	if err != nil {
		t.Fatalf("token A on replica A, Redis down: %v", err)
	}
	idB, err := callTextErr(onB, "session", map[string]any{})
	if err != nil {
		t.Fatalf("token A on replica B, Redis down: %v", err)
	}
	fromA, fromB := a.mark(), b.mark()
	srv.Restart()
	over := func(r map[string]any) bool {
		msg, _ := r["msg"].(string)
		return strings.Contains(msg, "more sessions open across the processes than its share") && r["principal"] == "token:1"
	}
	closed, kept, keptID := onA, onB, idB
	if waitLogOf(t, []*gatewayProcess{a, b}, []int{fromA, fromB}, over) == 1 {
		closed, kept, keptID = onB, onA, idA
	}
	if _, err := callTextErr(closed, "session", map[string]any{}); err == nil || !strings.Contains(err.Error(), "max_upstream_sessions_per_principal") {
		t.Errorf("the call of the client whose session was closed: %v, want refused by the principal's share", err)
	}
	if id, err := callTextErr(kept, "session", map[string]any{}); err != nil || id != keptID {
		t.Errorf("the session kept: %q, %v; want %q still", id, err, keptID)
	}
}

// waitLogOf waits for a log record that match accepts of one of gs
// (each from its mark in from) and returns that one's index.
func waitLogOf(t *testing.T, gs []*gatewayProcess, from []int, match func(map[string]any) bool) int {
	t.Helper()
	found := make(chan int, len(gs))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i, g := range gs {
		go func() {
			for {
				r, changed := g.find(from[i], match)
				if r != nil {
					found <- i
					return
				}
				select {
				case <-changed:
				case <-g.exited:
					return
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	return within(t, found)
}

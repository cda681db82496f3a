package mcp_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/mcp"
)

// TestPerUserSessionless: the calls of clients that keep no session with
// the server face (protocol 2026-07-28, the go-sdk's default) act as
// their user too: the user is asked through the call, and their calls
// share one upstream session; one without URL elicitation gets -32042.
func TestPerUserSessionless(t *testing.T) {
	checkLeaks(t)
	up := newUserUpstream(t)
	closed := make(chan struct{}, 8)
	g, _ := startPerUserGateway(t, up, filepath.Join(t.TempDir(), "tokens.json"), mcp.OptUserSessionIdleForTest(time.Second, func() { closed <- struct{}{} }))
	connect := func(user string, c *sdk.Client) *sdk.ClientSession {
		tr := &sdk.StreamableClientTransport{Endpoint: g.url + "/mcp", MaxRetries: -1, HTTPClient: &http.Client{Transport: bearer{"token-" + user, http.DefaultTransport}}}
		cs, err := c.Connect(context.Background(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("protocol %s, want 2026-07-28", v)
		}
		return cs
	}
	alice := newURLUser("alice")
	cs := connect("alice", alice.Client)
	var opened []int64
	for range 2 {
		if got, err := callText(t, cs, "whoami"); err != nil || got != "alice" {
			t.Fatalf("alice: %q, %v", got, err)
		}
		open, n := g.conn.ClientSessions()
		if open != 1 {
			t.Errorf("%d client sessions open, want one for alice's calls", open)
		}
		opened = append(opened, n)
	}
	if opened[0] != opened[1] {
		t.Errorf("alice's second call opened another session (%v)", opened)
	}
	if alice.asked.Load() != 1 {
		t.Errorf("asked %d times, want 1", alice.asked.Load())
	}
	// Idle, the session closes (the first attempt, refused for want of a
	// token, closed before): the next call opens another, with the token.
	for range opened[0] {
		<-closed
	}
	if open, _ := g.conn.ClientSessions(); open != 0 {
		t.Errorf("%d client sessions open after the idle time", open)
	}
	if got, err := callText(t, cs, "whoami"); err != nil || got != "alice" || alice.asked.Load() != 1 {
		t.Errorf("alice after the idle time: %q, %v (asked %d times)", got, err, alice.asked.Load())
	}
	bob := connect("bob", sdk.NewClient(&sdk.Implementation{Name: "bob", Version: "1"}, nil))
	_, err := bob.CallTool(context.Background(), &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != sdk.CodeURLElicitationRequired {
		t.Fatalf("bob without URL elicitation: %v", err)
	}
	if got := up.calls(); len(got) != 3 || got[0] != "alice" || got[2] != "alice" {
		t.Errorf("the upstream saw %v", got)
	}
}

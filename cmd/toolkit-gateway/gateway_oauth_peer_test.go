package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/peers"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// TestGatewayOAuthTypeScriptExample runs the gateway in front of the
// TypeScript SDK's example OAuth server (its streamable HTTP example with
// --oauth and its demo authorization server): the gateway registers
// itself once, as a public client, prints one URL, which the person's
// browser opens (the demo consents at once and redirects to the
// gateway's loopback listener), and serves the upstream's tools;
// completion passes the upstream's answers through and refuses an
// unknown prompt as the upstream does. A restart uses the stored token;
// after it expired (the demo issues no refresh token), the stored
// registration with one new URL. No token reaches the log.
func TestGatewayOAuthTypeScriptExample(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ex := peers.StartOAuthExample(t, ctx)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	redirect := "http://" + ln.Addr().String() + "/callback"
	ln.Close()
	dir := t.TempDir()
	config := writeConfig(t, dir, fmt.Sprintf(`listen: 127.0.0.1:0
token_dir: tokens
servers:
  - name: demo
    url: %s
    oauth:
      redirect_url: %s
      allow: [%s]
`, ex.URL, redirect, ex.AuthServer))

	isURL := func(r map[string]any) bool {
		msg, _ := r["msg"].(string)
		return strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(msg, "(not JSON)")), ex.AuthServer+"/authorize?")
	}
	// login opens the URL the gateway prints, as a person would.
	login := func(g *gatewayProcess) {
		t.Helper()
		rec := g.waitLog(t, 0, isURL)
		resp, err := http.Get(strings.TrimSpace(strings.TrimPrefix(rec["msg"].(string), "(not JSON)")))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Authorization complete") {
			t.Fatalf("the browser ended with %d %s", resp.StatusCode, body)
		}
	}
	count := func(g *gatewayProcess, match func(map[string]any) bool) int {
		g.mu.Lock()
		defer g.mu.Unlock()
		n := 0
		for _, r := range g.records {
			if match(r) {
				n++
			}
		}
		return n
	}
	registered := func(r map[string]any) bool { return r["msg"] == "OAuth client registered" }
	stop := func(g *gatewayProcess) {
		g.cmd.Process.Signal(syscall.SIGTERM)
		<-g.exited
	}

	g := startGateway(t, config)
	login(g)
	g.waitLog(t, 0, upstreamReady("demo"))
	cs := connectGateway(t, g)
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
	if err != nil || res.IsError || len(res.Content) == 0 || res.Content[0].(*sdk.TextContent).Text != "Hello, Ada!" {
		t.Fatalf("greet through the gateway: %+v, %v", res, err)
	}
	comp, err := cs.Complete(ctx, &sdk.CompleteParams{
		Ref:      &sdk.CompleteReference{Type: "ref/prompt", Name: "greeting-template"},
		Argument: sdk.CompleteParamsArgument{Name: "name", Value: "A"},
	})
	if err != nil || len(comp.Completion.Values) != 0 || comp.Completion.HasMore {
		t.Errorf("completion of the upstream's prompt: %+v, %v", comp, err)
	}
	_, err = cs.Complete(ctx, &sdk.CompleteParams{
		Ref:      &sdk.CompleteReference{Type: "ref/prompt", Name: "no-such-prompt"},
		Argument: sdk.CompleteParamsArgument{Name: "name", Value: "A"},
	})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("completion of an unknown prompt: %v, want -32602", err)
	}
	cs.Close()
	if r, u := count(g, registered), count(g, isURL); r != 1 || u != 1 {
		t.Fatalf("%d registrations and %d URLs for one login, want 1 and 1", r, u)
	}
	stop(g)

	// A restart: the stored token and registration, nobody asked.
	g2 := startGateway(t, config)
	g2.waitLog(t, 0, upstreamReady("demo"))
	if r, u := count(g2, registered), count(g2, isURL); r != 0 || u != 0 {
		t.Fatalf("after a restart: %d registrations and %d URLs, want none", r, u)
	}
	stop(g2)

	// The token expired: one URL, the stored registration.
	store := oauth.NewFileTokenStore(filepath.Join(dir, "tokens", "demo.json"))
	st, err := store.LoadToken(ctx, ex.URL)
	if err != nil || st == nil || st.Token.RefreshToken != "" {
		t.Fatalf("stored token %v, %v", st, err)
	}
	access := st.Token.AccessToken
	st.Token.Expiry = time.Now().Add(-time.Minute)
	if err := store.SaveToken(ctx, st); err != nil {
		t.Fatal(err)
	}
	g3 := startGateway(t, config)
	g3.waitLog(t, 0, func(r map[string]any) bool {
		return r["msg"] == "upstream state" && r["status"] == "needs_authorization" &&
			strings.Contains(fmt.Sprint(r["error"]), "the stored access token expired and there is no refresh token")
	})
	login(g3)
	g3.waitLog(t, 0, upstreamReady("demo"))
	if r, u := count(g3, registered), count(g3, isURL); r != 0 || u != 1 {
		t.Fatalf("after the expiry: %d registrations and %d URLs, want 0 and 1", r, u)
	}
	stop(g3)
	for _, p := range []*gatewayProcess{g, g2, g3} {
		p.mu.Lock()
		for _, r := range p.records {
			if strings.Contains(fmt.Sprint(r), access) {
				t.Errorf("the access token reached the log: %v", r)
			}
		}
		p.mu.Unlock()
	}
}

//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/oauthtest"
	"github.com/llmkit/toolkit/mcp/mcpserver"
	"github.com/llmkit/toolkit/mcp/oauth"
	"github.com/llmkit/toolkit/tool"
)

// startProtectedCalc serves a toolkit with the tool "add" as an OAuth
// protected resource of iss, with the library's own resource server:
// JWT access tokens with scope calc, its metadata at the well-known
// paths, and its challenges. It returns the URL of its MCP endpoint.
func startProtectedCalc(t *testing.T, iss *oauthtest.Issuer) string {
	t.Helper()
	tk, err := toolkit.New(toolkit.WithTool(tool.Must("add", "Adds two integers.", func(_ context.Context, in addIn) (addOut, error) {
		return addOut{Sum: in.A + in.B}, nil
	})))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(tk, &sdk.Implementation{Name: "calc", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resource := "http://" + ln.Addr().String() + "/mcp"
	v, err := oauth.NewJWTVerifier(oauth.JWTConfig{JWKSURL: iss.JWKSURL(), Issuer: iss.URL, Audience: resource})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- srv.ServeListener(ctx, ln,
			mcpserver.WithBearerAuth(v.Verify, &auth.RequireBearerTokenOptions{Scopes: []string{"calc"}}),
			mcpserver.WithProtectedResource(&oauthex.ProtectedResourceMetadata{
				Resource: resource, AuthorizationServers: []string{iss.URL}, ScopesSupported: []string{"calc"},
			}))
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("protected calc: %v", err)
		}
		srv.Close()
	})
	return resource
}

// connectWithToken connects an MCP client to the gateway with a bearer
// token.
func connectWithToken(t *testing.T, g *gatewayProcess, token string) (*sdk.ClientSession, error) {
	t.Helper()
	hc := &http.Client{Transport: bearerTransport(token)}
	client := sdk.NewClient(&sdk.Implementation{Name: "gateway-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: g.mcpURL, HTTPClient: hc, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// postStatus posts an empty request with token ("" for none) and returns
// the status and the challenge.
func postStatus(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// TestGatewayAuth runs the gateway as a process between OAuth on both
// sides: it authorizes itself to a protected upstream with the client
// credentials grant, and its clients present either a configured token or
// a JWT of the same authorization server. The tokens file is read again
// on SIGHUP. No token or secret reaches the log.
func TestGatewayAuth(t *testing.T) {
	iss := oauthtest.NewIssuer(t)
	calcURL := startProtectedCalc(t, iss)
	const clientSecret = "client-secret-0123456789"
	iss.Register("gateway", oauthtest.Client{Secret: clientSecret, Audience: calcURL, Scopes: []string{"calc"}})

	dir := t.TempDir()
	writeFile(t, dir, "tokens", tokenA+"\n")
	writeFile(t, dir, "client-secret", clientSecret+"\n")
	const resource = "https://gateway.test/mcp"
	config := writeConfig(t, dir, fmt.Sprintf(`listen: 127.0.0.1:0
auth:
  bearer:
    tokens_file: tokens
  jwt:
    jwks_url: %s
    issuer: %s
    audience: %s
    required_scopes: [mcp]
servers:
  - name: calc
    url: %s
    oauth:
      grant: client_credentials
      client_id: gateway
      client_secret_file: client-secret
      allow: [%s]
`, iss.JWKSURL(), iss.URL, resource, calcURL, iss.URL))
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("calc"))
	if iss.TokensIssued() == 0 {
		t.Fatal("the gateway reached the upstream without a token from the authorization server")
	}

	// Without a token, or with a bad one: 401 and where to learn more.
	prm := "https://gateway.test/.well-known/oauth-protected-resource/mcp"
	if code, ch := postStatus(t, g.mcpURL, ""); code != 401 || ch != `Bearer resource_metadata="`+prm+`", scope="mcp"` {
		t.Errorf("no token: %d %q", code, ch)
	}
	if code, ch := postStatus(t, g.mcpURL, "wrong-token-0123456789"); code != 401 || !strings.HasSuffix(ch, `error="invalid_token"`) {
		t.Errorf("wrong token: %d %q", code, ch)
	}
	noScope := iss.Sign("rsa-1", iss.Claims(resource, "other"))
	if code, ch := postStatus(t, g.mcpURL, noScope); code != 403 || !strings.HasSuffix(ch, `error="insufficient_scope"`) {
		t.Errorf("missing scope: %d %q", code, ch)
	}
	wrongAudience := iss.Sign("rsa-1", iss.Claims("https://other.test/mcp", "mcp"))
	if code, _ := postStatus(t, g.mcpURL, wrongAudience); code != 401 {
		t.Errorf("wrong audience: %d", code)
	}

	// The protected resource metadata, at both well-known paths.
	base := strings.TrimSuffix(g.mcpURL, "/mcp")
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		var meta oauthex.ProtectedResourceMetadata
		err = json.NewDecoder(resp.Body).Decode(&meta)
		resp.Body.Close()
		if err != nil || meta.Resource != resource || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != iss.URL ||
			len(meta.ScopesSupported) != 1 || meta.ScopesSupported[0] != "mcp" {
			t.Errorf("%s: %+v %v", p, meta, err)
		}
	}

	// A configured token and a JWT both reach the upstream's tool.
	jwtToken := iss.Sign("ec-1", iss.Claims(resource, "mcp"))
	for name, token := range map[string]string{"configured token": tokenA, "JWT": jwtToken} {
		cs, err := connectWithToken(t, g, token)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var sum addOut
		callJSON(t, cs, "add", map[string]int{"a": 2, "b": 3}, &sum)
		if sum.Sum != 5 {
			t.Errorf("%s: add = %+v", name, sum)
		}
		cs.Close()
	}

	// The tokens file changes: on SIGHUP the old token is refused and the
	// new one accepted.
	writeFile(t, dir, "tokens", "# rotated\n"+tokenB+"\n")
	mark := g.mark()
	g.cmd.Process.Signal(syscall.SIGHUP)
	rec := g.waitLog(t, mark, func(r map[string]any) bool { return r["msg"] == "bearer tokens reloaded" })
	if rec["tokens"] != 1.0 {
		t.Errorf("reload: %v", rec)
	}
	g.waitLog(t, mark, func(r map[string]any) bool { return r["msg"] == "configuration reloaded" })
	if code, _ := postStatus(t, g.mcpURL, tokenA); code != 401 {
		t.Errorf("old token after the reload: %d", code)
	}
	if _, err := connectWithToken(t, g, tokenB); err != nil {
		t.Errorf("new token after the reload: %v", err)
	}

	// A reload with a broken tokens file is refused; the tokens stay.
	writeFile(t, dir, "tokens", "short\n")
	mark = g.mark()
	g.cmd.Process.Signal(syscall.SIGHUP)
	rec = g.waitLog(t, mark, func(r map[string]any) bool {
		return r["msg"] == "configuration reload refused; keeping the running configuration"
	})
	if e, _ := rec["error"].(string); !strings.Contains(e, "gateway.yaml:4: auth.bearer.tokens_file: the token at") || strings.Contains(e, "short\n") {
		t.Errorf("refused reload: %q", e)
	}
	if _, err := connectWithToken(t, g, tokenB); err != nil {
		t.Errorf("token after a refused reload: %v", err)
	}

	g.cmd.Process.Signal(syscall.SIGTERM)
	<-g.exited
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.records {
		line, _ := json.Marshal(r)
		for _, secret := range []string{tokenA, tokenB, clientSecret, jwtToken[strings.LastIndex(jwtToken, ".")+1:], noScope[strings.LastIndex(noScope, ".")+1:]} {
			if strings.Contains(string(line), secret) {
				t.Errorf("a secret reached the log: %s", line)
			}
		}
	}
}

// TestGatewayOAuthAuthorizationCode: an upstream authorized by a person.
// The gateway logs the URL to open; the browser's visit (here a plain
// GET that follows the redirect) brings the code back to the gateway's
// loopback listener; the tokens land in token_dir, so that after a
// restart nobody is asked again.
func TestGatewayOAuthAuthorizationCode(t *testing.T) {
	iss := oauthtest.NewIssuer(t)
	calcURL := startProtectedCalc(t, iss)
	dir := t.TempDir()
	config := writeConfig(t, dir, fmt.Sprintf(`listen: 127.0.0.1:0
token_dir: tokens
servers:
  - name: calc
    url: %s
    oauth:
      scopes: [calc]
      allow: [%s]
`, calcURL, iss.URL))

	g := startGateway(t, config)
	g.waitLog(t, 0, func(r map[string]any) bool {
		return r["msg"] == "upstream authorization needed: open the URL printed on standard error"
	})
	// The URL is printed as it is, on a line of its own.
	rec := g.waitLog(t, 0, func(r map[string]any) bool {
		msg, _ := r["msg"].(string)
		return strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(msg, "(not JSON)")), iss.URL+"/authorize?")
	})
	authorizeURL := strings.TrimSpace(strings.TrimPrefix(rec["msg"].(string), "(not JSON)"))
	resp, err := http.Get(authorizeURL) // the person consents
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "Authorization complete") {
		t.Fatalf("redirect to the gateway: %d %s", resp.StatusCode, body)
	}
	g.waitLog(t, 0, upstreamReady("calc"))
	cs := connectGateway(t, g)
	var sum addOut
	callJSON(t, cs, "add", map[string]int{"a": 40, "b": 2}, &sum)
	if sum.Sum != 42 {
		t.Errorf("add = %+v", sum)
	}
	cs.Close()

	file := filepath.Join(dir, "tokens", "calc.json")
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	stored, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// The store keys its entries by issuer and resource.
	var tokens map[string]struct {
		Resource string `json:"resource"`
		Issuer   string `json:"issuer"`
		Token    struct {
			AccessToken string `json:"access_token"`
		} `json:"token"`
	}
	if err := json.Unmarshal(stored, &tokens); err != nil {
		t.Fatalf("stored tokens: %v", err)
	}
	var access string
	for _, e := range tokens {
		if e.Resource == calcURL && e.Issuer != "" {
			access = e.Token.AccessToken
		}
	}
	if access == "" {
		t.Fatalf("no token stored for %s with its issuer: %d entries", calcURL, len(tokens))
	}
	g.cmd.Process.Signal(syscall.SIGTERM)
	<-g.exited

	// A restart uses the stored token: no second authorization.
	g2 := startGateway(t, config)
	g2.waitLog(t, 0, upstreamReady("calc"))
	if n := iss.Authorizations(); n != 1 {
		t.Errorf("%d authorizations, want 1", n)
	}
	g2.cmd.Process.Signal(syscall.SIGTERM)
	<-g2.exited
	for _, p := range []*gatewayProcess{g, g2} {
		p.mu.Lock()
		for _, r := range p.records {
			line, _ := json.Marshal(r)
			if strings.Contains(string(line), access[strings.LastIndex(access, ".")+1:]) {
				t.Errorf("the access token reached the log: %s", line)
			}
			if msg, _ := r["msg"].(string); strings.HasPrefix(msg, "upstream authorization needed") && p == g2 {
				t.Errorf("asked again after the restart: %v", r)
			}
		}
		p.mu.Unlock()
	}
}

//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit/internal/testing/oauthtest"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// userServer is an MCP server that lists to anyone and calls only with a
// JWT access token of its issuer: its tool "whoami" answers the subject
// of the token of the call, and records it.
type userServer struct {
	url string
	iss *oauthtest.Issuer

	mu   sync.Mutex
	subs []string
}

func startUserServer(t *testing.T) *userServer {
	t.Helper()
	return startUserServerProtecting(t, false)
}

// startUserServerProtecting is startUserServer; with all, every request
// needs a token, listing included, as most servers that want one do.
func startUserServerProtecting(t *testing.T, all bool) *userServer {
	t.Helper()
	iss := oauthtest.NewIssuer(t)
	u := &userServer{iss: iss}
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	u.url = hs.URL + "/mcp"
	v, err := oauth.NewJWTVerifier(oauth.JWTConfig{JWKSURL: iss.JWKSURL(), Issuer: iss.URL, Audience: u.url})
	if err != nil {
		t.Fatal(err)
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "per-user", Version: "1"}, nil)
	t.Cleanup(func() {
		// The gateway, killed, ends no session: they end here.
		hs.Close()
		for ss := range srv.Sessions() {
			ss.Close()
		}
	})
	srv.AddTool(&sdk.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		sub := req.Extra.TokenInfo.UserID
		u.mu.Lock()
		u.subs = append(u.subs, sub)
		u.mu.Unlock()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: sub}}}, nil
	})
	meta, err := oauth.ProtectedResourceMetadataURL(u.url)
	if err != nil {
		t.Fatal(err)
	}
	open := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	protected := auth.RequireBearerToken(v.Verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: meta})(open)
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct{ Method string }
			if all || (json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call") {
				protected.ServeHTTP(w, r)
				return
			}
		}
		if all {
			protected.ServeHTTP(w, r)
			return
		}
		open.ServeHTTP(w, r)
	}))
	if err := oauth.HandleProtectedResourceMetadata(mux, &oauthex.ProtectedResourceMetadata{Resource: u.url, AuthorizationServers: []string{iss.URL}}); err != nil {
		t.Fatal(err)
	}
	return u
}

func (u *userServer) calls() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.subs)
}

// freeAddr returns a loopback address nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// openAuthorization is a person's browser: it opens the authorization URL
// (the issuer consents at once, as user) and follows the redirect to the
// gateway, which must accept it.
func openAuthorization(user, authURL string) error {
	req, err := http.NewRequest(http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	req.Header.Set(oauthtest.UserHeader, user)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Authorization complete") {
		return fmt.Errorf("the redirect ended with %s: %s", resp.Status, body)
	}
	return nil
}

// userClient connects to the gateway with token, as user; with urlAsk, it
// offers URL elicitation and opens the URLs it is sent (counted in asked).
func userClient(t *testing.T, g *gatewayProcess, token, user string, urlAsk bool, asked *atomic.Int32) *sdk.ClientSession {
	t.Helper()
	var opts *sdk.ClientOptions
	if urlAsk {
		opts = &sdk.ClientOptions{
			Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
			ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				asked.Add(1)
				if req.Params.Mode != "url" {
					return nil, fmt.Errorf("mode %q", req.Params.Mode)
				}
				if err := openAuthorization(user, req.Params.URL); err != nil {
					return nil, err
				}
				return &sdk.ElicitResult{Action: "accept"}, nil
			},
		}
	}
	return userClientWith(t, g, token, user, opts)
}

// userClientWith connects to the gateway with token, as user, with opts.
func userClientWith(t *testing.T, g *gatewayProcess, token, user string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: user, Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: g.mcpURL, HTTPClient: &http.Client{Transport: bearerTransport(token)}, MaxRetries: -1},
		&sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// userAuthorizationsOf reads the per-user authorization counts of
// namespace ns from /healthz, and the body.
func (g *gatewayProcess) userAuthorizationsOf(t *testing.T, ns string) (*userAuthorizations, string) {
	t.Helper()
	body := fetch(t, g.healthURL)
	var rep struct {
		Upstreams []struct {
			Namespace      string
			ClientSessions *struct {
				Users *userAuthorizations `json:"user_authorizations"`
			} `json:"client_sessions"`
		}
	}
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatalf("/healthz: %v: %s", err, body)
	}
	for _, u := range rep.Upstreams {
		if u.Namespace == ns && u.ClientSessions != nil {
			return u.ClientSessions.Users, body
		}
	}
	return nil, body
}

// TestGatewayPerUser: with oauth.per_user, each client of the gateway
// acts upstream as its own user. Alice authorizes through URL
// elicitation; Bob, not yet authorized, is asked in turn and the upstream
// sees Bob, never Alice; Carol's client, without URL elicitation, gets
// -32042 with the URL and calls again once she opened it; a forged
// redirect is refused; /healthz and /metrics count the users by state,
// naming none; a restart keeps each user's token.
func TestGatewayPerUser(t *testing.T) {
	up := startUserServer(t)
	dir := t.TempDir()
	writeFile(t, dir, "client-tokens", tokenA+"\n"+tokenB+"\n"+tokenC+"\n")
	addr := freeAddr(t)
	config := perUserConfig(t, dir, addr, up)
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("up"))

	var aliceAsked, bobAsked atomic.Int32
	alice := userClient(t, g, tokenA, "alice", true, &aliceAsked)
	if got, err := callTextErr(alice, "whoami", map[string]any{}); err != nil || got != "alice" {
		t.Fatalf("alice: %q, %v", got, err)
	}
	bob := userClient(t, g, tokenB, "bob", true, &bobAsked)
	if got, err := callTextErr(bob, "whoami", map[string]any{}); err != nil || got != "bob" {
		t.Fatalf("bob: %q, %v", got, err)
	}
	if got, err := callTextErr(alice, "whoami", map[string]any{}); err != nil || got != "alice" {
		t.Fatalf("alice again: %q, %v", got, err)
	}
	if aliceAsked.Load() != 1 || bobAsked.Load() != 1 {
		t.Errorf("asked: alice %d, bob %d; want once each", aliceAsked.Load(), bobAsked.Load())
	}

	carol := userClient(t, g, tokenC, "carol", false, nil)
	_, err := carol.CallTool(context.Background(), &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err := openAuthorization("carol", urlElicitationOf(t, err, up.iss.URL)); err != nil {
		t.Fatal(err)
	}
	if got, err := callTextErr(carol, "whoami", map[string]any{}); err != nil || got != "carol" {
		t.Fatalf("carol after authorizing: %q, %v", got, err)
	}

	resp, err := http.Get("http://" + addr + "/oauth/callback?code=code-9&state=forged")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a forged redirect: %s", resp.Status)
	}

	if got, want := up.calls(), []string{"alice", "bob", "alice", "carol"}; !slices.Equal(got, want) {
		t.Errorf("the upstream saw %v, want %v", got, want)
	}
	users, body := g.userAuthorizationsOf(t, "up")
	if users == nil || *users != (userAuthorizations{Authorized: 3}) {
		t.Errorf("/healthz user authorizations %+v in %s", users, body)
	}
	metrics := fetch(t, strings.TrimSuffix(g.healthURL, "/healthz")+"/metrics")
	if !strings.Contains(metrics, `toolkit_gateway_user_authorizations{`) || !strings.Contains(metrics, `toolkit_authorization_state="authorized"`) {
		t.Errorf("no user authorizations in /metrics")
	}
	for _, text := range []string{body, metrics} {
		for _, secret := range []string{"alice", "token:1", tokenA, "eyJ"} {
			if strings.Contains(text, secret) {
				t.Errorf("%q shows in %.200s", secret, text)
			}
		}
	}
	stored := fetchFile(t, filepath.Join(dir, "tokens", "up.json"))
	for _, p := range []string{`"principal": "token:1"`, `"principal": "token:2"`, `"principal": "token:3"`} {
		if !strings.Contains(stored, p) {
			t.Errorf("no token stored with %s", p)
		}
	}

	alice.Close()
	bob.Close()
	carol.Close()
	g.cmd.Process.Signal(syscall.SIGTERM)
	<-g.exited
	g2 := startGateway(t, config)
	g2.waitLog(t, 0, upstreamReady("up"))
	for _, c := range []struct{ token, user string }{{tokenA, "alice"}, {tokenB, "bob"}, {tokenC, "carol"}} {
		var asked atomic.Int32
		cs := userClient(t, g2, c.token, c.user, true, &asked)
		if got, err := callTextErr(cs, "whoami", map[string]any{}); err != nil || got != c.user {
			t.Errorf("%s after the restart: %q, %v", c.user, got, err)
		}
		if asked.Load() != 0 {
			t.Errorf("%s was asked again after the restart", c.user)
		}
	}
	// A client of the go-sdk's default protocol (2026-07-28, no session
	// of its own) acts as its user too.
	c := sdk.NewClient(&sdk.Implementation{Name: "alice-latest", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: g2.mcpURL, HTTPClient: &http.Client{Transport: bearerTransport(tokenA)}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got, err := callTextErr(cs, "whoami", map[string]any{}); err != nil || got != "alice" {
		t.Errorf("alice on protocol %s: %q, %v", cs.InitializeResult().ProtocolVersion, got, err)
	}
	if n := up.iss.Authorizations(); n != 3 {
		t.Errorf("%d authorizations, want 3", n)
	}
}

// fetchFile returns the text of a file.
func fetchFile(t *testing.T, path string) string {
	t.Helper()
	b, err := readSecretFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPerUserConfigErrors: per_user is refused, with the file, line and
// field, without client authentication, with shared upstream sessions, a
// redirect URL that is missing, not https off loopback, or on a path the
// gateway serves, and with client credentials.
func TestPerUserConfigErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "tokens", tokenA+"\n")
	const authed = "auth: {bearer: {tokens_file: tokens}}\n"
	const srv = "servers:\n  - name: up\n    url: https://up.example.com/mcp\n"
	checkConfigErrors(t, dir, []configError{
		{"no auth", "listen: 127.0.0.1:0\n" + srv + "    oauth: {per_user: true, redirect_url: 'https://gw.example/cb'}\n", "gw.yaml:5: servers[0].oauth.per_user: per_user needs the gateway to authenticate its clients"},
		{"shared", authed + srv + "    upstream_sessions: shared\n    oauth: {per_user: true, redirect_url: 'https://gw.example/cb'}\n", "gw.yaml:5: servers[0].upstream_sessions: per_user needs upstream_sessions: per_client"},
		{"no redirect", authed + srv + "    oauth:\n      per_user: true\n", "gw.yaml:5: servers[0].oauth: missing: per_user needs the gateway's public URL"},
		{"http redirect", authed + srv + "    oauth:\n      per_user: true\n      redirect_url: http://gw.example/cb\n", "gw.yaml:7: servers[0].oauth.redirect_url: redirect URL \"http://gw.example/cb\": want https"},
		{"health path", authed + srv + "    oauth:\n      per_user: true\n      redirect_url: https://gw.example/healthz\n", "gw.yaml:7: servers[0].oauth.redirect_url: the path /healthz is the gateway's for something else"},
		{"mcp path", authed + srv + "    oauth:\n      per_user: true\n      redirect_url: https://gw.example/mcp\n", "gw.yaml:7: servers[0].oauth.redirect_url: the path /mcp is the gateway's"},
		{"client credentials", authed + srv + "    oauth:\n      grant: client_credentials\n      client_id: gw\n      client_secret_env: PATH\n      per_user: true\n", "gw.yaml:9: servers[0].oauth.per_user: goes with grant authorization_code"},
	})
	// per_user implies per_client.
	cfg, err := parseConfig(filepath.Join(dir, "gw.yaml"), []byte(authed+srv+"    oauth: {per_user: true, redirect_url: 'https://gw.example/oauth/cb'}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Servers[0]; s.UpstreamSessions != upstreamPerClient || s.MaxUpstreamSessions == 0 {
		t.Errorf("upstream_sessions %q, max %d", s.UpstreamSessions, s.MaxUpstreamSessions)
	}
}

// TestGatewayPerUserProtectedListing: an upstream that wants a token for
// everything, listing included, is listed through the gateway's own
// session, which the operator authorizes once at the URL printed on
// standard error (the redirect comes back to the users' callback); each
// user's calls still go with their own token, never the operator's.
func TestGatewayPerUserProtectedListing(t *testing.T) {
	up := startUserServerProtecting(t, true)
	dir := t.TempDir()
	writeFile(t, dir, "client-tokens", tokenA+"\n")
	addr := freeAddr(t)
	config := perUserConfig(t, dir, addr, up)
	g := startGateway(t, config)
	rec := g.waitLog(t, 0, func(r map[string]any) bool {
		msg, _ := r["msg"].(string)
		return strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(msg, "(not JSON)")), up.iss.URL+"/authorize?")
	})
	if err := openAuthorization("operator", strings.TrimSpace(strings.TrimPrefix(rec["msg"].(string), "(not JSON)"))); err != nil {
		t.Fatal(err)
	}
	g.waitLog(t, 0, upstreamReady("up"))

	var asked atomic.Int32
	alice := userClient(t, g, tokenA, "alice", true, &asked)
	if got, err := callTextErr(alice, "whoami", map[string]any{}); err != nil || got != "alice" {
		t.Fatalf("alice: %q, %v", got, err)
	}
	if asked.Load() != 1 {
		t.Errorf("alice asked %d times, want once", asked.Load())
	}
	if subs := up.calls(); !slices.Equal(subs, []string{"alice"}) {
		t.Errorf("the upstream's calls came from %q, want alice's alone", subs)
	}
}

// perUserConfig writes the configuration of a gateway at addr, with
// metrics, whose clients present the tokens of dir/client-tokens and
// whose upstream up is per_user.
func perUserConfig(t *testing.T, dir, addr string, up *userServer) string {
	t.Helper()
	return perUserConfigWith(t, dir, addr, addr, up, "metrics: true\ntoken_dir: tokens\n")
}

// perUserConfigWith writes the configuration of perUserConfig with the
// redirect URL's host redirectAddr (a fleet's one public callback) and the
// top-level keys extra.
func perUserConfigWith(t *testing.T, dir, addr, redirectAddr string, up *userServer, extra string) string {
	t.Helper()
	return writeConfig(t, dir, fmt.Sprintf(`listen: %s
%sauth:
  bearer:
    tokens_file: client-tokens
servers:
  - name: up
    url: %s
    oauth:
      per_user: true
      redirect_url: http://%s/oauth/callback
      allow: [%s]
`, addr, extra, up.url, redirectAddr, up.iss.URL))
}

// urlElicitationOf returns the URL of the one URL elicitation of err, a
// -32042 error (URL elicitation required), at the authorization server
// issuer.
func urlElicitationOf(t *testing.T, err error, issuer string) string {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != sdk.CodeURLElicitationRequired {
		t.Fatalf("a call without URL elicitation: %v, want -32042", err)
	}
	var data struct{ Elicitations []*sdk.ElicitParams }
	if err := json.Unmarshal(we.Data, &data); err != nil || len(data.Elicitations) != 1 || !strings.HasPrefix(data.Elicitations[0].URL, issuer+"/authorize?") {
		t.Fatalf("the error's data: %s", we.Data)
	}
	return data.Elicitations[0].URL
}

// configError is a configuration that parseConfig must refuse, and what
// its error must say.
type configError struct {
	name, yaml string
	want       string
}

// checkConfigErrors checks that each configuration, as dir/gw.yaml, is
// refused with its message.
func checkConfigErrors(t *testing.T, dir string, cases []configError) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig(filepath.Join(dir, "gw.yaml"), []byte(tc.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			if msg := strings.ReplaceAll(err.Error(), filepath.Join(dir, "gw.yaml"), "gw.yaml"); !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not contain %q", msg, tc.want)
			}
		})
	}
}

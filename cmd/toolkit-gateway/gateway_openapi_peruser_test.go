//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/oauthtest"
)

// userAPI is an HTTP API whose operation GET /me answers the subject of
// the bearer token of the request, a token its authorization server
// issued, and records it; a request without one is answered 401.
type userAPI struct {
	url string
	iss *oauthtest.Issuer

	mu   sync.Mutex
	subs []string
}

func startUserAPI(t *testing.T) *userAPI {
	t.Helper()
	a := &userAPI{iss: oauthtest.NewIssuer(t)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sub := subjectOf(tok)
		if r.URL.Path != "/me" || !ok || !a.iss.Active(tok) || sub == "" {
			http.Error(w, "no token of the issuer", http.StatusUnauthorized)
			return
		}
		a.mu.Lock()
		a.subs = append(a.subs, sub)
		a.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, sub)
	}))
	t.Cleanup(srv.Close)
	a.url = srv.URL
	return a
}

// subjectOf returns the sub claim of a JWT, unverified ("" if none): the
// API asks its issuer whether the token is one it issued.
func subjectOf(tok string) string {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct{ Sub string }
	if json.Unmarshal(payload, &claims) != nil {
		return ""
	}
	return claims.Sub
}

func (a *userAPI) calls() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.subs)
}

// register registers the gateway as a client of the API's authorization
// server with redirect, and returns its ID and secret.
func (a *userAPI) register(t *testing.T, redirect string) (id, secret string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"redirect_uris": []string{redirect}})
	resp, err := http.Post(a.iss.URL+"/register", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var reg struct{ ClientID, ClientSecret string }
	if err := json.NewDecoder(resp.Body).Decode(&struct {
		ClientID     *string `json:"client_id"`
		ClientSecret *string `json:"client_secret"`
	}{&reg.ClientID, &reg.ClientSecret}); err != nil || reg.ClientID == "" || reg.ClientSecret == "" {
		t.Fatalf("registration: %s, %v", resp.Status, err)
	}
	return reg.ClientID, reg.ClientSecret
}

// consent is a person's browser at the authorization URL authURL, as
// user, that does not follow the redirect: it returns the redirect URL,
// with the code and state.
func consent(t *testing.T, user, authURL string) *url.URL {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, authURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(oauthtest.UserHeader, user)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || back.Query().Get("code") == "" {
		t.Fatalf("consent of %s: %s, %q", user, resp.Status, resp.Header.Get("Location"))
	}
	return back
}

// getStatus returns the status of a GET of u.
func getStatus(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

const userAPIDocument = `openapi: 3.0.3
info: {title: user API, version: "1"}
paths:
  /me:
    get:
      operationId: whoami
      security: [{user: [read]}]
      responses:
        "200":
          description: the subject of the token
          content: {text/plain: {schema: {type: string}}}
components:
  securitySchemes:
    user:
      type: oauth2
      flows:
        authorizationCode:
          authorizationUrl: %[1]s/authorize
          tokenUrl: %[1]s/token
          scopes: {read: read}
`

// userAPIConfig writes the configuration of a gateway at addr whose
// clients present the tokens of dir/client-tokens, with an openapi entry
// "api" for api whose scheme is per_user, the gateway registered as a
// client of api's authorization server; it returns the file and the
// client's secret.
func userAPIConfig(t *testing.T, dir, addr string, api *userAPI) (config, secret string) {
	t.Helper()
	redirect := "http://" + addr + "/oauth/callback"
	id, secret := api.register(t, redirect)
	t.Setenv("OA_USER_SECRET", secret)
	return userAPIConfigWith(t, dir, addr, redirect, id, api, ""), secret
}

// userAPIConfigWith is userAPIConfig for the client id, registered with
// redirect (its secret in $OA_USER_SECRET), with extra sections.
func userAPIConfigWith(t *testing.T, dir, addr, redirect, id string, api *userAPI, extra string) string {
	t.Helper()
	writeFile(t, dir, "client-tokens", tokenA+"\n"+tokenB+"\n"+tokenC+"\n")
	writeFile(t, dir, "api.yaml", fmt.Sprintf(userAPIDocument, api.iss.URL))
	return writeConfig(t, dir, fmt.Sprintf(`listen: %s
token_dir: tokens
%sauth:
  bearer:
    tokens_file: client-tokens
openapi:
  - name: api
    document: api.yaml
    base_url: %s
    allow: [%s]
    auth:
      user:
        per_user: true
        client_id: %s
        client_secret_env: OA_USER_SECRET
        redirect_url: %s
        scopes: [read]
`, addr, extra, api.url, api.iss.URL, id, redirect))
}

// TestGatewayOpenAPIPerUser: an openapi entry whose oauth2 scheme is
// per_user calls the API with each client's user's own token. Alice's
// first call gets -32042 with the authorization URL; once she consented
// and the redirect reached the gateway's callback, her calls carry her
// token; Bob is still asked, and never gets Alice's token: neither
// through a redirect carrying Alice's code under Bob's state (refused by
// PKCE at the token endpoint), nor a forged or replayed redirect
// (answered 400). The tokens are stored under token_dir, the gateway's
// log shows none, and it stops cleanly with an authorization waiting.
func TestGatewayOpenAPIPerUser(t *testing.T) {
	api := startUserAPI(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	redirect := "http://" + addr + "/oauth/callback"
	config, secret := userAPIConfig(t, dir, addr, api)
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("api"))

	alice := userClient(t, g, tokenA, "alice", false, nil)
	bob := userClient(t, g, tokenB, "bob", false, nil)
	_, err := callTextErr(alice, "whoami", map[string]any{})
	aliceURL := urlElicitationOf(t, err, api.iss.URL)
	_, err = callTextErr(bob, "whoami", map[string]any{})
	bobURL := urlElicitationOf(t, err, api.iss.URL)
	stateOf := func(u string) string {
		p, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		return p.Query().Get("state")
	}
	if stateOf(aliceURL) == "" || stateOf(aliceURL) == stateOf(bobURL) {
		t.Fatalf("the states of alice's and bob's authorizations: %q, %q", stateOf(aliceURL), stateOf(bobURL))
	}

	// A forged state is refused.
	if s := getStatus(t, redirect+"?code=code-1&state=forged"); s != http.StatusBadRequest {
		t.Errorf("a forged redirect: %d", s)
	}
	// Alice's code under Bob's state reaches Bob's authorization, whose
	// PKCE verifier is not the one of Alice's code: no token for Bob.
	stolen := consent(t, "alice", aliceURL)
	q := stolen.Query()
	q.Set("state", stateOf(bobURL))
	stolen.RawQuery = q.Encode()
	if s := getStatus(t, stolen.String()); s != http.StatusOK {
		t.Fatalf("the redirect under bob's state: %d", s)
	}
	_, err = callTextErr(bob, "whoami", map[string]any{})
	if again := urlElicitationOf(t, err, api.iss.URL); again == bobURL {
		t.Errorf("bob was sent to the authorization URL already used")
	}

	// Alice consents; her redirect counts once.
	back := consent(t, "alice", aliceURL)
	if s := getStatus(t, back.String()); s != http.StatusOK {
		t.Fatalf("alice's redirect: %d", s)
	}
	if s := getStatus(t, back.String()); s != http.StatusBadRequest {
		t.Errorf("alice's redirect replayed: %d", s)
	}
	if got, err := callTextErr(alice, "whoami", map[string]any{}); err != nil || got != "alice" {
		t.Fatalf("alice after authorizing: %q, %v", got, err)
	}
	// Bob is still asked; then he authorizes in turn.
	_, err = callTextErr(bob, "whoami", map[string]any{})
	if err := openAuthorization("bob", urlElicitationOf(t, err, api.iss.URL)); err != nil {
		t.Fatal(err)
	}
	if got, err := callTextErr(bob, "whoami", map[string]any{}); err != nil || got != "bob" {
		t.Fatalf("bob after authorizing: %q, %v", got, err)
	}
	if got, err := callTextErr(alice, "whoami", map[string]any{}); err != nil || got != "alice" {
		t.Fatalf("alice again: %q, %v", got, err)
	}
	if got, want := api.calls(), []string{"alice", "bob", "alice"}; !slices.Equal(got, want) {
		t.Errorf("the API saw %v, want %v", got, want)
	}

	stored := fetchFile(t, filepath.Join(dir, "tokens", "api.json"))
	for _, p := range []string{`"principal": "token:1"`, `"principal": "token:2"`} {
		if !strings.Contains(stored, p) {
			t.Errorf("no token stored with %s", p)
		}
	}
	if strings.Contains(stored, `"principal": "token:3"`) {
		t.Error("a token stored for carol, who never authorized")
	}
	// Carol is asked and never answers: the gateway stops all the same.
	carol := userClient(t, g, tokenC, "carol", false, nil)
	_, err = callTextErr(carol, "whoami", map[string]any{})
	urlElicitationOf(t, err, api.iss.URL)
	alice.Close()
	bob.Close()
	carol.Close()
	g.cmd.Process.Signal(syscall.SIGTERM)
	<-g.exited
	if g.exitErr != nil {
		t.Errorf("exit: %v", g.exitErr)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.records {
		if text := fmt.Sprint(r); strings.Contains(text, "eyJ") || strings.Contains(text, secret) || strings.Contains(text, "refresh-") {
			t.Errorf("a secret in the log: %.300s", text)
		}
	}
}

// TestGatewayOpenAPIPerUserElicitation: a client that offers URL
// elicitation is asked to open the authorization URL (elicitation/create
// of mode url) rather than given -32042: Alice opens it and her call
// goes on with her token; Bob declines, his call fails without reaching the API, and his next
// call asks again.
func TestGatewayOpenAPIPerUserElicitation(t *testing.T) {
	api := startUserAPI(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	config, _ := userAPIConfig(t, dir, addr, api)
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("api"))

	var aliceAsked, bobAsked atomic.Int32
	alice := elicitingClient(t, g, tokenA, func(p *sdk.ElicitParams) (*sdk.ElicitResult, error) {
		aliceAsked.Add(1)
		if err := openAuthorization("alice", p.URL); err != nil {
			return nil, err
		}
		return &sdk.ElicitResult{Action: "accept"}, nil
	})
	if got, err := callTextErr(alice, "whoami", map[string]any{}); err != nil || got != "alice" {
		t.Fatalf("alice: %q, %v", got, err)
	}
	bob := elicitingClient(t, g, tokenB, func(p *sdk.ElicitParams) (*sdk.ElicitResult, error) {
		bobAsked.Add(1)
		if p.Mode != "url" || !strings.HasPrefix(p.URL, api.iss.URL+"/authorize?") {
			return nil, fmt.Errorf("elicitation %+v", p)
		}
		return &sdk.ElicitResult{Action: "decline"}, nil
	})
	for range 2 {
		if got, err := callTextErr(bob, "whoami", map[string]any{}); err == nil {
			t.Fatalf("bob, who declined: %q", got)
		}
	}
	if got, err := callTextErr(alice, "whoami", map[string]any{}); err != nil || got != "alice" {
		t.Fatalf("alice again: %q, %v", got, err)
	}
	if aliceAsked.Load() != 1 || bobAsked.Load() != 2 {
		t.Errorf("asked: alice %d, bob %d; want 1 and 2", aliceAsked.Load(), bobAsked.Load())
	}
	if got, want := api.calls(), []string{"alice", "alice"}; !slices.Equal(got, want) {
		t.Errorf("the API saw %v, want %v", got, want)
	}
}

// elicitingClient connects to the gateway with token, offering URL
// elicitation, answered by answer.
func elicitingClient(t *testing.T, g *gatewayProcess, token string, answer func(*sdk.ElicitParams) (*sdk.ElicitResult, error)) *sdk.ClientSession {
	t.Helper()
	opts := &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return answer(req.Params)
		},
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "eliciting", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: g.mcpURL, HTTPClient: &http.Client{Transport: bearerTransport(token)}, MaxRetries: -1},
		&sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmkit/toolkit/internal/testing/oauthtest"
)

// TestGatewayPerUserTokenExchange: with oauth.per_user and grant
// token_exchange, each client of the gateway acts upstream with a token
// exchanged for the access token it presented (a JWT of the identity
// provider auth.jwt trusts, which the upstream's authorization server
// trusts too): the upstream sees alice and bob, nobody is asked to
// authorize anything; a user whose token the authorization server
// refuses gets its reason, and the upstream never sees them; no token
// or secret reaches the log.
func TestGatewayPerUserTokenExchange(t *testing.T) {
	up := startUserServer(t)
	idp := oauthtest.NewIssuer(t)
	up.iss.TrustIdP(idp)
	const secret = "exchange-secret-0123456789"
	up.iss.Register("gateway-exchange", oauthtest.Client{Secret: secret})
	dir := t.TempDir()
	writeFile(t, dir, "exchange-secret", secret+"\n")
	addr := freeAddr(t)
	resource := "http://" + addr + "/mcp"
	config := writeConfig(t, dir, fmt.Sprintf(`listen: %s
auth:
  jwt:
    jwks_url: %s
    issuer: %s
    audience: %s
servers:
  - name: up
    url: %s
    oauth:
      per_user: true
      grant: token_exchange
      client_id: gateway-exchange
      client_secret_file: exchange-secret
      allow: [%s]
`, addr, idp.JWKSURL(), idp.URL, resource, up.url, up.iss.URL))
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("up"))

	token := func(user string, claims map[string]any) string {
		c := idp.Claims(resource)
		c["sub"] = user
		for k, v := range claims {
			c[k] = v
		}
		return idp.Sign("rsa-1", c)
	}
	usersActAsThemselves(t, g, up, func(user string) string { return token(user, nil) })
	var asked atomic.Int32

	// Carol's token is not valid yet for the authorization server, which
	// allows no clock skew; the gateway allows 30 seconds.
	carol := userClient(t, g, token("carol", map[string]any{"nbf": time.Now().Add(20 * time.Second).Unix()}), "carol", true, &asked)
	_, err := callTextErr(carol, "whoami", map[string]any{})
	if err == nil || !strings.Contains(err.Error(), "OAuth token exchange refused") || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("carol, whose token the authorization server refuses: %v", err)
	}
	if got, want := up.calls(), []string{"alice", "bob", "alice", "bob"}; !slices.Equal(got, want) {
		t.Errorf("the upstream saw %v, want %v", got, want)
	}
	if users, body := g.userAuthorizationsOf(t, "up"); users == nil || *users != (userAuthorizations{Authorized: 2, Failed: 1}) {
		t.Errorf("/healthz user authorizations %+v in %s", users, body)
	}
	g.mu.Lock()
	logs, _ := json.Marshal(g.records)
	g.mu.Unlock()
	for _, text := range []string{string(logs), err.Error()} {
		for _, leak := range []string{"eyJ", secret} {
			if strings.Contains(text, leak) {
				t.Errorf("%q shows in %.300s", leak, text)
			}
		}
	}
}

// TestTokenExchangeConfigErrors: grant token_exchange is refused, with
// the file, line and field, without per_user, without a client ID,
// without auth.jwt, with what goes with sending a person to authorize,
// and audience goes with it alone; grant enterprise needs its IdP, whose
// fields go with it alone.
func TestTokenExchangeConfigErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "tokens", tokenA+"\n")
	const jwt = "auth: {jwt: {jwks_url: 'https://idp.example/jwks', issuer: 'https://idp.example', audience: 'https://gw.example/mcp'}}\n"
	const bearer = "auth: {bearer: {tokens_file: tokens}}\n"
	const srv = "servers:\n  - name: up\n    url: https://up.example.com/mcp\n"
	checkConfigErrors(t, dir, []configError{
		{"no per_user", jwt + srv + "    oauth:\n      grant: token_exchange\n      client_id: gw\n", "gw.yaml:6: servers[0].oauth.grant: the token_exchange grant exchanges each user's own access token: it needs per_user: true"},
		{"no client", jwt + srv + "    oauth: {per_user: true, grant: token_exchange}\n", "gw.yaml:5: servers[0].oauth.client_id: missing: the token_exchange grant needs the client's ID"},
		{"no auth", srv + "    oauth: {per_user: true, grant: token_exchange, client_id: gw}\n", "gw.yaml:4: servers[0].oauth.per_user: per_user needs the gateway to authenticate its clients"},
		{"bearer auth", bearer + srv + "    oauth:\n      per_user: true\n      grant: token_exchange\n      client_id: gw\n", "gw.yaml:7: servers[0].oauth.grant: the token_exchange grant exchanges the access tokens the clients present: it needs auth.jwt"},
		{"redirect", jwt + srv + "    oauth:\n      per_user: true\n      grant: token_exchange\n      client_id: gw\n      redirect_url: https://gw.example/cb\n", "gw.yaml:9: servers[0].oauth.redirect_url: goes with grant authorization_code"},
		{"audience", jwt + srv + "    oauth:\n      audience: x\n", "gw.yaml:6: servers[0].oauth.audience: goes with grant token_exchange"},
		{"bad grant", jwt + srv + "    oauth:\n      grant: exchange\n", `gw.yaml:6: servers[0].oauth.grant: "exchange" is not a grant: use authorization_code, client_credentials, token_exchange or enterprise`},
		{"bad scope", jwt + srv + "    oauth:\n      per_user: true\n      grant: token_exchange\n      client_id: gw\n      scopes: ['a b']\n", `gw.yaml:9: servers[0].oauth.scopes[0]: "a b" is not a scope`},
		{"enterprise no idp", jwt + srv + "    oauth:\n      per_user: true\n      grant: enterprise\n      client_id: gw\n", "gw.yaml:5: servers[0].oauth.idp_issuer: missing: the enterprise grant needs the issuer URL of the identity provider"},
		{"enterprise no idp client", jwt + srv + "    oauth:\n      per_user: true\n      grant: enterprise\n      client_id: gw\n      idp_issuer: https://idp.example\n", "gw.yaml:5: servers[0].oauth.idp_client_id: missing: the enterprise grant needs the gateway's client ID at the identity provider"},
		{"enterprise bearer auth", bearer + srv + "    oauth:\n      per_user: true\n      grant: enterprise\n      client_id: gw\n      idp_issuer: https://idp.example\n      idp_client_id: gw\n", "gw.yaml:7: servers[0].oauth.grant: the enterprise grant exchanges the ID tokens the clients present: it needs auth.jwt"},
		{"enterprise secret unset", jwt + srv + "    oauth:\n      per_user: true\n      grant: enterprise\n      client_id: gw\n      idp_issuer: https://idp.example\n      idp_client_id: gw\n      idp_client_secret_env: TOOLKIT_TEST_UNSET_IDP_SECRET\n", "gw.yaml:11: servers[0].oauth.idp_client_secret_env: environment variable TOOLKIT_TEST_UNSET_IDP_SECRET is not set"},
		{"idp without enterprise", jwt + srv + "    oauth:\n      idp_issuer: https://idp.example\n", "gw.yaml:6: servers[0].oauth.idp_issuer: goes with grant enterprise"},
		{"enterprise at another idp", jwt + srv + "    oauth:\n      per_user: true\n      grant: enterprise\n      client_id: gw\n      idp_issuer: https://other-idp.example\n      idp_client_id: gw\n", "gw.yaml:9: servers[0].oauth.idp_issuer: the users' ID tokens are issued by auth.jwt.issuer \"https://idp.example\": the enterprise grant exchanges them only at that identity provider"},
	})
	// token_exchange with per_user implies per_client, and needs no
	// redirect URL.
	cfg, err := parseConfig(filepath.Join(dir, "gw.yaml"), []byte(jwt+srv+"    oauth: {per_user: true, grant: token_exchange, client_id: gw, audience: up, scopes: [read]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Servers[0]; s.UpstreamSessions != upstreamPerClient || s.MaxUpstreamSessions == 0 {
		t.Errorf("upstream_sessions %q, max %d", s.UpstreamSessions, s.MaxUpstreamSessions)
	}
}

// TestGatewayPerUserEnterprise: with grant enterprise each user's own
// token, an ID token of the enterprise IdP that auth.jwt verified, is
// exchanged at the IdP for an identity assertion grant, which the
// upstream's authorization server redeems: alice and bob act upstream as
// themselves, once redeemed each, nobody asked; no token or secret
// reaches the log.
func TestGatewayPerUserEnterprise(t *testing.T) {
	up := startUserServer(t)
	idp := oauthtest.NewIssuer(t)
	up.iss.TrustIdP(idp)
	const secret = "enterprise-secret-0123456789"
	up.iss.Register("gateway-mcp", oauthtest.Client{Secret: secret})
	idp.Register("gateway-idp", oauthtest.Client{Secret: secret})
	t.Setenv("TOOLKIT_TEST_IDP_SECRET", secret)
	dir := t.TempDir()
	writeFile(t, dir, "client-secret", secret+"\n")
	addr := freeAddr(t)
	resource := "http://" + addr + "/mcp"
	config := writeConfig(t, dir, fmt.Sprintf(`listen: %s
auth:
  jwt:
    jwks_url: %s
    issuer: %s
    audience: %s
servers:
  - name: up
    url: %s
    oauth:
      per_user: true
      grant: enterprise
      client_id: gateway-mcp
      client_secret_file: client-secret
      idp_issuer: %s
      idp_client_id: gateway-idp
      idp_client_secret_env: TOOLKIT_TEST_IDP_SECRET
      allow: [%s]
`, addr, idp.JWKSURL(), idp.URL, resource, up.url, idp.URL, up.iss.URL))
	g := startGateway(t, config)
	g.waitLog(t, 0, upstreamReady("up"))

	token := func(iss *oauthtest.Issuer, user string) string {
		c := iss.Claims(resource)
		c["sub"] = user
		return iss.Sign("rsa-1", c)
	}
	usersActAsThemselves(t, g, up, func(user string) string { return token(idp, user) })
	if got, want := up.calls(), []string{"alice", "bob", "alice", "bob"}; !slices.Equal(got, want) {
		t.Errorf("the upstream saw %v, want %v", got, want)
	}
	if users, body := g.userAuthorizationsOf(t, "up"); users == nil || *users != (userAuthorizations{Authorized: 2}) {
		t.Errorf("/healthz user authorizations %+v in %s", users, body)
	}
	g.mu.Lock()
	logs, _ := json.Marshal(g.records)
	g.mu.Unlock()
	for _, leak := range []string{"eyJ", secret} {
		if strings.Contains(string(logs), leak) {
			t.Errorf("%q shows in the log", leak)
		}
	}
}

// usersActAsThemselves has alice and bob, with the tokens token gives,
// call whoami twice each through g: each is answered as themselves, with
// one exchange (or grant redeemed) each at up's authorization server, and
// nobody is asked to authorize.
func usersActAsThemselves(t *testing.T, g *gatewayProcess, up *userServer, token func(user string) string) {
	t.Helper()
	var asked atomic.Int32
	alice := userClient(t, g, token("alice"), "alice", true, &asked)
	bob := userClient(t, g, token("bob"), "bob", true, &asked)
	for range 2 {
		if got, err := callTextErr(alice, "whoami", map[string]any{}); err != nil || got != "alice" {
			t.Fatalf("alice: %q, %v", got, err)
		}
		if got, err := callTextErr(bob, "whoami", map[string]any{}); err != nil || got != "bob" {
			t.Fatalf("bob: %q, %v", got, err)
		}
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the users were asked %d times, want never", n)
	}
	for _, user := range []string{"alice", "bob"} {
		if n := up.iss.ExchangesFor(user); n != 1 {
			t.Errorf("%d exchanges for %s, want 1", n, user)
		}
	}
}

// TestGatewayExchangeKeepsConfiguredTokens: beside auth.jwt, a client
// authenticated by a token of auth.bearer is refused by an upstream whose
// grant exchanges the users' tokens (token_exchange, enterprise), with a
// clear reason, and its token, the gateway's own credential, never reaches
// the upstream's authorization server or the IdP; a client with a JWT of
// the IdP still acts as itself; the gateway warns at start, with the file
// and line, which clients can use the upstream.
func TestGatewayExchangeKeepsConfiguredTokens(t *testing.T) {
	for _, grant := range []string{grantTokenExchange, grantEnterprise} {
		t.Run(grant, func(t *testing.T) {
			up := startUserServer(t)
			idp := oauthtest.NewIssuer(t)
			up.iss.TrustIdP(idp)
			const secret = "exchange-secret-0123456789"
			up.iss.Register("gateway-mcp", oauthtest.Client{Secret: secret})
			idp.Register("gateway-idp", oauthtest.Client{Secret: secret})
			dir := t.TempDir()
			writeFile(t, dir, "client-secret", secret+"\n")
			writeFile(t, dir, "tokens", tokenA+"\n")
			addr := freeAddr(t)
			resource := "http://" + addr + "/mcp"
			idpFields := ""
			if grant == grantEnterprise {
				t.Setenv("TOOLKIT_TEST_IDP_SECRET", secret)
				idpFields = fmt.Sprintf("      idp_issuer: %s\n      idp_client_id: gateway-idp\n      idp_client_secret_env: TOOLKIT_TEST_IDP_SECRET\n", idp.URL)
			}
			config := writeConfig(t, dir, fmt.Sprintf(`listen: %s
auth:
  bearer:
    tokens_file: tokens
  jwt:
    jwks_url: %s
    issuer: %s
    audience: %s
servers:
  - name: up
    url: %s
    oauth:
      per_user: true
      grant: %s
      client_id: gateway-mcp
      client_secret_file: client-secret
%s      allow: [%s]
`, addr, idp.JWKSURL(), idp.URL, resource, up.url, grant, idpFields, up.iss.URL))
			g := startGateway(t, config)
			g.waitLog(t, 0, func(r map[string]any) bool {
				msg, _ := r["msg"].(string)
				return r["level"] == "WARN" && strings.Contains(msg, config+":14: servers[0].oauth.grant: only the clients authenticated by auth.jwt")
			})
			g.waitLog(t, 0, upstreamReady("up"))

			var asked atomic.Int32
			static := userClient(t, g, tokenA, "static", true, &asked)
			_, err := callTextErr(static, "whoami", map[string]any{})
			if err == nil || !strings.Contains(err.Error(), "identity provider issued") {
				t.Fatalf("the client of a configured token: %v", err)
			}
			for name, iss := range map[string]*oauthtest.Issuer{"authorization server": up.iss, "IdP": idp} {
				if reqs := iss.ExchangeRequests(); len(reqs) != 0 {
					t.Errorf("the %s received %d exchange requests for the configured token: %+v", name, len(reqs), reqs)
				}
			}
			c := idp.Claims(resource)
			c["sub"] = "alice"
			alice := userClient(t, g, idp.Sign("rsa-1", c), "alice", true, &asked)
			if got, err := callTextErr(alice, "whoami", map[string]any{}); err != nil || got != "alice" {
				t.Fatalf("alice: %q, %v", got, err)
			}
			if got, want := up.calls(), []string{"alice"}; !slices.Equal(got, want) {
				t.Errorf("the upstream saw %v, want %v", got, want)
			}
			if n := asked.Load(); n != 0 {
				t.Errorf("asked %d times, want never", n)
			}
		})
	}
}

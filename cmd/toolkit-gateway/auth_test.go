package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/llmkit/toolkit/internal/testing/oauthtest"
)

const (
	tokenA = "token-aaaaaaaaaaaaaaaa"
	tokenB = "token-bbbbbbbbbbbbbbbb"
	tokenC = "token-cccccccccccccccc"
)

func TestParseAuthConfig(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GW_TEST_TOKENS", tokenA+", "+tokenB)
	t.Setenv("GW_TEST_SECRET", "env-secret")
	t.Setenv("GW_CLIENT_ID", "gw-from-env")
	writeFile(t, dir, "tokens", "# the tokens\n\n  "+tokenC+"  \n")
	writeFile(t, dir, "secret", "file-secret\nignored\n")
	cfg, err := parseConfig(filepath.Join(dir, "gw.yaml"), []byte(`
auth:
  bearer: {tokens_env: GW_TEST_TOKENS, tokens_file: tokens}
  jwt:
    jwks_url: https://auth.example.com/jwks
    issuer: https://auth.example.com
    audience: https://gw.example.com/mcp
    required_scopes: [mcp]
    require_access_token_type: true
token_dir: tokens-dir
servers:
  - name: cc
    url: https://cc.example.com/mcp
    oauth: {grant: client_credentials, client_id: gw, client_secret_file: secret}
  - name: code
    url: https://code.example.com/mcp
    oauth: {client_id: "${GW_CLIENT_ID}", client_secret_env: GW_TEST_SECRET, scopes: [read]}
  - name: dcr
    url: https://dcr.example.com/mcp
    oauth: {redirect_url: "http://localhost:8976/callback"}
`))
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.Auth.Bearer
	want := []tokenHash{sha256.Sum256([]byte(tokenA)), sha256.Sum256([]byte(tokenB)), sha256.Sum256([]byte(tokenC))}
	if len(b.tokens) != 3 || b.tokens[0] != want[0] || b.tokens[1] != want[1] || b.tokens[2] != want[2] {
		t.Errorf("tokens: %d hashes, not those of the three tokens", len(b.tokens))
	}
	if b.TokensFile != filepath.Join(dir, "tokens") || cfg.TokenDir != filepath.Join(dir, "tokens-dir") {
		t.Errorf("paths not made relative to the file: %q %q", b.TokensFile, cfg.TokenDir)
	}
	j := cfg.Auth.JWT
	if vc := j.verifierConfig(nil); !vc.RequireAccessTokenType || vc.Issuer != j.Issuer {
		t.Errorf("verifier config: %+v", vc)
	}
	if j.Resource != j.Audience || len(j.AuthorizationServers) != 1 || j.AuthorizationServers[0] != j.Issuer {
		t.Errorf("jwt defaults: %+v", j)
	}
	if m := j.metadata(); m.Resource != "https://gw.example.com/mcp" || m.ScopesSupported[0] != "mcp" || m.BearerMethodsSupported[0] != "header" {
		t.Errorf("metadata: %+v", m)
	}
	cc, code, dcr := cfg.Servers[0].OAuth, cfg.Servers[1].OAuth, cfg.Servers[2].OAuth
	if cc.Grant != grantClientCredentials || cc.secret != "file-secret" {
		t.Errorf("client credentials: %+v", cc)
	}
	if code.Grant != grantAuthorizationCode || code.secret != "env-secret" || code.RedirectURL != defaultRedirectURL || code.ClientID != "gw-from-env" {
		t.Errorf("authorization code: %+v", code)
	}
	if dcr.ClientID != "" || dcr.RedirectURL != "http://localhost:8976/callback" {
		t.Errorf("dynamic registration: %+v", dcr)
	}
	if tokenFile(cfg.TokenDir, "code") != filepath.Join(dir, "tokens-dir", "code.json") {
		t.Errorf("token file %s", tokenFile(cfg.TokenDir, "code"))
	}
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every problem of the auth and oauth sections is refused with the file,
// line and field, and no secret in the message.
func TestParseAuthConfigErrors(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GW_TEST_SHORT", "s3cret-short")
	t.Setenv("GW_TEST_EMPTY", "")
	os.Unsetenv("GW_TEST_UNSET")
	writeFile(t, dir, "bad-tokens", tokenA+"\nsecret with spaces in it\n")
	writeFile(t, dir, "empty", "# nothing\n")
	const jwt = "auth:\n  jwt:\n    jwks_url: https://a.example.com/jwks\n    issuer: https://a.example.com\n    audience: https://gw.example.com/mcp\n"
	const srv = "servers:\n  - name: up\n    url: https://up.example.com/mcp\n"
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"empty auth", "auth: {}\n", []string{"gw.yaml:1: auth: give bearer, jwt or both"}},
		{"well-known path", "path: /.well-known/oauth-protected-resource\nauth: {bearer: {tokens_env: GW_TEST_SHORT}}\n", []string{"gw.yaml:1: path: with auth, /.well-known/ is for the protected resource metadata"}},
		{"auth on stdio", "transport: stdio\nauth: {bearer: {tokens_env: GW_TEST_SHORT}}\n", []string{"gw.yaml:2: auth: auth is for transport http"}},
		{"unknown auth field", "auth:\n  basic: {}\n", []string{"gw.yaml:2: auth.basic: unknown field (known: bearer, jwt)"}},
		{"inline tokens", "auth:\n  bearer:\n    tokens: [abc]\n", []string{"gw.yaml:3: auth.bearer.tokens: unknown field (known: tokens_env, tokens_file)"}},
		{"no token source", "auth:\n  bearer: {}\n", []string{"gw.yaml:2: auth.bearer: give tokens_env, tokens_file or both"}},
		{"unset env", "auth:\n  bearer:\n    tokens_env: GW_TEST_UNSET\n", []string{"gw.yaml:3: auth.bearer.tokens_env: environment variable GW_TEST_UNSET is not set"}},
		{"short token", "auth:\n  bearer:\n    tokens_env: GW_TEST_SHORT\n", []string{"gw.yaml:3: auth.bearer.tokens_env: token 1 of GW_TEST_SHORT is too short"}},
		{"no tokens", "auth:\n  bearer:\n    tokens_env: GW_TEST_EMPTY\n", []string{"gw.yaml:2: auth.bearer: no token found"}},
		{"empty tokens file", "auth:\n  bearer:\n    tokens_file: empty\n", []string{"gw.yaml:2: auth.bearer: no token found"}},
		{"bad token in file", "auth:\n  bearer:\n    tokens_file: bad-tokens\n", []string{"gw.yaml:3: auth.bearer.tokens_file: the token at " + filepath.Join(dir, "bad-tokens") + ":2 has characters"}},
		{"missing tokens file", "auth:\n  bearer:\n    tokens_file: nowhere\n", []string{"gw.yaml:3: auth.bearer.tokens_file: open " + filepath.Join(dir, "nowhere")}},
		{"jwt without fields", "auth:\n  jwt: {jwks_url: https://a.example.com/jwks}\n", []string{"gw.yaml:2: auth.jwt.issuer: missing", "gw.yaml:2: auth.jwt.audience: missing"}},
		{"jwks over http", strings.Replace(jwt, "https://a.example.com/jwks", "http://a.example.com/jwks", 1), []string{"gw.yaml:3: auth.jwt.jwks_url: \"http://a.example.com/jwks\": use https"}},
		{"hmac", jwt + "    algorithms: [RS256, HS256]\n", []string{`gw.yaml:6: auth.jwt.algorithms[1]: "HS256" is not accepted`}},
		{"audience not a URL", strings.Replace(jwt, "https://gw.example.com/mcp", "gateway", 1), []string{"gw.yaml:5: auth.jwt.audience: the resource identifier must be the absolute URL"}},
		{"resource not a URL", jwt + "    audience: x\n    resource: /mcp\n", []string{"gw.yaml:"}},
		{"bad scope", jwt + "    required_scopes: [ok, 'two words']\n", []string{`gw.yaml:6: auth.jwt.required_scopes[1]: "two words" is not a scope`}},
		{"negative leeway", jwt + "    leeway: -1s\n", []string{"gw.yaml:6: auth.jwt.leeway: must not be negative"}},
		{"leeway type", jwt + "    leeway: [1s]\n", []string{"gw.yaml:6: auth.jwt.leeway: cannot use a list as a duration"}},
		{"bad authorization server", jwt + "    authorization_servers: [ftp://x]\n", []string{`gw.yaml:6: auth.jwt.authorization_servers[0]: "ftp://x" is not an http(s) URL`}},
		{"unknown oauth field", srv + "    oauth:\n      client_secret: hunter2\n", []string{"gw.yaml:5: servers[0].oauth.client_secret: unknown field (known: grant, client_id, client_secret_env, client_secret_file, scopes, audience, idp_issuer, idp_client_id, idp_client_secret_env, redirect_url, client_name, client_metadata_url, no_dynamic_registration, allow, per_user)"}},
		{"bad grant", srv + "    oauth:\n      grant: password\n", []string{`gw.yaml:5: servers[0].oauth.grant: "password" is not a grant`}},
		{"oauth on stdio", "servers:\n  - name: up\n    command: [x]\n    oauth: {}\n", []string{"gw.yaml:4: servers[0].oauth: OAuth is for http(s) servers"}},
		{"oauth and Authorization", srv + "    headers: {Authorization: Bearer x}\n    oauth: {}\n", []string{"gw.yaml:4: servers[0].headers.Authorization: an Authorization header and oauth exclude each other"}},
		{"client credentials without client", srv + "    oauth: {grant: client_credentials}\n", []string{"gw.yaml:4: servers[0].oauth.client_id: missing", "gw.yaml:4: servers[0].oauth: missing: the client_credentials grant needs client_secret_env or client_secret_file"}},
		{"client credentials with scopes", srv + "    oauth:\n      grant: client_credentials\n      client_id: gw\n      client_secret_env: GW_TEST_SHORT\n      scopes: [a]\n", []string{"gw.yaml:8: servers[0].oauth.scopes: goes with grant authorization_code"}},
		{"unset secret", srv + "    oauth:\n      client_id: gw\n      client_secret_env: GW_TEST_UNSET\n", []string{"gw.yaml:6: servers[0].oauth.client_secret_env: environment variable GW_TEST_UNSET is not set"}},
		{"both secrets", srv + "    oauth:\n      client_id: gw\n      client_secret_env: GW_TEST_SHORT\n      client_secret_file: empty\n", []string{"gw.yaml:7: servers[0].oauth.client_secret_file: give client_secret_env or client_secret_file, not both"}},
		{"secret without client", srv + "    oauth:\n      client_secret_env: GW_TEST_SHORT\n", []string{"gw.yaml:4: servers[0].oauth.client_id: a client secret needs its client_id"}},
		{"missing secret file", srv + "    oauth:\n      client_id: gw\n      client_secret_file: nowhere\n", []string{"gw.yaml:6: servers[0].oauth.client_secret_file: open "}},
		{"no way to register", srv + "    oauth:\n      no_dynamic_registration: true\n", []string{"gw.yaml:5: servers[0].oauth.no_dynamic_registration: without client_id"}},
		{"bad allowed destination", srv + "    oauth:\n      allow: [localhost, \"http://x/path\"]\n", []string{`gw.yaml:5: servers[0].oauth.allow[1]: allowed destination "http://x/path": want an origin`}},
		{"metadata URL", srv + "    oauth:\n      client_metadata_url: http://x/c.json\n", []string{`gw.yaml:5: servers[0].oauth.client_metadata_url: "http://x/c.json" is not an https URL`}},
		{"token_dir a file", "token_dir: empty\n", []string{"gw.yaml:1: token_dir: " + filepath.Join(dir, "empty") + " is not a directory"}},
		{"client_id of an unset variable", srv + "    oauth:\n      client_id: ${GW_TEST_UNSET}\n", []string{"gw.yaml:5: servers[0].oauth.client_id: environment variable GW_TEST_UNSET is not set"}},
		{"placeholder in the URL", "servers:\n  - name: up\n    url: https://up.example.com/mcp?key=${GW_TEST_SHORT}\n", []string{"gw.yaml:3: servers[0].url: ${...} is expanded only in servers[].headers and servers[].oauth.client_id"}},
		{"placeholder in env", "servers:\n  - name: up\n    command: [x]\n    env: {TOKEN: \"${GW_TEST_SHORT}\"}\n", []string{"gw.yaml:4: servers[0].env.TOKEN: ${...} is expanded only in"}},
		{"placeholder in a command", "servers:\n  - name: up\n    command: [x, \"--token=${GW_TEST_SHORT}\"]\n", []string{"gw.yaml:3: servers[0].command[1]: ${...} is expanded only in"}},
		{"placeholder in redirect_url", srv + "    oauth:\n      redirect_url: \"http://127.0.0.1:${PORT}/cb\"\n", []string{"gw.yaml:5: servers[0].oauth.redirect_url: ${...} is expanded only in"}},
		{"placeholder in a scope", srv + "    oauth:\n      scopes: [\"${SCOPE}\"]\n", []string{"gw.yaml:5: servers[0].oauth.scopes[0]: ${...} is expanded only in"}},
		{"placeholder in listen", "listen: \"127.0.0.1:${PORT}\"\n", []string{"gw.yaml:1: listen: ${...} is expanded only in"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig(filepath.Join(dir, "gw.yaml"), []byte(tc.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			msg := strings.ReplaceAll(err.Error(), filepath.Join(dir, "gw.yaml"), "gw.yaml")
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			for _, secret := range []string{"s3cret-short", "secret with spaces", "hunter2"} {
				if strings.Contains(msg, secret) {
					t.Errorf("error quotes a secret: %q", msg)
				}
			}
		})
	}
}

// The authenticator accepts the configured tokens, then JWTs; the tokens
// are replaced as a whole.
func TestAuthenticator(t *testing.T) {
	iss := oauthtest.NewIssuer(t)
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := newAuthenticator(&Auth{
		Bearer: &BearerAuth{tokens: []tokenHash{sha256.Sum256([]byte(tokenA)), sha256.Sum256([]byte(tokenB))}},
		JWT:    &JWTAuth{JWKSURL: iss.JWKSURL(), Issuer: iss.URL, Audience: "https://gw.example.com/mcp", Resource: "https://gw.example.com/mcp", RequiredScopes: []string{"mcp"}},
	}, logger)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	info, err := a.verify(ctx, tokenB, nil)
	if err != nil || info.UserID != "token:2" || len(info.Scopes) != 1 || info.Scopes[0] != "mcp" {
		t.Fatalf("configured token: %+v, %v", info, err)
	}
	if _, err := a.verify(ctx, tokenA+"x", nil); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("other token: %v", err)
	}
	jwt := iss.Sign("ec-1", iss.Claims("https://gw.example.com/mcp", "mcp"))
	if info, err := a.verify(ctx, jwt, nil); err != nil || info.UserID != "jwt:user-1" {
		t.Errorf("JWT: %+v, %v", info, err)
	}
	// A JWT whose subject names a configured token's principal is another
	// principal all the same.
	claims := iss.Claims("https://gw.example.com/mcp", "mcp")
	claims["sub"] = "token:2"
	if info, err := a.verify(ctx, iss.Sign("ec-1", claims), nil); err != nil || info.UserID == configuredPrincipal(2) {
		t.Errorf("JWT with sub token:2: %+v, %v", info, err)
	}
	a.setTokens([]tokenHash{sha256.Sum256([]byte(tokenC))})
	if _, err := a.verify(ctx, tokenA, nil); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("replaced token: %v", err)
	}
	if _, err := a.verify(ctx, tokenC, nil); err != nil {
		t.Errorf("new token: %v", err)
	}
	if out := logs.String(); strings.Contains(out, tokenA) || strings.Contains(out, jwt[len(jwt)-20:]) {
		t.Errorf("a token reached the log: %s", out)
	}

	// Only configured tokens: a refusal is logged at debug level.
	logs.Reset()
	a, err = newAuthenticator(&Auth{Bearer: &BearerAuth{tokens: []tokenHash{sha256.Sum256([]byte(tokenA))}}}, logger)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.verify(ctx, tokenB, nil); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("other token: %v", err)
	}
	if out := logs.String(); !strings.Contains(out, "level=DEBUG") || !strings.Contains(out, "not one of the configured tokens") || strings.Contains(out, tokenB) {
		t.Errorf("log: %s", out)
	}
	if opts := a.options(0); len(opts) != 1 {
		t.Errorf("%d HTTP options without jwt, want 1 (no protected resource)", len(opts))
	}
}

// An upstream whose redirect URL cannot be listened on (taken, not
// loopback, not plain http, no path) is refused with its place in the
// file and the reason.
func TestGatewayOAuthRedirectRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for redirect, want := range map[string]string{
		"http://" + ln.Addr().String() + "/callback": "address already in use",
		"http://example.com:8976/callback":           "not a loopback address",
		"https://127.0.0.1:8976/callback":            "want an http:// redirect URL",
		"http://127.0.0.1:8976":                      "want a redirect URL with a path",
	} {
		cfg, err := parseConfig("gw.yaml", []byte("servers:\n  - name: up\n    url: https://up.example.com/mcp\n    oauth:\n      redirect_url: "+redirect+"\n"))
		if err != nil {
			t.Fatalf("%s: %v", redirect, err)
		}
		_, err = newGateway("gw.yaml", cfg, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), `gw.yaml:2: servers: "up": oauth: redirect_url: `) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want one naming the place and %q", redirect, err, want)
		}
	}
}

// A reload replaces the bearer tokens; other auth changes wait for a
// restart and keep the running values.
func TestReloadAuth(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "tokens", tokenA+"\n")
	const text = "listen: 127.0.0.1:0\nauth:\n  bearer: {tokens_file: tokens}\n  jwt: {jwks_url: 'https://a.example.com/jwks', issuer: 'https://a.example.com', audience: 'https://gw.example.com/mcp'}\n"
	file := filepath.Join(dir, "gw.yaml")
	cur, err := parseConfig(file, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	g, err := newGateway(file, cur, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer g.srv.Close()
	writeFile(t, dir, "tokens", tokenB+"\n")
	next, err := parseConfig(file, []byte(strings.Replace(text, "https://a.example.com'", "https://b.example.com'", 1)))
	if err != nil {
		t.Fatal(err)
	}
	g.reloadAuth(cur, next)
	ctx := context.Background()
	if _, err := g.auth.verify(ctx, tokenA, nil); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("old token: %v", err)
	}
	if _, err := g.auth.verify(ctx, tokenB, nil); err != nil {
		t.Errorf("new token: %v", err)
	}
	if next.Auth.JWT.Issuer != "https://a.example.com" {
		t.Errorf("issuer after the reload: %s", next.Auth.JWT.Issuer)
	}
	if out := logs.String(); !strings.Contains(out, `needs a restart; ignored" field=auth.jwt`) || !strings.Contains(out, "bearer tokens reloaded") {
		t.Errorf("log: %s", out)
	}
}

// FuzzTokens checks the two forms bearer tokens are given in: every entry
// is either a usable token, whose hash is kept, or refused with a message
// that does not quote it; nothing else is kept, and nothing panics.
func FuzzTokens(f *testing.F) {
	f.Add("0123456789abcdef0123\n# a comment\n\n  tok-with.allowed~chars+/==  \r\nshort\nhas space inside it\n")
	f.Add("a,b , 0123456789abcdef0123,\t0123456789ABCDEF0123=\n")
	f.Add("#only a comment")
	f.Add("")
	f.Add("\x00\xff0123456789abcdef\n=====================\n")
	f.Fuzz(func(t *testing.T, data string) {
		check := func(form string, entries []string, got []tokenHash, refused map[int]string) {
			var want []tokenHash
			for i, e := range entries {
				if msg, ok := refused[i+1]; ok {
					if badToken(e) == "" || len(e) >= 8 && strings.Contains(msg, e) {
						t.Fatalf("%s: entry %d %q refused with %q", form, i+1, e, msg)
					}
					continue
				}
				if badToken(e) != "" {
					t.Fatalf("%s: unusable entry %d %q neither kept nor refused", form, i+1, e)
				}
				want = append(want, sha256.Sum256([]byte(e)))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: kept %d tokens, want %d", form, len(got), len(want))
			}
		}
		refused := map[int]string{}
		got := envTokens(data, func(i int, msg string) { refused[i] = msg })
		check("environment", strings.FieldsFunc(data, func(r rune) bool { return strings.ContainsRune(", \t\n\r", r) }), got, refused)

		// A file's entries are its lines; blank and comment lines count
		// for numbering but are never entries.
		var lines []string
		lineOf := map[int]int{} // entry index → line number
		for n, l := range strings.Split(data, "\n") {
			if tok := strings.TrimSpace(l); tok != "" && !strings.HasPrefix(tok, "#") {
				lineOf[len(lines)] = n + 1
				lines = append(lines, tok)
			}
		}
		byLine := map[int]string{}
		got = fileTokens([]byte(data), func(line int, msg string) { byLine[line] = msg })
		refused = map[int]string{}
		for i := range lines {
			if msg, ok := byLine[lineOf[i]]; ok {
				refused[i+1] = msg
				delete(byLine, lineOf[i])
			}
		}
		if len(byLine) > 0 {
			t.Fatalf("file: lines refused that hold no entry: %v", byLine)
		}
		check("file", lines, got, refused)
	})
}

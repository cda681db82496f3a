package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/oauthtest"
)

const testAudience = "https://gateway.example.com/mcp"

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// lockedBuffer is a log sink safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func newTestVerifier(t *testing.T, iss *oauthtest.Issuer, mod func(*JWTConfig)) (*JWTVerifier, *lockedBuffer, *testClock) {
	t.Helper()
	logs := &lockedBuffer{}
	cfg := JWTConfig{
		JWKSURL: iss.JWKSURL(), Issuer: iss.URL, Audience: testAudience,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if mod != nil {
		mod(&cfg)
	}
	v, err := NewJWTVerifier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clock := &testClock{t: time.Now()}
	v.now = clock.now
	return v, logs, clock
}

// TestJWTVerifierRequireAccessTokenType checks that with
// RequireAccessTokenType only tokens typed at+jwt pass, and that the reason
// of a refusal is logged.
func TestJWTVerifierRequireAccessTokenType(t *testing.T) {
	leakCheck(t)
	iss := oauthtest.NewIssuer(t)
	v, logs, _ := newTestVerifier(t, iss, func(c *JWTConfig) { c.RequireAccessTokenType = true })
	claims := iss.Claims(testAudience, "tools:read")
	for typ, ok := range map[string]bool{"at+jwt": true, "application/at+jwt": true, "JWT": false, "": false, "dpop+jwt": false} {
		_, err := v.Verify(context.Background(), iss.SignTyped("rsa-1", "rsa-1", typ, claims), nil)
		if ok != (err == nil) {
			t.Errorf("typ %q: err = %v, want accepted %v", typ, err, ok)
		}
		if !ok && !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("typ %q: err = %v, want auth.ErrInvalidToken", typ, err)
		}
	}
	if !strings.Contains(logs.String(), "want at+jwt") {
		t.Errorf("the log does not say why:\n%s", logs)
	}
}

func TestJWTVerifier(t *testing.T) {
	leakCheck(t)
	iss := oauthtest.NewIssuer(t)
	iss.AddKey("other", jose.RS256, false) // never published
	v, logs, _ := newTestVerifier(t, iss, nil)
	ctx := context.Background()
	claims := func(mod func(map[string]any)) map[string]any {
		c := iss.Claims(testAudience, "tools:read", "tools:call")
		if mod != nil {
			mod(c)
		}
		return c
	}
	valid := iss.Sign("rsa-1", claims(nil))
	other := iss.Sign("rsa-1", claims(func(c map[string]any) { c["sub"] = "someone-else" }))
	part := strings.Split(valid, ".")
	b64 := base64.RawURLEncoding.EncodeToString
	hs, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")}, (&jose.SignerOptions{}).WithHeader("kid", "rsa-1"))
	if err != nil {
		t.Fatal(err)
	}
	hmac, err := jwt.Signed(hs).Claims(claims(nil)).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims(nil))

	for _, tc := range []struct {
		name, token string
		ok          bool
	}{
		{"RS256", valid, true},
		{"ES256", iss.Sign("ec-1", claims(nil)), true},
		{"no kid", iss.Forge("ec-1", "", claims(nil)), true},
		{"audience with a trailing slash", iss.Sign("rsa-1", claims(func(c map[string]any) { c["aud"] = []string{"other", testAudience + "/"} })), true},
		{"expired within the leeway", iss.Sign("rsa-1", claims(func(c map[string]any) { c["exp"] = time.Now().Add(-10 * time.Second).Unix() })), true},
		{"expired", iss.Sign("rsa-1", claims(func(c map[string]any) { c["exp"] = time.Now().Add(-2 * time.Minute).Unix() })), false},
		{"not yet valid", iss.Sign("rsa-1", claims(func(c map[string]any) { c["nbf"] = time.Now().Add(2 * time.Minute).Unix() })), false},
		{"no exp", iss.Sign("rsa-1", claims(func(c map[string]any) { delete(c, "exp") })), false},
		{"wrong issuer", iss.Sign("rsa-1", claims(func(c map[string]any) { c["iss"] = "https://evil.example.com" })), false},
		{"wrong audience", iss.Sign("rsa-1", claims(func(c map[string]any) { c["aud"] = "https://other.example.com/mcp" })), false},
		{"no audience", iss.Sign("rsa-1", claims(func(c map[string]any) { delete(c, "aud") })), false},
		{"bad signature", part[0] + "." + strings.Split(other, ".")[1] + "." + part[2], false},
		{"signed by an unpublished key under a published kid", iss.Forge("other", "rsa-1", claims(nil)), false},
		{"alg none", b64([]byte(`{"alg":"none","kid":"rsa-1"}`)) + "." + b64(payload) + ".", false},
		{"HS256", hmac, false},
		{"typ JWT", iss.SignTyped("rsa-1", "rsa-1", "JWT", claims(nil)), true},
		{"typ application/at+jwt", iss.SignTyped("rsa-1", "rsa-1", "application/AT+JWT", claims(nil)), true},
		{"untyped", iss.SignTyped("rsa-1", "rsa-1", "", claims(nil)), true},
		{"typ of a logout token", iss.SignTyped("rsa-1", "rsa-1", "logout+jwt", claims(nil)), false},
		{"typ of an ID-JAG", iss.SignTyped("rsa-1", "rsa-1", "oauth-id-jag+jwt", claims(nil)), false},
		{"not a JWT", "opaque-token-0123456789", false},
		{"too long", strings.Repeat("a", maxJWT+1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := v.Verify(ctx, tc.token, nil)
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if strings.Join(info.Scopes, " ") != "tools:read tools:call" || info.UserID != "user-1" || info.Expiration.IsZero() || info.Extra["iss"] != iss.URL {
					t.Errorf("info = %+v", info)
				}
				return
			}
			if !errors.Is(err, auth.ErrInvalidToken) {
				t.Fatalf("err = %v, want auth.ErrInvalidToken", err)
			}
			if err.Error() != auth.ErrInvalidToken.Error() {
				t.Errorf("the client is told %q: the reason goes to the log only", err)
			}
		})
	}
	out := logs.String()
	if strings.Contains(out, part[2]) || strings.Contains(out, part[1]) {
		t.Error("a token reached the log")
	}
	for _, reason := range []string{"issuer", "audience", "bad signature", "no exp", "expired"} {
		if !strings.Contains(out, reason) {
			t.Errorf("no refusal logged with %q:\n%s", reason, out)
		}
	}
	if n := iss.JWKSFetches(); n != 1 {
		t.Errorf("key set fetched %d times, want 1", n)
	}
}

func TestJWTVerifierScp(t *testing.T) {
	iss := oauthtest.NewIssuer(t)
	v, _, _ := newTestVerifier(t, iss, nil)
	for _, scp := range []any{[]string{"a", "b"}, "a b"} {
		c := iss.Claims(testAudience)
		c["scp"] = scp
		info, err := v.Verify(context.Background(), iss.Sign("ec-1", c), nil)
		if err != nil || strings.Join(info.Scopes, ",") != "a,b" {
			t.Errorf("scp %v: %v, %v", scp, info, err)
		}
	}
}

func TestJWTVerifierKeyRotation(t *testing.T) {
	leakCheck(t)
	iss := oauthtest.NewIssuer(t)
	v, _, clock := newTestVerifier(t, iss, func(c *JWTConfig) { c.RefreshInterval = time.Minute })
	ctx := context.Background()
	if _, err := v.Verify(ctx, iss.Sign("rsa-1", iss.Claims(testAudience)), nil); err != nil {
		t.Fatal(err)
	}

	// An unknown key, soon after the first fetch: not fetched again.
	iss.AddKey("unknown", jose.ES256, false)
	unknown := iss.Sign("unknown", iss.Claims(testAudience))
	if _, err := v.Verify(ctx, unknown, nil); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("unknown kid: %v", err)
	}
	if n := iss.JWKSFetches(); n != 1 {
		t.Fatalf("fetched %d times within the refresh interval, want 1", n)
	}
	// Later: fetched again, still unknown, refused; and not again at once.
	clock.add(2 * time.Minute)
	for range 3 {
		if _, err := v.Verify(ctx, unknown, nil); !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("unknown kid: %v", err)
		}
	}
	if n := iss.JWKSFetches(); n != 2 {
		t.Fatalf("fetched %d times, want 2 (one refetch for the unknown kid)", n)
	}

	// The issuer rotates to a new key: its tokens pass after one fetch.
	iss.Rotate("rsa-2")
	clock.add(2 * time.Minute)
	if _, err := v.Verify(ctx, iss.Sign("rsa-2", iss.Claims(testAudience)), nil); err != nil {
		t.Fatalf("token of the new key: %v", err)
	}
	if n := iss.JWKSFetches(); n != 3 {
		t.Fatalf("fetched %d times, want 3", n)
	}
	// The old key is gone from the key set.
	if _, err := v.Verify(ctx, iss.Sign("rsa-1", iss.Claims(testAudience)), nil); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("token of the retired key: %v", err)
	}

	// After MaxAge the key set is fetched again even for known keys.
	clock.add(DefaultJWKSMaxAge)
	late := iss.Claims(testAudience)
	late["exp"] = clock.now().Add(time.Hour).Unix()
	if _, err := v.Verify(ctx, iss.Sign("rsa-2", late), nil); err != nil {
		t.Fatal(err)
	}
	if n := iss.JWKSFetches(); n != 4 {
		t.Fatalf("fetched %d times, want 4", n)
	}
}

// Many requests with unknown keys at once make one fetch.
func TestJWTVerifierConcurrentRefetch(t *testing.T) {
	leakCheck(t)
	iss := oauthtest.NewIssuer(t)
	v, _, _ := newTestVerifier(t, iss, nil)
	iss.Rotate("rsa-2")
	tok := iss.Sign("rsa-2", iss.Claims(testAudience))
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if _, err := v.Verify(context.Background(), tok, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := iss.JWKSFetches(); n != 1 {
		t.Errorf("fetched %d times, want 1", n)
	}
}

func TestJWTVerifierJWKSUnavailable(t *testing.T) {
	leakCheck(t)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	iss := oauthtest.NewIssuer(t)
	v, logs, _ := newTestVerifier(t, iss, func(c *JWTConfig) { c.JWKSURL = down.URL })
	_, err := v.Verify(context.Background(), iss.Sign("rsa-1", iss.Claims(testAudience)), nil)
	if !errors.Is(err, ErrJWKSUnavailable) || errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("err = %v, want ErrJWKSUnavailable", err)
	}
	if !strings.Contains(logs.String(), "503") {
		t.Errorf("the fetch failure is not logged:\n%s", logs)
	}
}

func TestNewJWTVerifierErrors(t *testing.T) {
	for name, cfg := range map[string]JWTConfig{
		"no issuer":      {JWKSURL: "https://a.example.com/jwks", Audience: "x"},
		"no audience":    {JWKSURL: "https://a.example.com/jwks", Issuer: "x"},
		"plain http":     {JWKSURL: "http://a.example.com/jwks", Issuer: "x", Audience: "x"},
		"relative URL":   {JWKSURL: "/jwks", Issuer: "x", Audience: "x"},
		"HS256":          {JWKSURL: "https://a.example.com/jwks", Issuer: "x", Audience: "x", Algorithms: []string{"HS256"}},
		"none algorithm": {JWKSURL: "https://a.example.com/jwks", Issuer: "x", Audience: "x", Algorithms: []string{"none"}},
	} {
		if _, err := NewJWTVerifier(cfg); !errors.Is(err, toolkit.ErrBadParameter) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestProtectedResourceMetadataURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://gw.example.com/mcp":       "https://gw.example.com/.well-known/oauth-protected-resource/mcp",
		"https://gw.example.com/":          "https://gw.example.com/.well-known/oauth-protected-resource",
		"https://gw.example.com":           "https://gw.example.com/.well-known/oauth-protected-resource",
		"http://127.0.0.1:8080/a/mcp?x=1":  "http://127.0.0.1:8080/.well-known/oauth-protected-resource/a/mcp?x=1",
		"https://gw.example.com:8443/mcp/": "https://gw.example.com:8443/.well-known/oauth-protected-resource/mcp",
	} {
		if got, err := ProtectedResourceMetadataURL(in); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"/mcp", "mcp", "ftp://x/mcp", "https://x/mcp#f"} {
		if _, err := ProtectedResourceMetadataURL(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// An MCP server as an OAuth resource server: 401 with the metadata URL,
// 403 insufficient_scope, the metadata at both well-known paths, and a
// client with a good token served.
func TestServerProtectedResource(t *testing.T) {
	leakCheck(t)
	iss := oauthtest.NewIssuer(t)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(funcTool("hello", func(context.Context, json.RawMessage) (any, error) { return "hi", nil }))})
	ln, err := listenLoopback(t)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	v, _, _ := newTestVerifier(t, iss, func(c *JWTConfig) { c.Audience = base + "/mcp" })
	meta := &oauthex.ProtectedResourceMetadata{Resource: base + "/mcp", AuthorizationServers: []string{iss.URL}, ScopesSupported: []string{"mcp"}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- f.srv.ServeListener(ctx, ln,
			WithBearerAuth(v.Verify, &auth.RequireBearerTokenOptions{Scopes: []string{"mcp"}}),
			WithProtectedResource(meta))
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	prmURL := base + "/.well-known/oauth-protected-resource/mcp"

	post := func(token string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for _, tc := range []struct {
		name, token string
		code        int
		challenge   string
	}{
		{"no token", "", 401, `Bearer resource_metadata="` + prmURL + `", scope="mcp"`},
		{"bad token", "nope", 401, `Bearer resource_metadata="` + prmURL + `", scope="mcp", error="invalid_token"`},
		{"no scope", iss.Sign("rsa-1", iss.Claims(base+"/mcp", "other")), 403, `Bearer resource_metadata="` + prmURL + `", scope="mcp", error="insufficient_scope"`},
	} {
		resp := post(tc.token)
		if resp.StatusCode != tc.code || resp.Header.Get("WWW-Authenticate") != tc.challenge {
			t.Errorf("%s: %d %q, want %d %q", tc.name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tc.code, tc.challenge)
		}
	}

	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		var got oauthex.ProtectedResourceMetadata
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || got.Resource != base+"/mcp" || got.AuthorizationServers[0] != iss.URL || got.ScopesSupported[0] != "mcp" {
			t.Errorf("%s: %d %+v %v", p, resp.StatusCode, got, err)
		}
	}
	// The go-sdk client reads the metadata the same way.
	if got, err := oauthex.GetProtectedResourceMetadata(context.Background(), prmURL, base+"/mcp", http.DefaultClient); err != nil || got.AuthorizationServers[0] != iss.URL {
		t.Errorf("GetProtectedResourceMetadata: %+v, %v", got, err)
	}

	cs, err := connectHTTP(t, base+"/mcp", http.Header{"Authorization": {"Bearer " + iss.Sign("ec-1", iss.Claims(base+"/mcp", "mcp"))}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "hello"}); err != nil || resultText(t, res) != "hi" {
		t.Errorf("call: %v %v", res, err)
	}
	cs.Close()
}

// Without WithProtectedResource, a refusal still carries a challenge.
func TestServerBearerChallenge(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, nil)
	verifier := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return nil, auth.ErrInvalidToken
	}
	ts := f.serveHTTP(t, WithBearerAuth(verifier, nil))
	for token, want := range map[string]string{"": "Bearer", "x": `Bearer error="invalid_token"`} {
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(`{}`))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != want {
			t.Errorf("token %q: %d %q, want 401 %q", token, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
		}
	}
	rec := httptest.NewRecorder()
	f.srv.Handler(WithProtectedResource(&oauthex.ProtectedResourceMetadata{Resource: "/mcp"})).ServeHTTP(rec, httptest.NewRequest("GET", "/mcp", nil))
	if rec.Code != 500 {
		t.Errorf("relative resource: %d, want 500", rec.Code)
	}
}

// An MCP endpoint at a metadata path is refused, not a panic of the mux.
func TestServeListenerMetadataPathTaken(t *testing.T) {
	leakCheck(t)
	f := newFixture(t, nil)
	ln, err := listenLoopback(t)
	if err != nil {
		t.Fatal(err)
	}
	err = f.srv.ServeListener(context.Background(), ln, WithPath(ProtectedResourceMetadataPath),
		WithProtectedResource(&oauthex.ProtectedResourceMetadata{Resource: "https://x.example.com/mcp"}))
	if !errors.Is(err, toolkit.ErrBadParameter) {
		t.Fatalf("err = %v", err)
	}
}

// BenchmarkJWTVerifier measures the check of one access token, the key
// set cached.
func BenchmarkJWTVerifier(b *testing.B) {
	iss := oauthtest.NewIssuer(b)
	v, err := NewJWTVerifier(JWTConfig{JWKSURL: iss.JWKSURL(), Issuer: iss.URL, Audience: testAudience})
	if err != nil {
		b.Fatal(err)
	}
	for _, kid := range []string{"rsa-1", "ec-1"} {
		tok := iss.Sign(kid, iss.Claims(testAudience, "mcp"))
		b.Run(map[string]string{"rsa-1": "RS256", "ec-1": "ES256"}[kid], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Verify(context.Background(), tok, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

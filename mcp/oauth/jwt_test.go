package oauth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
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

	"github.com/llmkit/toolkit/internal/errs"
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

func (l *lockedBuffer) Reset() { l.mu.Lock(); defer l.mu.Unlock(); l.b.Reset() }

func newTestVerifier(t testing.TB, iss *oauthtest.Issuer, mod func(*JWTConfig)) (*JWTVerifier, *lockedBuffer, *testClock) {
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
		{"no sub", iss.Sign("rsa-1", claims(func(c map[string]any) { delete(c, "sub") })), false},
		{"empty sub", iss.Sign("rsa-1", claims(func(c map[string]any) { c["sub"] = "" })), false},
		{"typ a number", iss.SignHeader("rsa-1", "rsa-1", map[string]any{"typ": 5}, claims(nil)), false},
		{"typ an object", iss.SignHeader("rsa-1", "rsa-1", map[string]any{"typ": map[string]any{"t": "at+jwt"}}, claims(nil)), false},
		{"typ null", iss.SignHeader("rsa-1", "rsa-1", map[string]any{"typ": nil}, claims(nil)), false},
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
	for _, reason := range []string{"issuer", "audience", "bad signature", "no exp", "expired", "no sub", "not a string"} {
		if !strings.Contains(out, reason) {
			t.Errorf("no refusal logged with %q:\n%s", reason, out)
		}
	}
	if n := iss.JWKSFetches(); n != 1 {
		t.Errorf("key set fetched %d times, want 1", n)
	}
}

// FuzzJWTVerifier checks that no bearer token makes the verifier panic,
// fetch the key set more than the rate allows, or log the token, and that
// a token is accepted only with the header and claims the issuer signed:
// the signature segment may differ only by the base64 bits it ignores.
func FuzzJWTVerifier(f *testing.F) {
	iss := oauthtest.NewIssuer(f)
	iss.AddKey("other", jose.RS256, false)
	v, logs, _ := newTestVerifier(f, iss, nil)
	valid := map[string]bool{}
	sign := func(tok string, ok bool) {
		if ok {
			valid[tok[:strings.LastIndexByte(tok, '.')]] = true
		}
		f.Add(tok)
	}
	claims := iss.Claims(testAudience, "tools:read")
	sign(iss.Sign("rsa-1", claims), true)
	sign(iss.Sign("ec-1", claims), true)
	sign(iss.Forge("ec-1", "", claims), true)
	sign(iss.SignTyped("rsa-1", "rsa-1", "JWT", claims), true)
	sign(iss.SignTyped("rsa-1", "rsa-1", "logout+jwt", claims), false)
	sign(iss.Forge("other", "rsa-1", claims), false)
	noSub := iss.Claims(testAudience, "tools:read")
	delete(noSub, "sub")
	sign(iss.Sign("rsa-1", noSub), false)
	emptySub := iss.Claims(testAudience, "tools:read")
	emptySub["sub"] = ""
	sign(iss.Sign("ec-1", emptySub), false)
	sign(iss.SignHeader("rsa-1", "rsa-1", map[string]any{"typ": 5}, claims), false)
	sign(iss.SignHeader("ec-1", "ec-1", map[string]any{"typ": []string{"at+jwt"}}, claims), false)
	sign(iss.Sign("other", claims), false)
	expired := iss.Claims(testAudience)
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	sign(iss.Sign("rsa-1", expired), false)
	b64 := base64.RawURLEncoding.EncodeToString
	payload, _ := json.Marshal(claims)
	f.Add(b64([]byte(`{"alg":"none","kid":"rsa-1"}`)) + "." + b64(payload) + ".")
	f.Add(b64([]byte(`{"alg":"RS256","kid":"rsa-1","crit":["exp"]}`)) + "." + b64(payload) + ".AAAA")
	f.Add(b64([]byte(`{"alg":"ES256","kid":"`+strings.Repeat("k", 300)+`"}`)) + "." + b64([]byte(`{"aud":[1,2],"exp":"soon","scp":{"a":1}}`)) + ".AA")
	f.Add("a.b.c")
	f.Add("")
	f.Add("..")
	f.Add(`{"protected":"e30","payload":"e30","signature":"AA"}`)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, token string) {
		logs.Reset()
		info, err := v.Verify(ctx, token, nil)
		if err == nil {
			signed := token
			if i := strings.LastIndexByte(token, '.'); i >= 0 {
				signed = token[:i]
			}
			if !valid[signed] {
				t.Fatalf("accepted a token the issuer did not sign as it is: %q", token)
			}
			if info.UserID != "user-1" || strings.Join(info.Scopes, " ") != "tools:read" {
				t.Fatalf("accepted with info %+v", info)
			}
		} else if !errors.Is(err, auth.ErrInvalidToken) || err.Error() != auth.ErrInvalidToken.Error() {
			t.Fatalf("refused with %v, want exactly auth.ErrInvalidToken", err)
		}
		if n := iss.JWKSFetches(); n > 2 {
			t.Fatalf("the key set was fetched %d times, at most twice with the clock stopped", n)
		}
		out := logs.String()
		for _, seg := range strings.Split(token, ".") {
			if len(seg) >= 32 && strings.Contains(out, seg) {
				t.Fatalf("a part of the token reached the log: %q", seg)
			}
		}
	})
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
		if _, err := NewJWTVerifier(cfg); !errors.Is(err, errs.ErrBadParameter) {
			t.Errorf("%s: err = %v", name, err)
		}
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

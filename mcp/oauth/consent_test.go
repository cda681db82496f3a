package oauth

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/llmkit/toolkit/internal/testing/peers"
)

// TestOIDCOfflineAccess: against an OpenID provider that keeps the rule
// of OpenID Connect Core §11 (offline_access counts only with
// prompt=consent: panva's oidc-provider, OpenID certified, with its
// defaults), the authorization asks the person to consent, a refresh
// token is issued, and when the server refuses the access token it is
// refreshed without asking the person again, before and after a restart.
func TestOIDCOfflineAccess(t *testing.T) {
	leakCheck(t)
	op := peers.StartOIDCProvider(t)
	var mu sync.Mutex
	refused := map[string]bool{}
	rs := newResourceServerOf(t, tokenIssuer{
		url: op.Issuer, jwks: op.Issuer + "/jwks", scopes: []string{"mcp"},
		active: func(tok string) bool { mu.Lock(); defer mu.Unlock(); return !refused[tok] },
	})
	resource := rs.URL + "/mcp"
	person := op.Person("alice")
	const redirectURL = "http://127.0.0.1:9/callback"
	var asked atomic.Int32
	authorize := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		asked.Add(1)
		q, err := person.Authorize(ctx, args.URL, redirectURL)
		if err != nil {
			return nil, err
		}
		if e := q.Get("error"); e != "" {
			return nil, fmt.Errorf("the provider refused: %s", e)
		}
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
	store := NewFileTokenStore(filepath.Join(t.TempDir(), "tokens.json"))
	flow, err := AuthorizationCode(Config{Authorize: authorize, RedirectURL: redirectURL, Store: store})
	mustNotErr(t, err)
	allow, err := NewAllowList(op.Issuer)
	mustNotErr(t, err)
	start := func() *Handler {
		h := NewHandler(context.Background(), flow, HandlerConfig{Resource: resource, Allow: allow})
		t.Cleanup(h.Stop)
		return h
	}
	h := start()
	lc := &lifecycle{rs: rs}

	mustNotErr(t, lc.call(t, h))
	first, err := store.LoadToken(context.Background(), resource)
	mustNotErr(t, err)
	if first == nil || first.Token == nil || first.Token.AccessToken == "" {
		t.Fatalf("no token stored after the authorization: %v", first)
	}
	if first.Token.RefreshToken == "" {
		t.Fatalf("no refresh token issued (scopes asked %v, pages shown %v): the provider dropped offline_access", first.Scopes, person.Prompts())
	}
	if got := person.Prompts(); !slices.Equal(got, []string{"login", "consent"}) {
		t.Errorf("pages shown %v, want login then consent", got)
	}

	// The server refuses the access token: refreshed, nobody asked.
	mu.Lock()
	refused[first.Token.AccessToken] = true
	mu.Unlock()
	mustNotErr(t, lc.call(t, h))
	if n := asked.Load(); n != 1 {
		t.Errorf("the person was asked %d times, want once", n)
	}
	if rs.refused.Load() == 0 {
		t.Error("the server never refused the first access token")
	}
	second, err := store.LoadToken(context.Background(), resource)
	mustNotErr(t, err)
	if second == nil || second.Token == nil || second.Token.AccessToken == first.Token.AccessToken || second.Token.RefreshToken == "" {
		t.Fatalf("after the refresh the stored token is %v, want a new access token and a refresh token", second)
	}

	// A restart whose stored access token the server refuses: the stored
	// refresh token (the provider rotates them) renews it, nobody asked.
	mu.Lock()
	refused[second.Token.AccessToken] = true
	mu.Unlock()
	mustNotErr(t, lc.call(t, start()))
	if n := asked.Load(); n != 1 {
		t.Errorf("after a restart the person was asked %d times in all, want once", n)
	}
}

// TestOfflineConsentURL: consent is added to the prompt of an
// authorization URL that asks for offline_access, and nothing else of the
// URL changes.
func TestOfflineConsentURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://as.example/authorize?scope=mcp+offline_access&state=s1", "https://as.example/authorize?prompt=consent&scope=mcp+offline_access&state=s1"},
		{"https://as.example/authorize?scope=offline_access&prompt=login&state=s", "https://as.example/authorize?prompt=login+consent&scope=offline_access&state=s"},
		{"https://as.example/authorize?tenant=x&scope=offline_access", "https://as.example/authorize?prompt=consent&scope=offline_access&tenant=x"},
		{"https://as.example/authorize?scope=mcp&state=s", "https://as.example/authorize?scope=mcp&state=s"},
		{"https://as.example/authorize?scope=offline_accessx", "https://as.example/authorize?scope=offline_accessx"},
		{"https://as.example/authorize?scope=offline_access&prompt=consent", "https://as.example/authorize?scope=offline_access&prompt=consent"},
		{"https://as.example/authorize?scope=offline_access&prompt=none", "https://as.example/authorize?scope=offline_access&prompt=none"},
		{"https://as.example/authorize?scope=offline_access&x=%zz", "https://as.example/authorize?scope=offline_access&x=%zz"},
		{"%", "%"},
	} {
		if got := offlineConsentURL(tc.in); got != tc.want {
			t.Errorf("offlineConsentURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if askConsentForOffline(nil) != nil {
		t.Error("a nil fetcher was wrapped")
	}
}

// FuzzOfflineConsentURL: whatever the URL, the result keeps its state,
// and asks for consent when the URL asks for offline_access.
func FuzzOfflineConsentURL(f *testing.F) {
	for _, s := range []string{"https://as.example/a?scope=offline_access&state=s", "https://as.example/a?scope=a%20offline_access&prompt=none", "?scope=offline_access", "https://as.example/a?scope=offline_access&state=a;b", "%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := offlineConsentURL(in)
		if out == in {
			return
		}
		u, err := url.Parse(out)
		if err != nil {
			t.Fatalf("%q became %q, which does not parse: %v", in, out, err)
		}
		was, _ := url.Parse(in)
		if got, want := u.Query().Get("state"), was.Query().Get("state"); got != want {
			t.Fatalf("%q became %q: state %q, want %q", in, out, got, want)
		}
		if !slices.Contains(strings.Fields(u.Query().Get("prompt")), "consent") {
			t.Fatalf("%q became %q without consent", in, out)
		}
	})
}

package oauth

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/llmkit/toolkit/internal/errs"
)

// TestFileTokenStorePrincipals: the tokens of each principal are kept
// apart from each other's and from the program's own, under keys safe as
// file names; LoadToken never returns a principal's token, and a legacy
// token (keyed by resource) serves the program only.
func TestFileTokenStorePrincipals(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tokens.json")
	const res, iss = "https://one.example/mcp", "https://as.example"
	legacy := fmt.Sprintf(`{%q: {"resource": %q, "token_url": "https://as.example/token", "client_id": "c", "token": {"access_token": "legacy"}}}`, res, res)
	if err := os.WriteFile(path, []byte(legacy), 0o600); err != nil {
		t.Fatal(err)
	}
	s := NewFileTokenStore(path)
	var _ PrincipalTokenStore = s
	tok := func(principal, access string) *StoredToken {
		return &StoredToken{Resource: res, Issuer: iss, Principal: principal, TokenURL: iss + "/token", ClientID: "c", Token: &oauth2.Token{AccessToken: access}}
	}
	for _, p := range []string{"jwt:alice", "jwt:bob", "jwt:alice\x00https://as.example"} {
		mustNotErr(t, s.SaveToken(ctx, tok(p, "access-of-"+p)))
	}
	if got, _ := s.LoadToken(ctx, res); got == nil || got.Token.AccessToken != "legacy" || got.Principal != "" {
		t.Fatalf("LoadToken = %v, want the program's legacy token", got)
	}
	for _, p := range []string{"jwt:alice", "jwt:bob", "jwt:alice\x00https://as.example"} {
		got, err := s.LoadPrincipalToken(ctx, p, res)
		if err != nil || got == nil || got.Token.AccessToken != "access-of-"+p || got.Principal != p {
			t.Errorf("LoadPrincipalToken(%q) = %v, %v", p, got, err)
		}
	}
	if got, _ := s.LoadPrincipalToken(ctx, "jwt:carol", res); got != nil {
		t.Errorf("a principal without a token got %v", got)
	}
	if got, _ := s.LoadPrincipalToken(ctx, "jwt:alice", "https://two.example/mcp"); got != nil {
		t.Errorf("a token of another resource: %v", got)
	}
	keys := fileKeys(t, path)
	if len(keys) != 4 {
		t.Fatalf("keys %v, want the legacy one and three principals'", keys)
	}
	for _, k := range keys {
		if k != res && !strings.HasPrefix(k, principalKeyPrefix) {
			t.Errorf("key %q is neither the legacy one nor a principal's", k)
		}
	}
	// The program's own token replaces the legacy one, and leaves the
	// principals' alone.
	mustNotErr(t, s.SaveToken(ctx, tok("", "own")))
	if got, _ := s.LoadToken(ctx, res); got == nil || got.Token.AccessToken != "own" {
		t.Errorf("LoadToken after a save = %v", got)
	}
	if got, _ := s.LoadPrincipalToken(ctx, "jwt:bob", res); got == nil || got.Token.AccessToken != "access-of-jwt:bob" {
		t.Errorf("bob's token after the program saved its own: %v", got)
	}
	if got := tok("jwt:alice", "x").String(); !strings.Contains(got, "jwt:alice") || strings.Contains(got, "x)") {
		t.Errorf("String = %q", got)
	}
}

// memStore is a TokenStore that keeps no principals apart.
type memStore struct{}

func (memStore) LoadToken(context.Context, string) (*StoredToken, error) { return nil, nil }
func (memStore) SaveToken(context.Context, *StoredToken) error           { return nil }

// TestHandlerPrincipals: the handlers of two principals of one resource
// and store authorize apart (each its own URL, its own token, under its
// own principal); a restart finds each one's token; a store that keeps no
// principals apart is refused.
func TestHandlerPrincipals(t *testing.T) {
	lc := newLifecycle(t)
	handler := func(principal string) *Handler {
		flow, err := AuthorizationCode(lc.cfg)
		mustNotErr(t, err)
		allow, err := NewAllowList(lc.iss.URL)
		mustNotErr(t, err)
		h := NewHandler(context.Background(), flow, HandlerConfig{Resource: lc.rs.URL + "/mcp", Allow: allow, Principal: principal})
		t.Cleanup(h.Stop)
		return h
	}
	a, b := handler("jwt:alice"), handler("jwt:bob")
	if a.key == b.key {
		t.Fatal("two principals share a gate")
	}
	mustNotErr(t, lc.call(t, a))
	if a.Authorized() != true || b.Authorized() {
		t.Fatalf("after alice's call: alice %v, bob %v", a.Authorized(), b.Authorized())
	}
	mustNotErr(t, lc.call(t, b))
	if n := lc.b.urls.Load(); n != 2 {
		t.Errorf("%d authorization URLs, want one per principal", n)
	}
	ctx := context.Background()
	ta, _ := lc.store.LoadPrincipalToken(ctx, "jwt:alice", lc.rs.URL+"/mcp")
	tb, _ := lc.store.LoadPrincipalToken(ctx, "jwt:bob", lc.rs.URL+"/mcp")
	if ta == nil || tb == nil || ta.Token.AccessToken == tb.Token.AccessToken {
		t.Fatalf("stored tokens: alice %v, bob %v", ta, tb)
	}
	if own, _ := lc.store.LoadToken(ctx, lc.rs.URL+"/mcp"); own != nil {
		t.Errorf("a principal's token serves the program: %v", own)
	}
	// A restart: each principal's token is loaded, nobody is asked.
	a2, b2 := handler("jwt:alice"), handler("jwt:bob")
	if !a2.Authorized() || !b2.Authorized() {
		t.Fatal("a restart lost a principal's token")
	}
	mustNotErr(t, lc.call(t, a2))
	mustNotErr(t, lc.call(t, b2))
	if n := lc.b.urls.Load(); n != 2 {
		t.Errorf("%d authorization URLs after the restart, want still 2", n)
	}
	cfg := lc.cfg
	cfg.Store = memStore{}
	flow, err := AuthorizationCode(cfg)
	mustNotErr(t, err)
	h := NewHandler(ctx, flow, HandlerConfig{Resource: lc.rs.URL + "/mcp", Principal: "jwt:alice"})
	if err := lc.call(t, h); !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), "PrincipalTokenStore") {
		t.Errorf("a store without principals: %v", err)
	}
}

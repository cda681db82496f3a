package redisstate

import (
	"context"
	"testing"
	"time"

	"github.com/llmkit/toolkit/internal/testing/redistest"
	"github.com/llmkit/toolkit/mcp/oauth"
	"golang.org/x/oauth2"
)

func token(principal, resource, issuer, access string) *oauth.StoredToken {
	return &oauth.StoredToken{
		Principal: principal, Resource: resource, Issuer: issuer,
		TokenURL: issuer + "/token", ClientID: "client-1",
		Token: &oauth2.Token{AccessToken: access, Expiry: time.Now().Add(time.Hour)},
	}
}

func registration(issuer, redirect, clientID, secret string) *oauth.StoredRegistration {
	return &oauth.StoredRegistration{Issuer: issuer, RedirectURI: redirect, ClientID: clientID, ClientSecret: secret}
}

func access(t *oauth.StoredToken) string {
	if t == nil {
		return "<none>"
	}
	return t.Token.AccessToken
}

// TestTokensAcrossReplicas checks the contract of an
// oauth.PrincipalTokenStore across two stores on one Redis, as two
// replicas have: what one saves the other loads; a user's token never
// serves the program or another user; of two issuers the one saved last
// wins.
func TestTokensAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	a, _ := newStore(t, srv, Config{SealKeys: [][]byte{key16}}).Tokens()
	b, _ := newStore(t, srv, Config{SealKeys: [][]byte{key16}}).Tokens()
	ctx := context.Background()
	const res = "https://mcp.example/mcp"
	for _, tok := range []*oauth.StoredToken{
		token("", res, "https://as1.example", "own-1"),
		token("alice", res, "https://as1.example", "alice-1"),
		token("bob", res, "https://as1.example", "bob-1"),
	} {
		if err := a.SaveToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what, principal, want string) {
		t.Helper()
		got, err := b.LoadPrincipalToken(ctx, principal, res)
		if err != nil || access(got) != want {
			t.Errorf("%s: %s, %v; want %s", what, access(got), err, want)
		}
	}
	check("the program's own", "", "own-1")
	check("alice's", "alice", "alice-1")
	check("bob's", "bob", "bob-1")
	check("carol's", "carol", "<none>")
	if got, _ := b.LoadToken(ctx, res); access(got) != "own-1" {
		t.Errorf("LoadToken: %s, want the program's own", access(got))
	}
	// Another issuer, saved later on the other replica, wins.
	if err := b.SaveToken(ctx, token("alice", res, "https://as2.example", "alice-2")); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.LoadPrincipalToken(ctx, "alice", res); access(got) != "alice-2" || got.Issuer != "https://as2.example" {
		t.Errorf("after a save at another issuer: %s from %v", access(got), got)
	}
	if got, _ := a.LoadPrincipalToken(ctx, "alice", "https://other.example/mcp"); got != nil {
		t.Errorf("another resource: %s", access(got))
	}
	if err := a.SaveToken(ctx, &oauth.StoredToken{}); err == nil {
		t.Error("a token without a resource was saved")
	}
}

// TestTokenMovedToAnotherUser copies alice's sealed token under bob's
// key, as someone who can write to Redis could: it does not open there.
func TestTokenMovedToAnotherUser(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv, Config{SealKeys: [][]byte{key16}})
	tokens, _ := s.Tokens()
	ctx := context.Background()
	const res = "https://mcp.example/mcp"
	if err := tokens.SaveToken(ctx, token("alice", res, "https://as.example", "alice-1")); err != nil {
		t.Fatal(err)
	}
	rdb := newClient(t, srv)
	sealed, err := rdb.HGet(ctx, tokens.tokensKey("alice", res), "https://as.example").Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, tokens.tokensKey("bob", res), "https://as.example", sealed).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := tokens.LoadPrincipalToken(ctx, "bob", res); got != nil || err != nil {
		t.Errorf("bob got %s, %v from alice's sealed token", access(got), err)
	}
	if got, _ := tokens.LoadPrincipalToken(ctx, "alice", res); access(got) != "alice-1" {
		t.Errorf("alice's own: %s", access(got))
	}
	// Altered in place: absent, not an error.
	if err := rdb.HSet(ctx, tokens.tokensKey("alice", res), "https://as.example", sealed[:len(sealed)-1]+"x").Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := tokens.LoadPrincipalToken(ctx, "alice", res); got != nil || err != nil {
		t.Errorf("an altered record: %s, %v", access(got), err)
	}
}

// TestSealKeyRotation: a store with a new key first and the old one
// second reads what the old key sealed; once the old key is dropped,
// what only it sealed is gone, and what was saved again is kept.
func TestSealKeyRotation(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	const res = "https://mcp.example/mcp"
	old, _ := newStore(t, srv, Config{SealKeys: [][]byte{key16}}).Tokens()
	if err := old.SaveToken(ctx, token("alice", res, "https://as.example", "alice-1")); err != nil {
		t.Fatal(err)
	}
	if err := old.SaveToken(ctx, token("bob", res, "https://as.example", "bob-1")); err != nil {
		t.Fatal(err)
	}
	both, _ := newStore(t, srv, Config{SealKeys: [][]byte{key32, key16}}).Tokens()
	if got, _ := both.LoadPrincipalToken(ctx, "alice", res); access(got) != "alice-1" {
		t.Fatalf("the old key second: %s", access(got))
	}
	if err := both.SaveToken(ctx, token("alice", res, "https://as.example", "alice-2")); err != nil {
		t.Fatal(err)
	}
	newOnly, _ := newStore(t, srv, Config{SealKeys: [][]byte{key32}}).Tokens()
	if got, _ := newOnly.LoadPrincipalToken(ctx, "alice", res); access(got) != "alice-2" {
		t.Errorf("saved again under the new key: %s", access(got))
	}
	if got, err := newOnly.LoadPrincipalToken(ctx, "bob", res); got != nil || err != nil {
		t.Errorf("sealed only by a dropped key: %s, %v; want none", access(got), err)
	}
}

// TestRegistrations: one registration for the fleet; a delete of a
// refused client ID leaves a newer registration alone.
func TestRegistrations(t *testing.T) {
	srv := redistest.Start(t)
	a, _ := newStore(t, srv, Config{SealKeys: [][]byte{key16}}).Tokens()
	b, _ := newStore(t, srv, Config{SealKeys: [][]byte{key16}}).Tokens()
	ctx := context.Background()
	const as, cb = "https://as.example", "https://gw.example/oauth/callback"
	if r, err := b.LoadRegistration(ctx, as, cb); r != nil || err != nil {
		t.Fatalf("before any: %v, %v", r, err)
	}
	if err := a.SaveRegistration(ctx, registration(as, cb, "client-1", "s1")); err != nil {
		t.Fatal(err)
	}
	r, err := b.LoadRegistration(ctx, as, cb)
	if err != nil || r == nil || r.ClientID != "client-1" || r.ClientSecret != "s1" {
		t.Fatalf("the other replica: %v, %v", r, err)
	}
	if r, _ := b.LoadRegistration(ctx, as, "https://other/cb"); r != nil {
		t.Errorf("another redirect URI: %v", r)
	}
	// b registers anew (client-2) while a still thinks client-1 was refused.
	if err := b.SaveRegistration(ctx, registration(as, cb, "client-2", "s2")); err != nil {
		t.Fatal(err)
	}
	if err := a.DeleteRegistration(ctx, as, cb, "client-1"); err != nil {
		t.Fatal(err)
	}
	if r, _ := a.LoadRegistration(ctx, as, cb); r == nil || r.ClientID != "client-2" {
		t.Errorf("a delete of an old client ID removed %v", r)
	}
	if err := a.DeleteRegistration(ctx, as, cb, "client-2"); err != nil {
		t.Fatal(err)
	}
	if r, _ := b.LoadRegistration(ctx, as, cb); r != nil {
		t.Errorf("after its delete: %v", r)
	}
	if err := a.SaveRegistration(ctx, &oauth.StoredRegistration{Issuer: as}); err == nil {
		t.Error("a registration without a client ID was saved")
	}
}

// TestFileAndRedisAgree runs the same sequence against a FileTokenStore
// and a Redis TokenStore: the two answer alike.
func TestFileAndRedisAgree(t *testing.T) {
	srv := redistest.Start(t)
	r, _ := newStore(t, srv, Config{SealKeys: [][]byte{key16}}).Tokens()
	f := oauth.NewFileTokenStore(t.TempDir() + "/tokens.json")
	ctx := context.Background()
	const res = "https://mcp.example/mcp"
	steps := []*oauth.StoredToken{
		token("", res, "https://as1.example", "own-1"),
		token("u", res, "https://as1.example", "u-1"),
		token("", res, "https://as2.example", "own-2"),
		token("u", res, "https://as1.example", "u-2"),
	}
	for i, tok := range steps {
		for _, st := range []oauth.PrincipalTokenStore{f, r} {
			if err := st.SaveToken(ctx, tok); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range []string{"", "u", "v"} {
			fa, _ := f.LoadPrincipalToken(ctx, p, res)
			ra, _ := r.LoadPrincipalToken(ctx, p, res)
			if access(fa) != access(ra) {
				t.Errorf("after step %d, principal %q: file %s, redis %s", i, p, access(fa), access(ra))
			}
		}
	}
}

package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// fileKeys returns the keys of the token file at path.
func fileKeys(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

var safeKey = regexp.MustCompile(`^t-[0-9a-f]{32}$`)

// TestFileTokenStoreKeys: tokens are kept by issuer and resource, under
// keys safe as file names; one resource with tokens of two issuers keeps
// both, and LoadToken returns the one saved last.
func TestFileTokenStoreKeys(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tokens.json")
	s := NewFileTokenStore(path)
	tok := func(res, iss, access string) *StoredToken {
		return &StoredToken{Resource: res, Issuer: iss, TokenURL: iss + "/token", ClientID: "c", Token: &oauth2.Token{AccessToken: access}}
	}
	const r1, r2 = "https://one.example/mcp?tenant=a/b", "https://two.example/mcp"
	const i1, i2 = "https://as.example", "https://other-as.example/tenant"
	for _, st := range []*StoredToken{tok(r1, i1, "a1"), tok(r2, i1, "a2"), tok(r1, i2, "b1")} {
		mustNotErr(t, s.SaveToken(ctx, st))
	}
	keys := fileKeys(t, path)
	if len(keys) != 3 {
		t.Fatalf("file holds %d tokens, want 3: %v", len(keys), keys)
	}
	for _, k := range keys {
		if !safeKey.MatchString(k) {
			t.Errorf("key %q is not safe as a file name", k)
		}
	}
	load := func(res string) *StoredToken {
		t.Helper()
		st, err := s.LoadToken(ctx, res)
		if err != nil || st == nil {
			t.Fatalf("LoadToken(%s) = %v, %v", res, st, err)
		}
		return st
	}
	if got := load(r2); got.Token.AccessToken != "a2" || got.Issuer != i1 {
		t.Errorf("r2: %+v", got)
	}
	// r1 has tokens of both issuers: the one saved last.
	if got := load(r1); got.Token.AccessToken != "b1" || got.Issuer != i2 {
		t.Errorf("r1: %+v", got)
	}
	// Saving for the first issuer again replaces its token only.
	mustNotErr(t, s.SaveToken(ctx, tok(r1, i1, "a1-refreshed")))
	if got := load(r1); got.Token.AccessToken != "a1-refreshed" {
		t.Errorf("r1 after a save for i1: %+v", got)
	}
	if n := len(fileKeys(t, path)); n != 3 {
		t.Errorf("file holds %d tokens after a replacement, want 3", n)
	}
}

// TestFileTokenStoreMigration: a file of the earlier shape (keyed by
// resource) is read, and the first save for the resource replaces its
// token with one under the new key.
func TestFileTokenStoreMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tokens.json")
	const res = "https://old.example/mcp"
	legacy := fmt.Sprintf(`{%q: {"resource": %q, "token_url": "https://as.example/token", "client_id": "c", "token": {"access_token": "old-access", "refresh_token": "old-refresh"}},
		"https://other.example/mcp": {"resource": "https://other.example/mcp", "token_url": "https://as.example/token", "client_id": "c", "token": {"access_token": "other"}}}`, res, res)
	if err := os.WriteFile(path, []byte(legacy), 0o600); err != nil {
		t.Fatal(err)
	}
	s := NewFileTokenStore(path)
	st, err := s.LoadToken(ctx, res)
	if err != nil || st == nil || st.Token.RefreshToken != "old-refresh" || st.Resource != res || st.Issuer != "" {
		t.Fatalf("legacy LoadToken = %+v, %v", st, err)
	}
	st.Issuer = "https://as.example"
	st.Token = &oauth2.Token{AccessToken: "new-access"}
	mustNotErr(t, s.SaveToken(ctx, st))
	keys := fileKeys(t, path)
	var migrated, other bool
	for _, k := range keys {
		migrated = migrated || k == storeKey("https://as.example", res)
		other = other || k == "https://other.example/mcp"
		if k == res {
			t.Errorf("the legacy entry of %s is still there", res)
		}
	}
	if !migrated || !other || len(keys) != 2 {
		t.Errorf("keys after the migration: %v", keys)
	}
	if got, _ := s.LoadToken(ctx, res); got == nil || got.Token.AccessToken != "new-access" {
		t.Errorf("LoadToken after the migration = %+v", got)
	}
	if got, _ := s.LoadToken(ctx, "https://other.example/mcp"); got == nil || got.Token.AccessToken != "other" {
		t.Errorf("the other legacy token: %+v", got)
	}
}

func TestFileTokenStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "tokens.json")
	s := NewFileTokenStore(path)
	if st, err := s.LoadToken(ctx, "https://a.example/mcp"); st != nil || err != nil {
		t.Fatalf("LoadToken from no file = %v, %v", st, err)
	}
	a := &StoredToken{Resource: "https://a.example/mcp", TokenURL: "https://as.example/token", ClientID: "ca",
		Token: &oauth2.Token{AccessToken: "secret-a", RefreshToken: "secret-ra", Expiry: time.Now().Add(time.Hour).Round(time.Second)}}
	b := &StoredToken{Resource: "https://b.example/mcp", TokenURL: "https://as.example/token", ClientID: "cb",
		Token: &oauth2.Token{AccessToken: "secret-b"}}
	for _, st := range []*StoredToken{a, b} {
		if err := s.SaveToken(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v; want mode 0600", fi, err)
	}
	// Another store on the same file (a restart) reads both.
	s2 := NewFileTokenStore(path)
	got, err := s2.LoadToken(ctx, a.Resource)
	if err != nil || got.Token.AccessToken != "secret-a" || got.Token.RefreshToken != "secret-ra" || !got.Token.Expiry.Equal(a.Token.Expiry) || got.ClientID != "ca" {
		t.Fatalf("LoadToken(a) = %+v, %v", got, err)
	}
	if got, _ := s2.LoadToken(ctx, b.Resource); got == nil || got.ClientID != "cb" {
		t.Fatalf("LoadToken(b) = %v", got)
	}
	if strings.Contains(a.String(), "secret") || strings.Contains(a.LogValue().String(), "secret") {
		t.Fatalf("String/LogValue show a token: %s", a)
	}
	if err := s.SaveToken(ctx, &StoredToken{}); err == nil {
		t.Fatal("SaveToken without a resource succeeded")
	}
	// A broken file is reported without being quoted.
	if err := os.WriteFile(path, []byte(`{"secret-broken`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadToken(ctx, a.Resource); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("LoadToken from a broken file = %v", err)
	}
	if err := s.SaveToken(ctx, a); err == nil {
		t.Fatal("SaveToken over a broken file succeeded")
	}
	// No temporary file is left behind.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want the token file only", len(entries))
	}
}

// FuzzFileTokenStore checks that no content of the token file makes the
// store panic or quote the file in an error, that LoadToken returns only
// a token of the resource asked for, and that SaveToken either refuses the
// file without touching it or leaves a file (mode 0600) from which its
// token loads.
func FuzzFileTokenStore(f *testing.F) {
	const resource = "https://mcp.example/mcp"
	saved := func(m map[string]*StoredToken) []byte {
		b, err := json.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	tok := &StoredToken{Resource: resource, Issuer: "https://as.example", TokenURL: "https://as.example/token", ClientID: "c", Token: &oauth2.Token{AccessToken: "secret-a"}}
	f.Add(saved(map[string]*StoredToken{storeKey(tok.Issuer, tok.Resource): tok}))
	f.Add(saved(map[string]*StoredToken{resource: tok}))
	f.Add(saved(map[string]*StoredToken{"x": nil, "y": {Resource: resource}}))
	users := *tok
	users.Principal = "jwt:alice"
	f.Add(saved(map[string]*StoredToken{keyOf(&users): &users}))
	f.Add(saved(map[string]*StoredToken{storeKey(tok.Issuer, tok.Resource): &users, resource: &users}))
	f.Add([]byte(`{"u-0":{"resource":"https://mcp.example/mcp","principal":"jwt:bob","token":{"access_token":"secret-u"}}}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"a":{"token":null,"resource":"https://mcp.example/mcp"}}`))
	f.Add([]byte(`{"https://mcp.example/mcp":{"token":{"access_token":"secret-b"},"saved":"9999-01-01T00:00:00Z"}} trailing`))
	f.Add([]byte(`{"a":`))
	f.Add([]byte{})
	f.Add([]byte(`{"r-x":{"issuer":"https://as.example","client_id":"c"},"r-y":null,"r-z":[]}`))
	f.Add([]byte(`{"` + registrationKey("https://as.example", "http://127.0.0.1:9/cb") + `":{"issuer":"https://as.example","redirect_uri":"http://127.0.0.1:9/cb","client_id":"secret-c"}}`))
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "tokens.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		quoted := func(err error) bool {
			q := strings.TrimSpace(string(data))
			return len(q) >= 8 && strings.Contains(err.Error(), q)
		}
		s := NewFileTokenStore(path)
		got, err := s.LoadToken(ctx, resource)
		switch {
		case err != nil && quoted(err):
			t.Fatalf("LoadToken quotes the file: %v", err)
		case err == nil && got != nil && (got.Resource != resource || got.Token == nil || got.Principal != ""):
			t.Fatalf("LoadToken(%q) = %+v", resource, got)
		}
		if got, err := s.LoadPrincipalToken(ctx, "jwt:alice", resource); err == nil && got != nil && (got.Principal != "jwt:alice" || got.Resource != resource) {
			t.Fatalf("LoadPrincipalToken = %+v", got)
		}
		mine := *tok
		mine.Issuer = "https://fuzz.example"
		mine.Token = &oauth2.Token{AccessToken: "secret-mine"}
		if err := s.SaveToken(ctx, &mine); err != nil {
			if quoted(err) {
				t.Fatalf("SaveToken quotes the file: %v", err)
			}
			if after, rerr := os.ReadFile(path); rerr != nil || !bytes.Equal(after, data) {
				t.Fatalf("SaveToken failed (%v) and changed the file", err)
			}
			return
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("token file after SaveToken: %v, %v", fi, err)
		}
		m, err := s.read()
		if err != nil || m.tokens[storeKey(mine.Issuer, resource)] == nil || m.tokens[storeKey(mine.Issuer, resource)].Token.AccessToken != "secret-mine" {
			t.Fatalf("the saved token is not in the file: %v", err)
		}
		if got, err := s.LoadToken(ctx, resource); err != nil || got == nil || got.Resource != resource {
			t.Fatalf("LoadToken after SaveToken = %+v, %v", got, err)
		}
		reg := &StoredRegistration{Issuer: "https://as.example", RedirectURI: "http://127.0.0.1:9/cb", ClientID: "fuzz-client"}
		if err := s.SaveRegistration(ctx, reg); err != nil {
			t.Fatalf("SaveRegistration after SaveToken: %v", err)
		}
		if got, err := s.LoadRegistration(ctx, reg.Issuer, reg.RedirectURI); err != nil || got == nil || got.ClientID != "fuzz-client" {
			t.Fatalf("LoadRegistration after SaveRegistration = %+v, %v", got, err)
		}
		if got, err := s.LoadToken(ctx, resource); err != nil || got == nil || got.Token.AccessToken != "secret-mine" && got.Issuer == mine.Issuer {
			t.Fatalf("the token after SaveRegistration = %+v, %v", got, err)
		}
	})
}

// TestFileTokenStoreRegistrations: registrations are kept beside the
// tokens, by issuer and redirect URI, across stores on the same file;
// saving a token keeps them; deleting one needs its client ID.
func TestFileTokenStoreRegistrations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tokens.json")
	s := NewFileTokenStore(path)
	const iss, redirect = "https://as.example", "http://127.0.0.1:8765/callback"
	if r, err := s.LoadRegistration(ctx, iss, redirect); r != nil || err != nil {
		t.Fatalf("LoadRegistration from no file = %v, %v", r, err)
	}
	reg := &StoredRegistration{Issuer: iss, RedirectURI: redirect, ClientID: "c1", ClientSecret: "secret-c1",
		TokenEndpointAuthMethod: "client_secret_post", SecretExpiresAt: time.Now().Add(time.Hour).Round(time.Second).UTC()}
	mustNotErr(t, s.SaveRegistration(ctx, reg))
	mustNotErr(t, s.SaveToken(ctx, &StoredToken{Resource: "https://mcp.example/mcp", Issuer: iss, TokenURL: iss + "/token", ClientID: "c1", Token: &oauth2.Token{AccessToken: "secret-a"}}))
	s2 := NewFileTokenStore(path)
	got, err := s2.LoadRegistration(ctx, iss, redirect)
	if err != nil || got == nil || got.ClientID != "c1" || got.ClientSecret != "secret-c1" || got.TokenEndpointAuthMethod != "client_secret_post" || !got.SecretExpiresAt.Equal(reg.SecretExpiresAt) || got.Saved.IsZero() {
		t.Fatalf("LoadRegistration = %+v, %v", got, err)
	}
	if r, _ := s2.LoadRegistration(ctx, iss, "http://127.0.0.1:9/other"); r != nil {
		t.Errorf("a registration for another redirect URI: %v", r)
	}
	if tok, _ := s2.LoadToken(ctx, "https://mcp.example/mcp"); tok == nil || tok.Token.AccessToken != "secret-a" {
		t.Errorf("the token beside the registration: %v", tok)
	}
	if strings.Contains(got.String(), "secret") || strings.Contains(got.LogValue().String(), "secret") {
		t.Errorf("String/LogValue show the secret: %s", got)
	}
	mustNotErr(t, s2.DeleteRegistration(ctx, iss, redirect, "another-client"))
	if r, _ := s2.LoadRegistration(ctx, iss, redirect); r == nil {
		t.Fatal("deleting another client's registration deleted this one")
	}
	mustNotErr(t, s2.DeleteRegistration(ctx, iss, redirect, "c1"))
	if r, _ := s2.LoadRegistration(ctx, iss, redirect); r != nil {
		t.Fatalf("after DeleteRegistration: %v", r)
	}
	if err := s2.SaveRegistration(ctx, &StoredRegistration{Issuer: iss}); err == nil {
		t.Error("a registration without a client ID was saved")
	}
}

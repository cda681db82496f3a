package oauthtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// exchange posts a token exchange to as for client (secret empty: none)
// and returns the status and the answer.
func exchange(t *testing.T, as *Issuer, client, secret, subjectToken string) (int, map[string]any) {
	t.Helper()
	form := url.Values{
		"grant_type": {GrantTypeTokenExchange}, "subject_token": {subjectToken}, "subject_token_type": {TokenTypeAccessToken},
		"requested_token_type": {TokenTypeAccessToken}, "resource": {"https://mcp.example/mcp"}, "scope": {"read write"},
	}
	if secret == "" {
		form.Set("client_id", client)
	}
	req, err := http.NewRequest(http.MethodPost, as.URL+"/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if secret != "" {
		req.SetBasicAuth(client, secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, m
}

// TestExchange: the issuer exchanges its own tokens and those of an IdP
// it trusts for a token of the same subject bound to the resource, and
// refuses others, counting both.
func TestExchange(t *testing.T) {
	idp, as, stranger := NewIssuer(t), NewIssuer(t), NewIssuer(t)
	as.TrustIdP(idp)
	as.Register("gw", Client{Secret: "s3cret", Scopes: []string{"read"}})
	as.Register("public", Client{})
	claims := func(i *Issuer, sub string) map[string]any {
		c := i.Claims("gw")
		c["sub"] = sub
		return c
	}
	status, ans := exchange(t, as, "gw", "s3cret", idp.Sign("rsa-1", claims(idp, "alice")))
	if status != http.StatusOK || ans["issued_token_type"] != TokenTypeAccessToken || ans["token_type"] != "Bearer" || ans["scope"] != "read" {
		t.Fatalf("%d %v", status, ans)
	}
	tok, err := jwt.ParseSigned(ans["access_token"].(string), []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		jwt.Claims
		ClientID string         `json:"client_id"`
		Act      map[string]any `json:"act"`
	}
	if err := tok.Claims(as.keys["rsa-1"].key.Public(), &c); err != nil {
		t.Fatal(err)
	}
	if c.Subject != "alice" || c.Issuer != as.URL || !c.Audience.Contains("https://mcp.example/mcp") || c.ClientID != "gw" || c.Act["sub"] != "gw" || !as.Active(ans["access_token"].(string)) {
		t.Fatalf("claims %+v", c)
	}
	if status, _ := exchange(t, as, "public", "", as.Sign("rsa-1", claims(as, "bob"))); status != http.StatusOK {
		t.Fatalf("own token, public client: %d", status)
	}
	expired := claims(idp, "carol")
	expired["exp"] = time.Now().Add(-time.Minute).Unix()
	for name, tc := range map[string]struct{ client, secret, token, code string }{
		"untrusted IdP": {"gw", "s3cret", stranger.Sign("rsa-1", claims(stranger, "mallory")), "invalid_grant"},
		"expired":       {"gw", "s3cret", idp.Sign("rsa-1", expired), "invalid_grant"},
		"not a JWT":     {"gw", "s3cret", "opaque", "invalid_grant"},
		"bad secret":    {"gw", "wrong", idp.Sign("rsa-1", claims(idp, "alice")), "invalid_client"},
		"no secret":     {"gw", "", idp.Sign("rsa-1", claims(idp, "alice")), "invalid_client"},
	} {
		if status, ans := exchange(t, as, tc.client, tc.secret, tc.token); status < 400 || ans["error"] != tc.code {
			t.Errorf("%s: %d %v, want %s", name, status, ans, tc.code)
		}
	}
	if as.Exchanges() != 2 || as.ExchangesFor("alice") != 1 || as.ExchangesFor("bob") != 1 || as.ExchangesRefused() != 5 || len(as.ExchangeRequests()) != 7 {
		t.Fatalf("counters: %d exchanges (alice %d, bob %d), %d refused, %d requests", as.Exchanges(), as.ExchangesFor("alice"), as.ExchangesFor("bob"), as.ExchangesRefused(), len(as.ExchangeRequests()))
	}
	if r := as.ExchangeRequests()[1]; r.AuthMethod != "none" || r.ClientID != "public" || r.Subject != "bob" {
		t.Fatalf("request %+v", r)
	}
}

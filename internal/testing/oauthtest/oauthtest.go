// Package oauthtest is a small OAuth 2.1 authorization server for tests:
// it publishes a JSON Web Key Set of generated RSA and EC keys, its
// authorization server metadata (RFC 8414), and a token endpoint that
// issues JWT access tokens (RFC 9068) to registered clients with the
// client credentials grant. Tests also mint tokens of any shape with Sign.
package oauthtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer is the authorization server. Its URL is its issuer identifier;
// the key set is at JWKSURL.
type Issuer struct {
	*httptest.Server
	t testing.TB

	mu        sync.Mutex
	keys      map[string]signingKey // by kid, published or not
	published []string              // the kids in the key set
	signWith  string                // the kid the token endpoint signs with
	clients   map[string]Client     // by client ID
	n         int

	fetches atomic.Int32 // key set requests served
	tokens  atomic.Int32 // tokens issued by the token endpoint
}

// Client is a client registered for the client credentials grant.
type Client struct {
	Secret string
	// Audience is the aud of the tokens issued to the client.
	Audience string
	// Scopes are those granted when the client asks for none, and the
	// only ones granted when it asks.
	Scopes []string
}

type signingKey struct {
	alg jose.SignatureAlgorithm
	key crypto.Signer
}

// NewIssuer starts an issuer with one RS256 key (kid "rsa-1") and one
// ES256 key (kid "ec-1") published, the first used by the token endpoint.
func NewIssuer(t testing.TB) *Issuer {
	t.Helper()
	i := &Issuer{t: t, keys: map[string]signingKey{}, clients: map[string]Client{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jwks", i.serveJWKS)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", i.serveMetadata)
	mux.HandleFunc("POST /token", i.serveToken)
	i.Server = httptest.NewServer(mux)
	t.Cleanup(i.Close)
	i.AddKey("rsa-1", jose.RS256, true)
	i.AddKey("ec-1", jose.ES256, true)
	i.signWith = "rsa-1"
	return i
}

// JWKSURL is the URL of the key set.
func (i *Issuer) JWKSURL() string { return i.URL + "/jwks" }

// JWKSFetches returns how many times the key set was fetched.
func (i *Issuer) JWKSFetches() int { return int(i.fetches.Load()) }

// TokensIssued returns how many tokens the token endpoint issued.
func (i *Issuer) TokensIssued() int { return int(i.tokens.Load()) }

// AddKey generates a key for alg (RS256, PS256 or ES256) under kid, and
// publishes it in the key set when publish is true.
func (i *Issuer) AddKey(kid string, alg jose.SignatureAlgorithm, publish bool) {
	i.t.Helper()
	var (
		k   crypto.Signer
		err error
	)
	switch alg {
	case jose.RS256, jose.PS256:
		k, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		i.t.Fatalf("oauthtest: no key for %s", alg)
	}
	if err != nil {
		i.t.Fatal(err)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.keys[kid] = signingKey{alg: alg, key: k}
	if publish {
		i.published = append(i.published, kid)
	}
}

// Rotate publishes only the key kid (adding a new RS256 one when it does
// not exist) and makes the token endpoint sign with it.
func (i *Issuer) Rotate(kid string) {
	i.mu.Lock()
	_, ok := i.keys[kid]
	i.mu.Unlock()
	if !ok {
		i.AddKey(kid, jose.RS256, false)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.published, i.signWith = []string{kid}, kid
}

// Register registers a client for the client credentials grant.
func (i *Issuer) Register(id string, c Client) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.clients[id] = c
}

// Claims returns the claims of a valid token for audience with scopes:
// this issuer, subject "user-1", issued now, expiring in an hour.
func (i *Issuer) Claims(audience string, scopes ...string) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss": i.URL, "sub": "user-1", "aud": audience,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
	if len(scopes) > 0 {
		c["scope"] = strings.Join(scopes, " ")
	}
	return c
}

// Sign returns claims as a JWT signed with the key kid, with kid in its
// header.
func (i *Issuer) Sign(kid string, claims map[string]any) string {
	i.t.Helper()
	return i.Forge(kid, kid, claims)
}

// Forge returns claims as a JWT signed with the key key but naming kid in
// its header.
func (i *Issuer) Forge(key, kid string, claims map[string]any) string {
	i.t.Helper()
	tok, err := i.sign(key, kid, claims)
	if err != nil {
		i.t.Fatal(err)
	}
	return tok
}

func (i *Issuer) sign(key, kid string, claims map[string]any) (string, error) {
	i.mu.Lock()
	k, ok := i.keys[key]
	i.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("oauthtest: no key %q", key)
	}
	opts := (&jose.SignerOptions{}).WithType("at+jwt").WithHeader(jose.HeaderKey("kid"), kid)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: k.key}, opts)
	if err != nil {
		return "", err
	}
	return jwt.Signed(signer).Claims(claims).Serialize()
}

func (i *Issuer) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	i.fetches.Add(1)
	i.mu.Lock()
	var set jose.JSONWebKeySet
	for _, kid := range i.published {
		k := i.keys[kid]
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.key.Public(), KeyID: kid, Algorithm: string(k.alg), Use: "sig"})
	}
	i.mu.Unlock()
	writeJSON(w, http.StatusOK, set)
}

func (i *Issuer) serveMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                i.URL,
		"token_endpoint":                        i.URL + "/token",
		"jwks_uri":                              i.JWKSURL(),
		"grant_types_supported":                 []string{"client_credentials"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
		"response_types_supported":              []string{"code"},
		"code_challenge_methods_supported":      []string{"S256"},
	})
}

func (i *Issuer) serveToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Form.Get("grant_type") != "client_credentials" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "unsupported_grant_type"})
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.Form.Get("client_id"), r.Form.Get("client_secret")
	}
	i.mu.Lock()
	c, known := i.clients[id]
	kid := i.signWith
	i.n++
	n := i.n
	i.mu.Unlock()
	if !known || c.Secret == "" || secret != c.Secret {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "invalid_client"})
		return
	}
	scopes := c.Scopes
	if asked := strings.Fields(r.Form.Get("scope")); len(asked) > 0 {
		scopes = nil
		for _, s := range asked {
			for _, g := range c.Scopes {
				if s == g {
					scopes = append(scopes, s)
				}
			}
		}
	}
	claims := i.Claims(c.Audience, scopes...)
	claims["sub"], claims["client_id"], claims["jti"] = id, id, fmt.Sprintf("t-%d", n)
	tok, err := i.sign(kid, kid, claims)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": "server_error"})
		return
	}
	i.tokens.Add(1)
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok, "token_type": "Bearer", "expires_in": 3600, "scope": strings.Join(scopes, " "),
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

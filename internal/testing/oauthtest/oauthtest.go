// Package oauthtest is a small OAuth 2.1 authorization server for tests:
// it publishes a JSON Web Key Set of generated RSA and EC keys, its
// authorization server metadata (RFC 8414), and a token endpoint that
// issues JWT access tokens (RFC 9068) with the client credentials grant to
// registered clients, and with the authorization code grant (PKCE, a
// consent given at once, refresh tokens) to the clients it registered
// dynamically (RFC 7591, with the token endpoint authentication method
// they ask for: none, client_secret_post or client_secret_basic). Tests
// also mint tokens of any shape with Sign, and make the server act as
// real ones do: short-lived tokens, no refresh tokens, revocation
// (Revoke, Active), a rate limit on registration (RefuseRegistrations) and
// a restart that forgets its clients (ForgetClients). Its token endpoint
// also speaks token exchange (RFC 8693): a subject token it issued, or
// one of an identity provider it trusts (TrustIdP), is exchanged for an
// access token of the same subject for the resource asked for, with
// counters (Exchanges, ExchangesFor, ExchangesRefused) and the requests
// kept (ExchangeRequests).
package oauthtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
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
	dynamic   map[string]dynamic    // clients registered dynamically, by ID
	codes     map[string]grant      // authorization codes not yet exchanged
	refresh   map[string]grant      // refresh tokens
	revoked   map[string]bool       // the jti of access tokens revoked
	issued    map[string]bool       // the jti of access tokens issued
	n         int

	lifetime  time.Duration // of the access tokens issued
	noRefresh bool          // the code grant issues no refresh token
	refuseReg int           // registrations still to refuse
	refuseAs  int           // with this status
	refuseFor string        // and this Retry-After

	fetches       atomic.Int32 // key set requests served
	tokens        atomic.Int32 // tokens issued by the token endpoint
	authorized    atomic.Int32 // authorization codes issued
	registrations atomic.Int32 // clients registered dynamically
	refreshed     atomic.Int32 // tokens issued for a refresh token

	trusted   []*Issuer         // identity providers whose subject tokens it exchanges
	exchanges []ExchangeRequest // token exchange requests received
	exchanged map[string]int    // access tokens issued by exchange, by subject
	exRefused atomic.Int32      // token exchanges refused
}

// ExchangeRequest is what a token exchange request asked for, without
// the subject token and the client's secret.
type ExchangeRequest struct {
	// ClientID is the client that authenticated, AuthMethod how:
	// client_secret_basic, client_secret_post or none.
	ClientID, AuthMethod string
	// SubjectTokenType, RequestedTokenType, Resource, Audience and Scope
	// are the request's parameters.
	SubjectTokenType, RequestedTokenType, Resource, Audience, Scope string
	// Subject is the sub of the subject token, when it was accepted.
	Subject string
}

// dynamic is a client registered dynamically.
type dynamic struct {
	method, secret string
	redirects      []string
}

// grant is what an authorization code or refresh token stands for.
type grant struct {
	clientID, redirect, challenge, resource string
	scopes                                  []string
	subject                                 string // the person who consented
}

// UserHeader is the request header that names the person who consents at
// the authorization endpoint (the sub of the tokens the code gives);
// without it the person is "user-1".
const UserHeader = "Oauthtest-User"

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
	i := &Issuer{t: t, keys: map[string]signingKey{}, clients: map[string]Client{}, dynamic: map[string]dynamic{},
		codes: map[string]grant{}, refresh: map[string]grant{}, revoked: map[string]bool{}, issued: map[string]bool{}, lifetime: time.Hour,
		exchanged: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jwks", i.serveJWKS)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", i.serveMetadata)
	mux.HandleFunc("POST /token", i.serveToken)
	mux.HandleFunc("POST /register", i.serveRegister)
	mux.HandleFunc("GET /authorize", i.serveAuthorize)
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

// Authorizations returns how many authorization codes were issued: how
// many times a person was asked.
func (i *Issuer) Authorizations() int { return int(i.authorized.Load()) }

// Registrations returns how many clients registered dynamically.
func (i *Issuer) Registrations() int { return int(i.registrations.Load()) }

// Refreshes returns how many tokens the token endpoint issued for a
// refresh token.
func (i *Issuer) Refreshes() int { return int(i.refreshed.Load()) }

// SetTokenLifetime sets the lifetime of the access tokens issued from now
// on (an hour at first); their expires_in says it.
func (i *Issuer) SetTokenLifetime(d time.Duration) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.lifetime = d
}

// SetRefreshTokens sets whether the authorization code grant issues
// refresh tokens from now on (it does at first).
func (i *Issuer) SetRefreshTokens(on bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.noRefresh = !on
}

// RefuseRegistrations makes the next n registration requests fail with
// status (429 Too Many Requests, say) and, when retryAfter is not empty,
// that Retry-After header, as a rate limit would; the body is a JSON
// error over several lines, as some servers write them.
func (i *Issuer) RefuseRegistrations(n, status int, retryAfter string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.refuseReg, i.refuseAs, i.refuseFor = n, status, retryAfter
}

// ForgetClients forgets the clients registered dynamically, and what was
// granted to them, as a server that keeps them in memory does when it
// restarts: they get invalid_client from then on.
func (i *Issuer) ForgetClients() {
	i.mu.Lock()
	defer i.mu.Unlock()
	clear(i.dynamic)
	clear(i.codes)
	clear(i.refresh)
}

// Revoke revokes every access and refresh token issued so far.
func (i *Issuer) Revoke() {
	i.RevokeAccessTokens()
	i.mu.Lock()
	defer i.mu.Unlock()
	clear(i.refresh)
}

// RevokeAccessTokens revokes every access token issued so far; refresh
// tokens stay good.
func (i *Issuer) RevokeAccessTokens() {
	i.mu.Lock()
	defer i.mu.Unlock()
	for k := range i.issued {
		i.revoked[k] = true
	}
}

// Active reports whether the access token tok is one this server issued
// and did not revoke (its signature and expiry are the resource server's
// to check): what token introspection would say.
func (i *Issuer) Active(tok string) bool {
	t, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256, jose.PS256, jose.ES256})
	if err != nil {
		return false
	}
	var c jwt.Claims
	if err := t.UnsafeClaimsWithoutVerification(&c); err != nil || c.ID == "" {
		return false
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.issued[c.ID] && !i.revoked[c.ID]
}

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
	return i.SignTyped(key, kid, "at+jwt", claims)
}

// SignTyped is Forge with the typ header typ (none when empty).
func (i *Issuer) SignTyped(key, kid, typ string, claims map[string]any) string {
	i.t.Helper()
	tok, err := i.sign(key, kid, typ, claims)
	if err != nil {
		i.t.Fatal(err)
	}
	return tok
}

// SignHeader returns claims as a JWT signed with the key named key, with
// kid and the extra header parameters of header (of any JSON type: a
// "typ" that is a number, say).
func (i *Issuer) SignHeader(key, kid string, header map[string]any, claims map[string]any) string {
	i.t.Helper()
	i.mu.Lock()
	k, ok := i.keys[key]
	i.mu.Unlock()
	if !ok {
		i.t.Fatalf("oauthtest: no key %q", key)
	}
	opts := (&jose.SignerOptions{}).WithHeader(jose.HeaderKey("kid"), kid)
	for name, v := range header {
		opts = opts.WithHeader(jose.HeaderKey(name), v)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: k.key}, opts)
	if err != nil {
		i.t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		i.t.Fatal(err)
	}
	return tok
}

func (i *Issuer) sign(key, kid, typ string, claims map[string]any) (string, error) {
	i.mu.Lock()
	k, ok := i.keys[key]
	i.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("oauthtest: no key %q", key)
	}
	opts := (&jose.SignerOptions{}).WithHeader(jose.HeaderKey("kid"), kid)
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
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
		"issuer":                                         i.URL,
		"token_endpoint":                                 i.URL + "/token",
		"authorization_endpoint":                         i.URL + "/authorize",
		"registration_endpoint":                          i.URL + "/register",
		"jwks_uri":                                       i.JWKSURL(),
		"grant_types_supported":                          []string{"client_credentials", "authorization_code", "refresh_token", GrantTypeTokenExchange, GrantTypeJWTBearer},
		"token_endpoint_auth_methods_supported":          []string{"client_secret_basic", "client_secret_post", "none"},
		"response_types_supported":                       []string{"code"},
		"code_challenge_methods_supported":               []string{"S256"},
		"authorization_response_iss_parameter_supported": true,
	})
}

// serveRegister registers a client with the token endpoint
// authentication method it asks for (client_secret_basic, RFC 7591's
// default, when it names none): a public client for none, a client with a
// secret otherwise. Unless told to refuse (RefuseRegistrations).
func (i *Issuer) serveRegister(w http.ResponseWriter, r *http.Request) {
	i.mu.Lock()
	if i.refuseReg > 0 {
		i.refuseReg--
		status, retryAfter := i.refuseAs, i.refuseFor
		i.mu.Unlock()
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "{\n  \"error\": \"too_many_requests\",\n  \"error_description\": \"You have exceeded the rate limit\\nfor client registration requests\",\n  \"request\": \"secret-echo of what was sent\"\n}\n")
		return
	}
	i.mu.Unlock()
	var meta struct {
		RedirectURIs []string `json:"redirect_uris"`
		Method       string   `json:"token_endpoint_auth_method"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_client_metadata"})
		return
	}
	if meta.Method == "" {
		meta.Method = "client_secret_basic"
	}
	if meta.Method != "none" && meta.Method != "client_secret_post" && meta.Method != "client_secret_basic" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_client_metadata", "error_description": "unsupported token_endpoint_auth_method"})
		return
	}
	i.mu.Lock()
	i.n++
	id := fmt.Sprintf("dynamic-%d", i.n)
	d := dynamic{method: meta.Method, redirects: meta.RedirectURIs}
	if meta.Method != "none" {
		d.secret = fmt.Sprintf("secret-client-%d", i.n)
	}
	i.dynamic[id] = d
	i.mu.Unlock()
	i.registrations.Add(1)
	answer := map[string]any{"client_id": id, "redirect_uris": meta.RedirectURIs, "token_endpoint_auth_method": meta.Method}
	if d.secret != "" {
		answer["client_secret"] = d.secret
	}
	writeJSON(w, http.StatusCreated, answer)
}

// serveAuthorize is the person's consent, given at once: a redirect to
// redirect_uri with a code.
func (i *Issuer) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	i.mu.Lock()
	client, known := i.dynamic[q.Get("client_id")]
	i.mu.Unlock()
	if !known {
		// Never redirected: the redirect URI is not known to be the
		// client's (RFC 6749 §4.1.2.1).
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_client", "error_description": "unknown client_id"})
		return
	}
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || redirect.Host == "" || !slices.Contains(client.redirects, q.Get("redirect_uri")) || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	i.mu.Lock()
	i.n++
	code := fmt.Sprintf("code-%d", i.n)
	i.codes[code] = grant{clientID: q.Get("client_id"), redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), resource: q.Get("resource"), scopes: strings.Fields(q.Get("scope")), subject: r.Header.Get(UserHeader)}
	i.mu.Unlock()
	i.authorized.Add(1)
	back := redirect.Query()
	back.Set("code", code)
	back.Set("state", q.Get("state"))
	back.Set("iss", i.URL)
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (i *Issuer) serveToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
		return
	}
	switch r.Form.Get("grant_type") {
	case "client_credentials":
	case "authorization_code", "refresh_token":
		i.serveCodeToken(w, r)
		return
	case GrantTypeTokenExchange:
		i.serveExchange(w, r)
		return
	case GrantTypeJWTBearer:
		i.serveJAG(w, r)
		return
	default:
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
	i.issue(w, kid, claims, map[string]any{"scope": strings.Join(scopes, " ")})
}

// issue answers a token request with an access token of claims signed
// with key kid, and the fields of answer.
func (i *Issuer) issue(w http.ResponseWriter, kid string, claims, answer map[string]any) {
	tok, err := i.sign(kid, kid, "at+jwt", claims)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": "server_error"})
		return
	}
	i.tokens.Add(1)
	i.mu.Lock()
	lifetime := i.lifetime
	if jti, _ := claims["jti"].(string); jti != "" {
		i.issued[jti] = true
	}
	i.mu.Unlock()
	answer["access_token"], answer["token_type"], answer["expires_in"] = tok, "Bearer", int(lifetime/time.Second)
	writeJSON(w, http.StatusOK, answer)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// serveCodeToken exchanges an authorization code (checking PKCE and the
// redirect) or a refresh token for a token whose audience is the resource
// asked for, to the client that authenticates as it registered.
func (i *Issuer) serveCodeToken(w http.ResponseWriter, r *http.Request) {
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.Form.Get("client_id"), r.Form.Get("client_secret")
	}
	i.mu.Lock()
	client, known := i.dynamic[id]
	i.mu.Unlock()
	switch {
	case !known:
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "invalid_client", "error_description": "unknown client"})
		return
	case client.method == "client_secret_basic" && (!basic || secret != client.secret),
		client.method == "client_secret_post" && (basic || secret != client.secret),
		client.method == "none" && secret != "":
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "invalid_client", "error_description": "client authentication failed (" + client.method + ")"})
		return
	}
	i.mu.Lock()
	var (
		g  grant
		ok bool
	)
	refreshing := r.Form.Get("grant_type") == "refresh_token"
	if !refreshing {
		code := r.Form.Get("code")
		g, ok = i.codes[code]
		delete(i.codes, code)
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		ok = ok && base64.RawURLEncoding.EncodeToString(sum[:]) == g.challenge && r.Form.Get("redirect_uri") == g.redirect
	} else {
		g, ok = i.refresh[r.Form.Get("refresh_token")]
		delete(i.refresh, r.Form.Get("refresh_token")) // rotated
	}
	ok = ok && g.clientID == id
	i.n++
	n := i.n
	answer := map[string]any{"scope": strings.Join(g.scopes, " ")}
	if ok && !i.noRefresh {
		ref := fmt.Sprintf("refresh-%d", n)
		i.refresh[ref] = g
		answer["refresh_token"] = ref
	}
	jti := fmt.Sprintf("t-%d", n)
	kid := i.signWith
	i.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
		return
	}
	if refreshing {
		i.refreshed.Add(1)
	}
	claims := i.Claims(g.resource, g.scopes...)
	i.mu.Lock()
	claims["exp"] = time.Now().Add(i.lifetime).Unix()
	i.mu.Unlock()
	claims["client_id"], claims["jti"] = g.clientID, jti
	if g.subject != "" {
		claims["sub"] = g.subject
	}
	i.issue(w, kid, claims, answer)
}

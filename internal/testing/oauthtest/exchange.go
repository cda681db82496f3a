package oauthtest

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Token exchange (RFC 8693) names.
const (
	// GrantTypeTokenExchange is the grant type of token exchange.
	GrantTypeTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	// TokenTypeAccessToken is the token type of an access token.
	TokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"
	// TokenTypeJWT is the token type of a JWT.
	TokenTypeJWT = "urn:ietf:params:oauth:token-type:jwt"
	// TokenTypeIDToken is the token type of an OpenID Connect ID token.
	TokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"
	// TokenTypeIDJAG is the token type of an identity assertion grant
	// (SEP-990, "cross-app access").
	TokenTypeIDJAG = "urn:ietf:params:oauth:token-type:id-jag"
	// GrantTypeJWTBearer is the grant type of RFC 7523 §2.1, with which an
	// ID-JAG is redeemed.
	GrantTypeJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
)

// TrustIdP makes the issuer exchange the subject tokens idp signs (with
// a key of its own, published or not, and its URL as iss), beside its
// own.
func (i *Issuer) TrustIdP(idp *Issuer) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.trusted = append(i.trusted, idp)
}

// Exchanges returns how many access tokens token exchange issued.
func (i *Issuer) Exchanges() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	n := 0
	for _, c := range i.exchanged {
		n += c
	}
	return n
}

// ExchangesFor returns how many access tokens token exchange issued for
// the subject sub.
func (i *Issuer) ExchangesFor(sub string) int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.exchanged[sub]
}

// ExchangesRefused returns how many token exchange requests were
// refused.
func (i *Issuer) ExchangesRefused() int { return int(i.exRefused.Load()) }

// ExchangeRequests returns the token exchange requests received so far.
func (i *Issuer) ExchangeRequests() []ExchangeRequest {
	i.mu.Lock()
	defer i.mu.Unlock()
	return slices.Clone(i.exchanges)
}

// serveExchange answers a token exchange request: a client registered
// with Register authenticates with its secret (Basic or in the form), or
// with its client_id alone when it has none; the subject token must be a
// JWT this issuer or an identity provider it trusts signed, not expired
// (nor revoked, for its own); requested_token_type, when given, must be
// an access token; resource is required. The access token issued has the
// subject's sub, the resource as aud, the client as client_id and act
// (RFC 8693 §4.1), and the scopes asked for that the client may have.
func (i *Issuer) serveExchange(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	req := ExchangeRequest{
		SubjectTokenType: f.Get("subject_token_type"), RequestedTokenType: f.Get("requested_token_type"),
		Resource: f.Get("resource"), Audience: f.Get("audience"), Scope: f.Get("scope"),
	}
	id, secret, basic := r.BasicAuth()
	req.AuthMethod = "client_secret_basic"
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = f.Get("client_id"), f.Get("client_secret")
		req.AuthMethod = "client_secret_post"
		if _, sent := f["client_secret"]; !sent {
			req.AuthMethod = "none"
		}
	}
	req.ClientID = id
	refuse := func(status int, code, description string) {
		i.exRefused.Add(1)
		i.mu.Lock()
		i.exchanges = append(i.exchanges, req)
		i.mu.Unlock()
		writeJSON(w, status, map[string]any{"error": code, "error_description": description})
	}
	i.mu.Lock()
	c, known := i.clients[id]
	i.mu.Unlock()
	switch {
	case !known:
		refuse(http.StatusUnauthorized, "invalid_client", "unknown client")
		return
	case c.Secret == "" && (basic || secret != ""), c.Secret != "" && secret != c.Secret:
		refuse(http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	switch req.SubjectTokenType {
	case TokenTypeAccessToken, TokenTypeJWT, TokenTypeIDToken:
	default:
		refuse(http.StatusBadRequest, "invalid_request", "unsupported subject_token_type")
		return
	}
	if req.RequestedTokenType != "" && req.RequestedTokenType != TokenTypeAccessToken && req.RequestedTokenType != TokenTypeIDJAG {
		refuse(http.StatusBadRequest, "invalid_request", "unsupported requested_token_type")
		return
	}
	if u, err := url.Parse(req.Resource); err != nil || !u.IsAbs() {
		refuse(http.StatusBadRequest, "invalid_target", "resource is required")
		return
	}
	sub, err := i.subjectOf(f.Get("subject_token"))
	if err != nil {
		refuse(http.StatusBadRequest, "invalid_grant", "the subject token is not accepted: "+err.Error())
		return
	}
	req.Subject = sub
	var scopes []string
	for _, s := range strings.Fields(req.Scope) {
		if len(c.Scopes) == 0 || slices.Contains(c.Scopes, s) {
			scopes = append(scopes, s)
		}
	}
	i.mu.Lock()
	i.exchanges = append(i.exchanges, req)
	i.exchanged[sub]++
	i.n++
	jti := fmt.Sprintf("x-%d", i.n)
	kid, lifetime := i.signWith, i.lifetime
	i.mu.Unlock()
	if req.RequestedTokenType == TokenTypeIDJAG {
		// An identity assertion grant for the authorization server named
		// by audience (SEP-990), redeemed there with GrantTypeJWTBearer.
		claims := map[string]any{"iss": i.URL, "sub": sub, "aud": req.Audience, "resource": req.Resource, "client_id": id,
			"jti": jti, "iat": time.Now().Unix(), "exp": time.Now().Add(5 * time.Minute).Unix(), "scope": strings.Join(scopes, " ")}
		jag, err := i.sign(kid, kid, "oauth-id-jag+jwt", claims)
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]any{"error": "server_error"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"access_token": jag, "issued_token_type": TokenTypeIDJAG, "token_type": "N_A", "expires_in": 300})
		return
	}
	claims := i.Claims(req.Resource, scopes...)
	claims["sub"], claims["client_id"], claims["jti"] = sub, id, jti
	claims["exp"] = time.Now().Add(lifetime).Unix()
	claims["act"] = map[string]any{"sub": id}
	i.issue(w, kid, claims, map[string]any{"issued_token_type": TokenTypeAccessToken, "scope": strings.Join(scopes, " ")})
}

// serveJAG redeems an identity assertion grant (GrantTypeJWTBearer): a
// client registered with Register authenticates with its secret; the
// assertion must be a JWT an identity provider this issuer trusts signed
// for this issuer (aud), not expired. The access token issued has the
// assertion's sub, its resource as aud, and the client as client_id; it
// counts as an exchange for that subject (ExchangesFor).
func (i *Issuer) serveJAG(w http.ResponseWriter, r *http.Request) {
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	i.mu.Lock()
	c, known := i.clients[id]
	i.mu.Unlock()
	if !known || (c.Secret != "" && secret != c.Secret) {
		i.exRefused.Add(1)
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "invalid_client"})
		return
	}
	t, err := jwt.ParseSigned(r.PostForm.Get("assertion"), []jose.SignatureAlgorithm{jose.RS256, jose.PS256, jose.ES256})
	var claims struct {
		jwt.Claims
		Resource string `json:"resource"`
		Scope    string `json:"scope"`
	}
	ok := err == nil && len(t.Headers) == 1
	if ok {
		ok = false
		i.mu.Lock()
		trusted := slices.Clone(i.trusted)
		i.mu.Unlock()
		for _, idp := range trusted {
			idp.mu.Lock()
			k, has := idp.keys[t.Headers[0].KeyID]
			idp.mu.Unlock()
			if has && t.Claims(k.key.Public(), &claims) == nil &&
				claims.ValidateWithLeeway(jwt.Expected{Issuer: idp.URL, AnyAudience: jwt.Audience{i.URL}, Time: time.Now()}, 0) == nil &&
				claims.Subject != "" && claims.Resource != "" {
				ok = true
				break
			}
		}
	}
	if !ok {
		i.exRefused.Add(1)
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": "the assertion is not accepted"})
		return
	}
	i.mu.Lock()
	i.exchanged[claims.Subject]++
	i.n++
	jti := fmt.Sprintf("j-%d", i.n)
	kid, lifetime := i.signWith, i.lifetime
	i.mu.Unlock()
	at := i.Claims(claims.Resource, strings.Fields(claims.Scope)...)
	at["sub"], at["client_id"], at["jti"] = claims.Subject, id, jti
	at["exp"] = time.Now().Add(lifetime).Unix()
	i.issue(w, kid, at, map[string]any{"scope": claims.Scope})
}

// subjectOf checks a subject token and returns its sub.
func (i *Issuer) subjectOf(tok string) (string, error) {
	t, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256, jose.PS256, jose.ES256})
	if err != nil || len(t.Headers) != 1 {
		return "", fmt.Errorf("not a JWT")
	}
	i.mu.Lock()
	issuers := append([]*Issuer{i}, i.trusted...)
	i.mu.Unlock()
	kid := t.Headers[0].KeyID
	for _, is := range issuers {
		is.mu.Lock()
		k, ok := is.keys[kid]
		is.mu.Unlock()
		if !ok {
			continue
		}
		var c jwt.Claims
		if err := t.Claims(k.key.Public(), &c); err != nil {
			continue
		}
		if err := c.ValidateWithLeeway(jwt.Expected{Issuer: is.URL, Time: time.Now()}, 0); err != nil {
			return "", fmt.Errorf("claims: %v", err)
		}
		if c.Subject == "" {
			return "", fmt.Errorf("no subject")
		}
		if is == i {
			i.mu.Lock()
			revoked := c.ID != "" && i.revoked[c.ID]
			i.mu.Unlock()
			if revoked {
				return "", fmt.Errorf("revoked")
			}
		}
		return c.Subject, nil
	}
	return "", fmt.Errorf("not signed by a trusted issuer")
}

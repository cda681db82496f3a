package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// grantTypeJWTBearer is the grant type of RFC 7523 §2.1.
const grantTypeJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// EnterpriseConfig configures enterprise-managed authorization (the MCP
// extension SEP-990, "cross-app access"), see [Enterprise].
type EnterpriseConfig struct {
	// IDToken returns an OpenID Connect ID token of the user, issued by the
	// enterprise identity provider (IdP) to the client. Required.
	IDToken func(ctx context.Context) (string, error)
	// IdPIssuer is the issuer identifier of the IdP. Its token endpoint is
	// found in its metadata (RFC 8414 or OpenID discovery, the issuer
	// checked) unless IdPTokenURL is set. One of them is required.
	IdPIssuer string
	// IdPTokenURL is the token endpoint of the IdP.
	IdPTokenURL string
	// IdPClientID and IdPClientSecret identify the client at the IdP
	// (IdPClientSecret is empty for a public client).
	IdPClientID, IdPClientSecret string
	// ClientID and ClientSecret identify the client at the MCP server's
	// authorization server.
	ClientID, ClientSecret string
	// Scopes are the scopes asked for (default: those of the server's
	// challenge, else those of its resource metadata).
	Scopes []string
}

// enterpriseHandler implements auth.OAuthHandler for [Enterprise].
type enterpriseHandler struct {
	cfg *EnterpriseConfig
	hc  *http.Client

	mu sync.Mutex
	ts oauth2.TokenSource
}

// TokenSource implements auth.OAuthHandler.
func (h *enterpriseHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ts, nil
}

// Authorize implements auth.OAuthHandler.
func (h *enterpriseHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return fmt.Errorf("WWW-Authenticate: %w", err)
	}
	if resp.StatusCode == http.StatusForbidden && !hasChallengeError(challenges, "insufficient_scope") {
		// Not a matter of authorization (as the SDK's handlers do): the
		// request is sent again and its answer handled as usual.
		return nil
	}
	prm, err := discoverResource(ctx, challenges, req.URL.String(), h.hc)
	if err != nil {
		return err
	}
	asURL := prm.AuthorizationServers[0]
	asm, err := auth.GetAuthServerMetadata(ctx, asURL, h.hc)
	if err != nil {
		return fmt.Errorf("authorization server metadata: %w", err)
	}
	if asm == nil { // 2025-03-26 default endpoints
		asm = &oauthex.AuthServerMeta{Issuer: asURL, TokenEndpoint: strings.TrimRight(asURL, "/") + "/token"}
	}
	idpToken := h.cfg.IdPTokenURL
	if idpToken == "" {
		if idpToken, err = idpTokenEndpoint(ctx, h.cfg.IdPIssuer, h.hc); err != nil {
			return err
		}
	}
	idToken, err := h.cfg.IDToken(ctx)
	if err != nil {
		return fmt.Errorf("ID token: %w", err)
	}
	scopes := h.cfg.Scopes
	if len(scopes) == 0 {
		scopes = challengeScopes(challenges)
	}
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	idp := &oauthex.ClientCredentials{ClientID: h.cfg.IdPClientID}
	if h.cfg.IdPClientSecret != "" {
		idp.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: h.cfg.IdPClientSecret}
	}
	jag, err := oauthex.ExchangeToken(ctx, idpToken, &oauthex.TokenExchangeRequest{
		RequestedTokenType: oauthex.TokenTypeIDJAG,
		Audience:           asm.Issuer,
		Resource:           prm.Resource,
		Scope:              scopes,
		SubjectToken:       idToken,
		SubjectTokenType:   oauthex.TokenTypeIDToken,
	}, idp, h.hc)
	if err != nil {
		return fmt.Errorf("token exchange at the IdP: %w", cleanError(err))
	}
	style := oauth2.AuthStyleInHeader
	if m := asm.TokenEndpointAuthMethodsSupported; len(m) > 0 && !slices.Contains(m, "client_secret_basic") && slices.Contains(m, "client_secret_post") {
		style = oauth2.AuthStyleInParams
	}
	oc := &oauth2.Config{ClientID: h.cfg.ClientID, ClientSecret: h.cfg.ClientSecret, Endpoint: oauth2.Endpoint{TokenURL: asm.TokenEndpoint, AuthStyle: style}}
	tok, err := oc.Exchange(context.WithValue(ctx, oauth2.HTTPClient, h.hc), "",
		oauth2.SetAuthURLParam("grant_type", grantTypeJWTBearer),
		oauth2.SetAuthURLParam("assertion", jag.AccessToken))
	if err != nil {
		return fmt.Errorf("JWT bearer grant: %w", cleanError(err))
	}
	h.mu.Lock()
	h.ts = oauth2.StaticTokenSource(tok)
	h.mu.Unlock()
	return nil
}

// discoverResource returns the protected resource metadata of the MCP
// server at resource (RFC 9728: from the challenge, then the well-known
// locations at the resource's path and at the root), or, when it
// publishes none, metadata naming its origin as the authorization server
// (MCP 2025-03-26).
func discoverResource(ctx context.Context, challenges []oauthex.Challenge, resource string, hc *http.Client) (*oauthex.ProtectedResourceMetadata, error) {
	ru, err := url.Parse(resource)
	if err != nil {
		return nil, err
	}
	type candidate struct{ meta, resource string }
	var cands []candidate
	for _, c := range challenges {
		if m := c.Params["resource_metadata"]; m != "" {
			cands = append(cands, candidate{m, resource})
			break
		}
	}
	mu := *ru
	mu.Path = wellKnownPRM + "/" + strings.TrimLeft(ru.Path, "/")
	cands = append(cands, candidate{mu.String(), resource})
	root := *ru
	root.Path, root.RawQuery = "", ""
	mu.Path, mu.RawQuery = wellKnownPRM, ""
	cands = append(cands, candidate{mu.String(), root.String()})
	for _, c := range cands {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c.meta, c.resource, hc)
		if err != nil || prm == nil {
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, errors.New("the protected resource metadata names no authorization server")
		}
		return prm, nil
	}
	return &oauthex.ProtectedResourceMetadata{Resource: resource, AuthorizationServers: []string{root.String()}}, nil
}

// challengeScopes returns the scopes of a Bearer challenge.
func challengeScopes(cs []oauthex.Challenge) []string {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "bearer") && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}

// hasChallengeError reports whether a Bearer challenge carries the error
// code.
func hasChallengeError(cs []oauthex.Challenge, code string) bool {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "bearer") && c.Params["error"] == code {
			return true
		}
	}
	return false
}

// idpTokenEndpoint returns the token endpoint of the IdP whose issuer
// identifier is issuer, from its metadata (RFC 8414, then OpenID
// discovery). The metadata's issuer must be issuer (RFC 8414 §3.3) and its
// token endpoint https or loopback; redirects are not followed; unlike
// auth.GetAuthServerMetadata it need not advertise PKCE.
func idpTokenEndpoint(ctx context.Context, issuer string, hc *http.Client) (string, error) {
	iu, err := url.Parse(issuer)
	if err != nil || iu.Host == "" {
		return "", fmt.Errorf("IdP issuer %q is not a URL", issuer)
	}
	p := strings.Trim(iu.Path, "/")
	var urls []string
	for _, wk := range []string{wellKnownMeta, "/.well-known/openid-configuration"} {
		u := *iu
		u.Path = wk
		if p != "" {
			u.Path += "/" + p
		}
		urls = append(urls, u.String())
	}
	if p != "" { // OpenID discovery appends
		u := *iu
		u.Path = "/" + p + "/.well-known/openid-configuration"
		urls = append(urls, u.String())
	}
	noRedirect := *hc
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, mu := range urls {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, mu, nil)
		if err != nil {
			return "", err
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			return "", fmt.Errorf("IdP metadata: %w", err)
		}
		var m authServerMetadata
		err = json.NewDecoder(io.LimitReader(resp.Body, maxMetadata)).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode >= 400 && resp.StatusCode < 500 {
			continue
		}
		if resp.StatusCode != http.StatusOK || err != nil {
			return "", fmt.Errorf("IdP metadata at %s: %s", mu, resp.Status)
		}
		if strings.TrimRight(m.Issuer, "/") != strings.TrimRight(issuer, "/") {
			return "", fmt.Errorf("IdP metadata issuer %q is not %q", m.Issuer, issuer)
		}
		tu, err := url.Parse(m.TokenEndpoint)
		if err != nil || !(tu.Scheme == "https" || (tu.Scheme == "http" && isLoopbackHost(tu.Hostname()))) {
			return "", fmt.Errorf("IdP token endpoint %q is neither https nor loopback", m.TokenEndpoint)
		}
		return m.TokenEndpoint, nil
	}
	return "", fmt.Errorf("no metadata found for the IdP %s", issuer)
}

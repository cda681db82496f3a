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
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// grantTypeJWTBearer is the grant type of RFC 7523 §2.1.
const grantTypeJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// EnterpriseConfig configures enterprise-managed authorization (the MCP
// extension SEP-990, "cross-app access"), see [Enterprise].
type EnterpriseConfig struct {
	// IDToken returns an OpenID Connect ID token of the user a request is
	// made for, issued by the enterprise identity provider (IdP) to the
	// client. Required. It is called with the context of each request (so
	// it should be cheap): an application that acts for several users
	// returns the ID token of the user the context names, and each user
	// gets their own access token (see [Enterprise]).
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
	// Timeout bounds one discovery and exchange (default
	// [DefaultExchangeTimeout]).
	Timeout time.Duration
	// MaxSubjects bounds the users whose tokens are kept (default
	// [DefaultMaxSubjects]).
	MaxSubjects int
}

// enterpriseFlow is the subjectFlow of [Enterprise]: the subject is the
// user's ID token.
type enterpriseFlow struct {
	cfg *EnterpriseConfig

	mu       sync.Mutex
	idpToken string // the IdP's token endpoint, once found
}

func (f *enterpriseFlow) scopes() []string { return f.cfg.Scopes }

func (f *enterpriseFlow) subject(ctx context.Context) (subject, error) {
	idToken, err := f.cfg.IDToken(ctx)
	if err != nil {
		return subject{}, fmt.Errorf("ID token: %w", err)
	}
	if idToken == "" {
		return subject{}, errors.New("ID token: none")
	}
	return newSubject(idToken, oauthex.TokenTypeIDToken), nil
}

// idpTokenEndpoint returns the IdP's token endpoint: the one configured,
// or the one its metadata names (found once).
func (f *enterpriseFlow) idpTokenEndpoint(ctx context.Context, hc *http.Client) (string, error) {
	if f.cfg.IdPTokenURL != "" {
		return f.cfg.IdPTokenURL, nil
	}
	f.mu.Lock()
	te := f.idpToken
	f.mu.Unlock()
	if te != "" {
		return te, nil
	}
	te, err := idpTokenEndpoint(ctx, f.cfg.IdPIssuer, hc)
	if err != nil {
		return "", err
	}
	f.mu.Lock()
	f.idpToken = te
	f.mu.Unlock()
	return te, nil
}

func (f *enterpriseFlow) obtain(ctx context.Context, hc *http.Client, s subject, t *target, scopes []string) (*oauth2.Token, error) {
	idpToken, err := f.idpTokenEndpoint(ctx, hc)
	if err != nil {
		return nil, err
	}
	idp := &oauthex.ClientCredentials{ClientID: f.cfg.IdPClientID}
	if f.cfg.IdPClientSecret != "" {
		idp.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: f.cfg.IdPClientSecret}
	}
	jag, err := oauthex.ExchangeToken(ctx, idpToken, &oauthex.TokenExchangeRequest{
		RequestedTokenType: oauthex.TokenTypeIDJAG,
		Audience:           t.asm.Issuer,
		Resource:           t.prm.Resource,
		Scope:              scopes,
		SubjectToken:       s.token,
		SubjectTokenType:   oauthex.TokenTypeIDToken,
	}, idp, hc)
	if err != nil {
		return nil, refusal("token exchange at the IdP", err, s.token, f.cfg.IdPClientSecret)
	}
	style := oauth2.AuthStyleInHeader
	if m := t.asm.TokenEndpointAuthMethodsSupported; len(m) > 0 && !slices.Contains(m, "client_secret_basic") && slices.Contains(m, "client_secret_post") {
		style = oauth2.AuthStyleInParams
	}
	oc := &oauth2.Config{ClientID: f.cfg.ClientID, ClientSecret: f.cfg.ClientSecret, Endpoint: oauth2.Endpoint{TokenURL: t.asm.TokenEndpoint, AuthStyle: style}}
	tok, err := oc.Exchange(context.WithValue(ctx, oauth2.HTTPClient, hc), "",
		oauth2.SetAuthURLParam("grant_type", grantTypeJWTBearer),
		oauth2.SetAuthURLParam("assertion", jag.AccessToken))
	if err != nil {
		return nil, refusal("JWT bearer grant", err, s.token, jag.AccessToken, f.cfg.ClientSecret)
	}
	return tok, nil
}

// refusal is the error of a step of a flow that failed with err, an
// error of golang.org/x/oauth2 or of the SDK: a token endpoint's error
// answer becomes a [ServerError] (without its description when it quotes
// one of the secrets) wrapped with [ErrExchangeRefused]; other errors
// lose the answer they quote.
func refusal(step string, err error, secrets ...string) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return fmt.Errorf("%s: %w", step, cleanError(err))
	}
	se := &ServerError{Endpoint: "token", Code: errorCode(re.ErrorCode), Description: oneLine(re.ErrorDescription, MaxErrorDescription)}
	if re.Response != nil {
		se.Status = re.Response.StatusCode
	}
	if quotes(se.Description, secrets...) {
		se.Description = ""
	}
	return fmt.Errorf("%s: %w: %w", step, ErrExchangeRefused, se)
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

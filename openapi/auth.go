package openapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/llmkit/toolkit"
)

// Credential is the secret of one security scheme of the document. Which
// fields count depends on the scheme's type:
//
//   - apiKey (in a header, the query or a cookie): APIKey.
//   - http bearer: Token.
//   - http basic: Username and Password.
//   - oauth2 and openIdConnect: TokenSource when set (an
//     oauth.Handler's, for an authorization code flow with its token
//     store; per user in the gateway); else ClientID and ClientSecret for
//     the client credentials flow at the scheme's tokenUrl, with Scopes;
//     else Token as it is.
//
// A credential never appears in a log or an error.
type Credential struct {
	APIKey             string
	Token              string
	Username, Password string
	ClientID           string
	ClientSecret       string
	Scopes             []string
	TokenSource        oauth2.TokenSource
	// User, when set, makes each user authorize with the scheme's
	// authorization code flow and the calls carry that user's token (see
	// [UserAuthorization]).
	User *UserAuthorization
}

// String hides the secrets.
func (Credential) String() string { return "openapi.Credential{…}" }

// credentials applies the configured credentials to requests.
type credentials struct {
	by     map[string]Credential
	client *http.Client // for token requests

	mu      sync.Mutex
	sources map[string]oauth2.TokenSource // client credentials, by scheme and token URL
}

// newCredentials checks the credentials given.
func newCredentials(by map[string]Credential, client *http.Client) (*credentials, error) {
	for name, c := range by {
		if c.APIKey == "" && c.Token == "" && c.Username == "" && c.ClientID == "" && c.TokenSource == nil && c.User == nil {
			return nil, fmt.Errorf("%w: openapi: credential %s has no secret", toolkit.ErrBadParameter, quote(name))
		}
		if c.User != nil && (c.User.Callback == nil || c.User.ClientID == "" || c.User.Resource == "") {
			return nil, fmt.Errorf("%w: openapi: credential %s: a user authorization needs a client ID, a callback and a resource", toolkit.ErrBadParameter, quote(name))
		}
		if c.ClientID != "" && c.ClientSecret == "" {
			return nil, fmt.Errorf("%w: openapi: credential %s: a client ID without a client secret", toolkit.ErrBadParameter, quote(name))
		}
	}
	return &credentials{by: by, client: client, sources: map[string]oauth2.TokenSource{}}, nil
}

// ErrUserScheme is wrapped by the error of a document whose security
// scheme cannot be authorized by each user as its credential's
// [UserAuthorization] asks: the document has no such scheme, or it is not
// oauth2 with an authorizationCode flow (nor are both endpoints given).
var ErrUserScheme = fmt.Errorf("%w: openapi: not a scheme each user can authorize", toolkit.ErrBadParameter)

// checkUsers checks that the scheme of each credential with a
// UserAuthorization can be authorized by the users.
func (cr *credentials) checkUsers(doc *openapi3.T) error {
	for name, c := range cr.by {
		if c.User == nil {
			continue
		}
		var s *openapi3.SecurityScheme
		if doc.Components != nil {
			if ref := doc.Components.SecuritySchemes[name]; ref != nil {
				s = ref.Value
			}
		}
		switch {
		case s == nil:
			return fmt.Errorf("%w: the document has no security scheme %s", ErrUserScheme, quote(name))
		case !strings.EqualFold(s.Type, "oauth2"):
			return fmt.Errorf("%w: security scheme %s is of type %s, not oauth2", ErrUserScheme, quote(name), quote(s.Type))
		case (s.Flows == nil || s.Flows.AuthorizationCode == nil) && (c.User.AuthURL == "" || c.User.TokenURL == ""):
			return fmt.Errorf("%w: security scheme %s has no authorizationCode flow", ErrUserScheme, quote(name))
		}
	}
	return nil
}

// apply adds to req the credentials of the first security requirement of
// the operation (or the document) that they all satisfy. When none can be
// satisfied the request goes without: the API's answer tells the model.
func (cr *credentials) apply(ctx context.Context, doc *openapi3.T, op *openapi3.Operation, req *http.Request) error {
	reqs := doc.Security
	if op.Security != nil {
		reqs = *op.Security
	}
	for _, r := range reqs {
		if len(r) == 0 {
			return nil // anonymous is allowed
		}
		if !cr.satisfies(doc, r) {
			continue
		}
		for name := range r {
			if err := cr.add(ctx, name, doc.Components.SecuritySchemes[name].Value, r[name], req); err != nil {
				return err
			}
		}
		return nil
	}
	return nil
}

// satisfies reports whether every scheme of r has a usable credential.
func (cr *credentials) satisfies(doc *openapi3.T, r openapi3.SecurityRequirement) bool {
	if doc.Components == nil {
		return false
	}
	for name := range r {
		ref := doc.Components.SecuritySchemes[name]
		c, ok := cr.by[name]
		if !ok || ref == nil || ref.Value == nil {
			return false
		}
		s := ref.Value
		switch strings.ToLower(s.Type) {
		case "apikey":
			ok = c.APIKey != ""
		case "http":
			switch strings.ToLower(s.Scheme) {
			case "basic":
				ok = c.Username != ""
			default:
				ok = c.Token != ""
			}
		case "oauth2", "openidconnect":
			ok = c.User != nil || c.TokenSource != nil || c.Token != "" || c.ClientID != "" && tokenURL(s) != ""
		default:
			ok = false
		}
		if !ok {
			return false
		}
	}
	return true
}

// tokenURL returns the token URL of a scheme's client credentials flow.
func tokenURL(s *openapi3.SecurityScheme) string {
	if s.Flows == nil || s.Flows.ClientCredentials == nil {
		return ""
	}
	return s.Flows.ClientCredentials.TokenURL
}

// add puts the credential of scheme name on req.
func (cr *credentials) add(ctx context.Context, name string, s *openapi3.SecurityScheme, scopes []string, req *http.Request) error {
	c := cr.by[name]
	switch strings.ToLower(s.Type) {
	case "apikey":
		switch s.In {
		case "header":
			req.Header.Set(s.Name, c.APIKey)
		case "query":
			q := req.URL.Query()
			q.Set(s.Name, c.APIKey)
			req.URL.RawQuery = q.Encode()
		case "cookie":
			req.AddCookie(&http.Cookie{Name: s.Name, Value: c.APIKey})
		}
		return nil
	case "http":
		if strings.EqualFold(s.Scheme, "basic") {
			req.SetBasicAuth(c.Username, c.Password)
			return nil
		}
		req.Header.Set("Authorization", "Bearer "+c.Token)
		return nil
	}
	src, err := cr.source(ctx, name, s, c, scopes)
	if err != nil {
		return err
	}
	tok, err := src.Token()
	if errors.Is(err, ErrTokenType) {
		return err
	}
	if err != nil {
		return fmt.Errorf("%w: openapi: security scheme %s: getting a token failed", toolkit.ErrUnavailable, quote(name))
	}
	tok.SetAuthHeader(req)
	return nil
}

// source returns the token source of an oauth2 or openIdConnect scheme.
func (cr *credentials) source(ctx context.Context, name string, s *openapi3.SecurityScheme, c Credential, scopes []string) (oauth2.TokenSource, error) {
	switch {
	case c.User != nil:
		return c.User.source(ctx, s, scopes, cr.client)
	case c.TokenSource != nil:
		return c.TokenSource, nil
	case c.ClientID == "":
		return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: c.Token, TokenType: "Bearer"}), nil
	}
	u := tokenURL(s)
	key := name + " " + u
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if src, ok := cr.sources[key]; ok {
		return src, nil
	}
	if len(c.Scopes) > 0 {
		scopes = c.Scopes
	}
	cc := clientcredentials.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, TokenURL: u, Scopes: scopes}
	// The token requests go through the connector's client: the same
	// destination rules as the calls. The source outlives this call.
	src := cc.TokenSource(context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, cr.client))
	cr.sources[key] = src
	return src, nil
}

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
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Token types of RFC 8693 §3.
const (
	// TokenTypeAccessToken is the type of an OAuth 2.0 access token, the
	// subject token type of [TokenExchange] by default.
	TokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"
	// TokenTypeJWT is the type of a JWT.
	TokenTypeJWT = "urn:ietf:params:oauth:token-type:jwt"
	// TokenTypeIDToken is the type of an OpenID Connect ID token.
	TokenTypeIDToken = oauthex.TokenTypeIDToken
)

// ErrExchangeRefused is wrapped by the error of a token exchange
// ([TokenExchange], [Enterprise]) that gave no token: the authorization
// server refused it (the error then wraps its [ServerError] too: an
// invalid_grant is a subject token it does not accept), or answered
// something that is not a usable access token. The error never quotes a
// token, a secret or the server's answer.
var ErrExchangeRefused = errors.New("OAuth token exchange refused")

// Client authentication methods at a token endpoint (RFC 7591 §2).
const (
	// AuthMethodClientSecretBasic sends the client ID and secret with
	// HTTP Basic authentication (RFC 6749 §2.3.1).
	AuthMethodClientSecretBasic = "client_secret_basic"
	// AuthMethodClientSecretPost sends them in the request's form.
	AuthMethodClientSecretPost = "client_secret_post"
	// AuthMethodNone sends the client ID alone, in the form: a public
	// client.
	AuthMethodNone = "none"
)

// TokenExchangeConfig configures OAuth 2.0 token exchange (RFC 8693), see
// [TokenExchange].
type TokenExchangeConfig struct {
	// SubjectToken returns the token of the user a request is made for,
	// and its type (empty: [TokenTypeAccessToken]): typically the access
	// token the user's client presented to the application, issued by an
	// identity provider the MCP server's authorization server trusts. It
	// is called with the context of each request (so it should be cheap)
	// and must return the same token for the requests of one user. Nil
	// takes the token that [WithSubjectToken] put in the context
	// ([SubjectTokenFromContext]).
	SubjectToken func(ctx context.Context) (token, tokenType string, err error)
	// ClientID and ClientSecret identify the client at the authorization
	// server (ClientSecret is empty for a public client). ClientID is
	// required.
	ClientID, ClientSecret string
	// AuthMethod is how the client authenticates at the token endpoint:
	// [AuthMethodClientSecretBasic], [AuthMethodClientSecretPost] or
	// [AuthMethodNone] (client_id in the form). Empty: none without a
	// secret; with one, client_secret_basic unless the server's metadata
	// lists only client_secret_post.
	AuthMethod string
	// Audience, when set, is the audience parameter: the logical name of
	// the service the token is for, when the authorization server wants
	// one beside the resource.
	Audience string
	// Scopes are the scopes asked for (default: those of the server's
	// challenge, else those of its resource metadata, else none).
	Scopes []string
	// Timeout bounds one discovery and exchange (default
	// [DefaultExchangeTimeout]).
	Timeout time.Duration
	// MaxSubjects bounds the subjects whose tokens are kept (default
	// [DefaultMaxSubjects]).
	MaxSubjects int
}

// TokenExchange returns OAuth 2.0 token exchange (RFC 8693) of the user's
// own token for one the MCP server accepts, for servers whose
// authorization server trusts the identity provider that issued the
// user's token: when the server answers 401, the handler finds the
// server's authorization server (protected resource metadata, RFC 9728,
// and its metadata, RFC 8414), and posts to its token endpoint the grant
// urn:ietf:params:oauth:grant-type:token-exchange with the subject token
// of the request's context ([TokenExchangeConfig.SubjectToken]),
// requested_token_type access_token, resource the MCP server (RFC 8707),
// the configured audience and scopes, authenticating as
// [TokenExchangeConfig.AuthMethod] says. The answer must carry a Bearer
// access token (issued_token_type, when given, access_token or jwt).
//
// Tokens are kept per subject — told apart by a hash of the subject
// token — and never served for another: the requests of each user go
// with the token exchanged for that user's own. A token is exchanged
// again when it is about to expire (ten seconds before, or a quarter of
// its life for short ones) and when the server refuses it; one exchange
// at a time per subject, and one subject's exchange never waits for
// another's. A refused exchange fails the request with an error wrapping
// [ErrExchangeRefused] and the authorization server's [ServerError]
// (without its description when it quotes the token or the secret),
// remembered for that subject for five seconds, or what Retry-After
// says. The requests go where the package's rules allow (see
// [HandlerConfig.Allow]), redirects are not followed and answers are
// read up to 64 KiB.
//
// Which subject a request is made for comes from contexts. Its token is
// the one of the subject that the context the transport gives the
// handler's token source carries (the SDK's streamable HTTP transport
// gives the context of Connect, with its values; [Transport] the
// request's), and a token about to expire is exchanged again there,
// before it is sent. A server's 401 has a token exchanged for the subject
// of the request's context or, when it carries none, for the subject of
// the token the request carried. So a per-user setup connects each
// user's session with a context that carries that user's token
// ([WithSubjectToken], or what SubjectToken reads) and makes only that
// user's requests on it; a connection shared by several users acts for
// the subject of its own context.
//
// The SDK's oauthex.ExchangeToken is not used: it is made for ID-JAG
// (client_secret_post only, audience required, any token type), see
// [Enterprise].
func TokenExchange(cfg TokenExchangeConfig) (*Flow, error) {
	if cfg.ClientID == "" {
		return nil, badParameter("a ClientID is required")
	}
	switch cfg.AuthMethod {
	case "", AuthMethodClientSecretBasic, AuthMethodClientSecretPost:
	case AuthMethodNone:
		if cfg.ClientSecret != "" {
			return nil, badParameter("AuthMethod none with a ClientSecret")
		}
	default:
		return nil, badParameter("AuthMethod %q: want client_secret_basic, client_secret_post or none", cfg.AuthMethod)
	}
	if (cfg.AuthMethod == AuthMethodClientSecretBasic || cfg.AuthMethod == AuthMethodClientSecretPost) && cfg.ClientSecret == "" {
		return nil, badParameter("AuthMethod %s without a ClientSecret", cfg.AuthMethod)
	}
	if cfg.SubjectToken == nil {
		cfg.SubjectToken = SubjectTokenFromContext
	}
	return &Flow{exchange: &cfg}, nil
}

// subjectKey is the context key of [WithSubjectToken].
type subjectKey struct{}

type subjectValue struct{ token, tokenType string }

// WithSubjectToken returns a copy of ctx that carries the token of the
// user its requests are made for, and its type (empty:
// [TokenTypeAccessToken]), for [SubjectTokenFromContext]: a gateway puts
// there the access token its client presented.
func WithSubjectToken(ctx context.Context, token, tokenType string) context.Context {
	return context.WithValue(ctx, subjectKey{}, subjectValue{token, tokenType})
}

// errNoSubject is the error of a context without a subject token.
var errNoSubject = errors.New("the request carries no subject token")

// SubjectTokenFromContext returns the token [WithSubjectToken] put in
// ctx, and its type, or an error when there is none: the default
// [TokenExchangeConfig.SubjectToken].
func SubjectTokenFromContext(ctx context.Context) (token, tokenType string, err error) {
	v, _ := ctx.Value(subjectKey{}).(subjectValue)
	if v.token == "" {
		return "", "", errNoSubject
	}
	return v.token, v.tokenType, nil
}

// exchangeFlow is the subjectFlow of [TokenExchange].
type exchangeFlow struct{ cfg *TokenExchangeConfig }

func (f exchangeFlow) scopes() []string { return f.cfg.Scopes }

func (f exchangeFlow) subject(ctx context.Context) (subject, error) {
	tok, typ, err := f.cfg.SubjectToken(ctx)
	if err != nil {
		return subject{}, fmt.Errorf("subject token: %w", err)
	}
	if tok == "" {
		return subject{}, fmt.Errorf("subject token: %w", errNoSubject)
	}
	if typ == "" {
		typ = TokenTypeAccessToken
	}
	return newSubject(tok, typ), nil
}

func (f exchangeFlow) obtain(ctx context.Context, hc *http.Client, s subject, t *target, scopes []string) (*oauth2.Token, error) {
	form := url.Values{
		"grant_type":           {oauthex.GrantTypeTokenExchange},
		"subject_token":        {s.token},
		"subject_token_type":   {s.tokenType},
		"requested_token_type": {TokenTypeAccessToken},
		"resource":             {t.prm.Resource},
	}
	if f.cfg.Audience != "" {
		form.Set("audience", f.cfg.Audience)
	}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	method := f.cfg.AuthMethod
	if method == "" {
		method = AuthMethodNone
		if f.cfg.ClientSecret != "" {
			method = AuthMethodClientSecretBasic
			if m := t.asm.TokenEndpointAuthMethodsSupported; len(m) > 0 && !slices.Contains(m, AuthMethodClientSecretBasic) && slices.Contains(m, AuthMethodClientSecretPost) {
				method = AuthMethodClientSecretPost
			}
		}
	}
	return postTokenRequest(ctx, hc, t.asm.TokenEndpoint, form, f.cfg.ClientID, f.cfg.ClientSecret, method, s.token)
}

// maxTokenAnswer bounds the token endpoint answer read.
const maxTokenAnswer = 64 << 10

// postTokenRequest posts form to the token endpoint tokenURL with hc,
// authenticating as method says, and reads its answer: a Bearer access
// token, or an error wrapping ErrExchangeRefused (and the ServerError of
// an error answer, whose description is dropped when it quotes the
// subject token or the secret). Redirects are not followed.
func postTokenRequest(ctx context.Context, hc *http.Client, tokenURL string, form url.Values, clientID, secret, method, subjectToken string) (*oauth2.Token, error) {
	switch method {
	case AuthMethodClientSecretPost:
		form.Set("client_id", clientID)
		form.Set("client_secret", secret)
	case AuthMethodNone:
		form.Set("client_id", clientID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%w: token endpoint %q is not a URL", ErrExchangeRefused, hostOf(tokenURL))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if method == AuthMethodClientSecretBasic {
		// RFC 6749 §2.3.1: form-encoded, then Basic.
		req.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(secret))
	}
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // it quotes the URL
		}
		return nil, fmt.Errorf("token exchange at %s: %w", hostOf(tokenURL), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		se := readServerError("token", resp, time.Now())
		if quotes(se.Description, subjectToken, secret) {
			se.Description = ""
		}
		return nil, fmt.Errorf("%w: %w", ErrExchangeRefused, se)
	}
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return nil, fmt.Errorf("%w: token endpoint answered %s", ErrExchangeRefused, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("token exchange: reading the answer: %w", err)
	}
	if len(body) > maxTokenAnswer {
		return nil, fmt.Errorf("%w: the answer is larger than %d bytes", ErrExchangeRefused, maxTokenAnswer)
	}
	tok, err := parseExchangeAnswer(body, time.Now())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrExchangeRefused, err)
	}
	return tok, nil
}

// quotes reports whether s holds a part (12 bytes or more) of one of the
// secrets: an error description that echoes what the client sent.
func quotes(s string, secrets ...string) bool {
	const window = 12
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		if len(sec) < window || len(s) < window {
			if strings.Contains(s, sec) {
				return true
			}
			continue
		}
		for i := 0; i+window <= len(s); i++ {
			if strings.Contains(sec, s[i:i+window]) {
				return true
			}
		}
	}
	return false
}

// maxExpiresIn bounds the lifetime a token answer may claim (a year):
// larger values, which would overflow a time.Duration, are cut to it.
const maxExpiresIn = 365 * 24 * 60 * 60

// parseExchangeAnswer reads a token exchange answer (RFC 8693 §2.2.1)
// received at now: a Bearer access token (token_type compared without
// case), whose issued_token_type, when present, is an access token or a
// JWT, with its expiry from expires_in (a number of seconds; absent,
// none) and its refresh token, if any. Anything else gives an error that
// does not quote the answer.
func parseExchangeAnswer(body []byte, now time.Time) (*oauth2.Token, error) {
	var a struct {
		AccessToken     any `json:"access_token"`
		TokenType       any `json:"token_type"`
		IssuedTokenType any `json:"issued_token_type"`
		ExpiresIn       any `json:"expires_in"`
		RefreshToken    any `json:"refresh_token"`
		Scope           any `json:"scope"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, errors.New("the answer is not a JSON object")
	}
	access, _ := a.AccessToken.(string)
	if access == "" || !printableASCII(access) {
		return nil, errors.New("the answer holds no access token")
	}
	if typ, _ := a.TokenType.(string); !strings.EqualFold(typ, "bearer") {
		return nil, fmt.Errorf("the token type is %q, not Bearer", oneLine(errorCode(typ), maxErrorCode))
	}
	if a.IssuedTokenType != nil {
		issued, _ := a.IssuedTokenType.(string)
		if issued != TokenTypeAccessToken && issued != TokenTypeJWT {
			return nil, fmt.Errorf("the issued token type is %q, not an access token", errorCode(issued))
		}
	}
	tok := &oauth2.Token{AccessToken: access, TokenType: "Bearer"}
	switch e := a.ExpiresIn.(type) {
	case nil:
	case float64:
		if e <= 0 || e != e {
			return nil, errors.New("the token expires at once")
		}
		tok.Expiry = now.Add(time.Duration(min(e, maxExpiresIn)) * time.Second)
	default:
		return nil, errors.New("expires_in is not a number")
	}
	if r, ok := a.RefreshToken.(string); ok && printableASCII(r) {
		tok.RefreshToken = r
	}
	extra := map[string]any{}
	if s, ok := a.Scope.(string); ok {
		extra["scope"] = oneLine(s, 4096)
	}
	if s, ok := a.IssuedTokenType.(string); ok {
		extra["issued_token_type"] = s
	}
	return tok.WithExtra(extra), nil
}

// printableASCII reports whether s is printable ASCII without spaces: it
// may go in an Authorization header.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

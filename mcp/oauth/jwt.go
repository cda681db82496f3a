package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit/internal/errs"
)

// Defaults of JWTConfig.
const (
	// DefaultJWTLeeway is the clock skew allowed on the exp, nbf and iat
	// claims of a JWT access token.
	DefaultJWTLeeway = 30 * time.Second
	// DefaultJWKSRefreshInterval is the shortest time between two fetches
	// of the key set caused by tokens signed with a key it does not hold.
	DefaultJWKSRefreshInterval = time.Minute
	// DefaultJWKSMaxAge is how long a fetched key set is used before it is
	// fetched again.
	DefaultJWKSMaxAge = time.Hour
)

// maxJWT bounds the size of a bearer token the verifier parses, maxJWKS
// the size of a key set document it reads, and maxKeysTried the keys a
// token without a kid is tried against.
const (
	maxJWT       = 16 << 10
	maxJWKS      = 1 << 20
	maxKeysTried = 8
)

// DefaultJWTAlgorithms are the signature algorithms a JWTVerifier accepts
// unless JWTConfig.Algorithms says otherwise. "none" and the HMAC
// algorithms are never accepted: the keys of a key set are public.
var DefaultJWTAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// ErrJWKSUnavailable is wrapped by the error of a token verification that
// could not get the authorization server's key set. The client is answered
// with 500, not 401: its token may well be valid.
var ErrJWKSUnavailable = errors.New("the key set of the authorization server is unavailable")

// JWTConfig configures a JWTVerifier: how the access tokens an
// authorization server issues for this server are checked (RFC 9068, the
// JWT profile of OAuth 2.0 access tokens).
type JWTConfig struct {
	// JWKSURL is the URL of the authorization server's JSON Web Key Set
	// (its jwks_uri). It must be https, or http on a loopback address.
	// Required.
	JWKSURL string
	// Issuer is the value the iss claim must have. Required.
	Issuer string
	// Audience must be one of the token's aud claim: this server's
	// resource identifier, normally the URL of its MCP endpoint (a
	// trailing slash does not matter, see oauthex.MatchesResource).
	// Required.
	Audience string
	// Algorithms are the signature algorithms accepted
	// (DefaultJWTAlgorithms when empty).
	Algorithms []string
	// RequireAccessTokenType makes the token's typ header required to be
	// at+jwt (or application/at+jwt), as RFC 9068 has resource servers
	// check. Without it a token may also be typed JWT or untyped, as
	// several authorization servers issue them; a token of any other
	// explicit type (an ID token typed for its use, a logout token, a
	// DPoP proof, an ID-JAG) is refused either way, so that a JWT made
	// for another purpose by the same issuer is never taken for an access
	// token (RFC 8725, explicit typing). A typ that is not a string is
	// refused too: it is not "untyped".
	RequireAccessTokenType bool
	// Leeway is the clock skew allowed on exp, nbf and iat
	// (DefaultJWTLeeway when 0; a negative value allows none).
	Leeway time.Duration
	// RefreshInterval is the shortest time between two fetches of the key
	// set caused by tokens that name a key it does not hold (the key
	// rotation of the authorization server), so that such tokens cannot
	// make the server hammer it (DefaultJWKSRefreshInterval when 0; a
	// negative value fetches for every such token, one fetch at a time).
	RefreshInterval time.Duration
	// MaxAge is how long a fetched key set is used before the next
	// verification fetches it again (DefaultJWKSMaxAge when 0). When that
	// fetch fails the keys already known are used and the failure is
	// logged.
	MaxAge time.Duration
	// HTTPClient fetches the key set (default: a client with a 10s
	// timeout).
	HTTPClient *http.Client
	// Logger receives, at debug level, why each token was refused, and at
	// warn level the failures to fetch the key set. Tokens are never
	// logged. Nil discards.
	Logger *slog.Logger
}

// JWTVerifier checks JWT access tokens against the key set an
// authorization server publishes: type, signature, issuer, audience,
// expiry and not-before, and that the token names its subject (a sub
// claim that is not empty: the TokenInfo's UserID, whom a session
// belongs to). Its Verify method is an auth.TokenVerifier, for
// auth.RequireBearerToken (the server face's mcpserver.WithBearerAuth
// takes one); scopes are checked there, with the Scopes of
// auth.RequireBearerTokenOptions (403 insufficient_scope), against the
// token's scope claim (or scp, as a list or a space-separated string).
//
// The key set is fetched at the first verification, kept, fetched again
// after MaxAge, and fetched again at once when a token names a key it does
// not hold (at most once per RefreshInterval): keys the authorization
// server rotates in are picked up without a restart. A JWTVerifier is safe
// for concurrent use.
type JWTVerifier struct {
	cfg    JWTConfig
	algs   []jose.SignatureAlgorithm
	logger *slog.Logger
	now    func() time.Time // for tests

	mu      sync.Mutex // guards the fields below
	keys    *jose.JSONWebKeySet
	fetched time.Time // when keys were fetched
	tried   time.Time // when the last fetch was started
	fetch   *jwksFetch
}

// jwksFetch is a fetch of the key set in flight; the requests that need it
// wait for done.
type jwksFetch struct {
	done chan struct{}
	err  error
}

// NewJWTVerifier returns a verifier for cfg. It contacts nobody: the key
// set is fetched when the first token arrives. An invalid cfg gives an
// error wrapping toolkit.ErrBadParameter.
func NewJWTVerifier(cfg JWTConfig) (*JWTVerifier, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: JWTConfig: %s", errs.ErrBadParameter, fmt.Sprintf(format, args...))
	}
	if cfg.JWKSURL == "" || cfg.Issuer == "" || cfg.Audience == "" {
		return nil, bad("JWKSURL, Issuer and Audience are required")
	}
	if err := httpsOrLoopback(cfg.JWKSURL); err != nil {
		return nil, bad("JWKSURL: %v", err)
	}
	names := cfg.Algorithms
	if len(names) == 0 {
		names = DefaultJWTAlgorithms
	}
	var algs []jose.SignatureAlgorithm
	for _, a := range names {
		if !slices.Contains(DefaultJWTAlgorithms, a) {
			return nil, bad("algorithm %q is not accepted (use %s)", a, strings.Join(DefaultJWTAlgorithms, ", "))
		}
		algs = append(algs, jose.SignatureAlgorithm(a))
	}
	switch {
	case cfg.Leeway == 0:
		cfg.Leeway = DefaultJWTLeeway
	case cfg.Leeway < 0:
		cfg.Leeway = 0
	}
	if cfg.RefreshInterval == 0 {
		cfg.RefreshInterval = DefaultJWKSRefreshInterval
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultJWKSMaxAge
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &JWTVerifier{cfg: cfg, algs: algs, logger: logger, now: time.Now}, nil
}

// httpsOrLoopback refuses URLs that are neither https nor http on a
// loopback host.
func httpsOrLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	switch {
	case u.Host == "":
		return fmt.Errorf("%q is not an absolute URL", raw)
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
		return nil
	}
	return fmt.Errorf("%q: use https (http only on a loopback address)", raw)
}

// errRefused is what a client whose token is refused is told: the reason
// goes to the debug log only.
var errRefused = fmt.Errorf("%w", auth.ErrInvalidToken)

// Verify checks token; it is an auth.TokenVerifier. A refused token gives
// an error wrapping auth.ErrInvalidToken that says nothing more (the
// reason is logged at debug level); a key set that cannot be fetched gives
// one wrapping ErrJWKSUnavailable. The TokenInfo carries the token's
// scopes, its expiry, its subject as UserID and all its claims in Extra.
func (v *JWTVerifier) Verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	info, err := v.verify(ctx, token)
	switch {
	case errors.Is(err, ErrJWKSUnavailable):
		v.logger.WarnContext(ctx, "bearer token not verified", "error", err)
		return nil, ErrJWKSUnavailable
	case err != nil:
		v.logger.DebugContext(ctx, "bearer token refused", "reason", err.Error())
		return nil, errRefused
	}
	return info, nil
}

// claimsOf are the claims a JWTVerifier reads beside the registered ones.
type claimsOf struct {
	Scope string          `json:"scope"`
	Scp   json.RawMessage `json:"scp"`
}

func (v *JWTVerifier) verify(ctx context.Context, token string) (*auth.TokenInfo, error) {
	if len(token) > maxJWT {
		return nil, fmt.Errorf("longer than %d bytes", maxJWT)
	}
	tok, err := jwt.ParseSigned(token, v.algs)
	if err != nil {
		return nil, fmt.Errorf("not a signed JWT with an accepted algorithm: %v", err)
	}
	if len(tok.Headers) != 1 {
		return nil, errors.New("not exactly one signature")
	}
	hdr := tok.Headers[0]
	if err := checkType(hdr, token, v.cfg.RequireAccessTokenType); err != nil {
		return nil, err
	}
	keys, err := v.keysFor(ctx, hdr.KeyID)
	if err != nil {
		return nil, err
	}
	var (
		std   jwt.Claims
		extra claimsOf
		all   map[string]any
	)
	if len(keys) > maxKeysTried {
		// A token without kid in a large key set: do not try them all.
		keys = keys[:maxKeysTried]
	}
	verified := false
	for _, k := range keys {
		if k.Use != "" && k.Use != "sig" || k.Algorithm != "" && k.Algorithm != hdr.Algorithm || !k.IsPublic() {
			continue
		}
		if tok.Claims(k.Key, &std, &extra, &all) == nil {
			verified = true
			break
		}
	}
	if !verified {
		if len(keys) == 0 {
			return nil, fmt.Errorf("no key %.64q in the key set", hdr.KeyID)
		}
		return nil, fmt.Errorf("bad signature (key %.64q, algorithm %s)", hdr.KeyID, hdr.Algorithm)
	}
	if std.Expiry == nil {
		return nil, errors.New("no exp claim")
	}
	if std.Subject == "" {
		// The subject is who the token stands for: without one, a
		// session would belong to nobody (and so to any token).
		return nil, errors.New("no sub claim")
	}
	if err := std.ValidateWithLeeway(jwt.Expected{Issuer: v.cfg.Issuer, Time: v.now()}, v.cfg.Leeway); err != nil {
		if errors.Is(err, jwt.ErrInvalidIssuer) {
			return nil, fmt.Errorf("issuer %.100q, want %q", std.Issuer, v.cfg.Issuer)
		}
		return nil, err
	}
	if !oauthex.MatchesResource(std.Audience, v.cfg.Audience) {
		return nil, fmt.Errorf("audience %.200q does not include %q", []string(std.Audience), v.cfg.Audience)
	}
	return &auth.TokenInfo{
		Scopes:     scopesOf(extra),
		Expiration: std.Expiry.Time(),
		UserID:     std.Subject,
		Extra:      all,
	}, nil
}

// checkType checks the typ header of a token (see
// JWTConfig.RequireAccessTokenType), compact, whose header is h. Media
// types compare without case and with or without their "application/"
// prefix (RFC 7515). A typ that is not a string is refused: it is not
// "untyped".
func checkType(h jose.Header, compact string, strict bool) error {
	raw, present := h.ExtraHeaders[jose.HeaderType]
	typ, isString := raw.(string)
	if present && !isString {
		return fmt.Errorf("typ of JSON type %T, not a string", raw)
	}
	if !present && nullType(compact) {
		return errors.New("typ null, not a string")
	}
	t := strings.ToLower(typ)
	t = strings.TrimPrefix(t, "application/")
	switch {
	case t == "at+jwt":
		return nil
	case strict:
		return fmt.Errorf("typ %.40q, want at+jwt", typ)
	case typ == "" || t == "jwt":
		return nil
	}
	return fmt.Errorf("typ %.40q is not that of an access token", typ)
}

// nullType reports whether the protected header of the compact JWS
// compact has a typ parameter whose value is null, which the JOSE library
// drops.
func nullType(compact string) bool {
	seg, _, _ := strings.Cut(compact, ".")
	if len(seg) > maxJWT {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return false
	}
	var hdr map[string]json.RawMessage
	if json.Unmarshal(b, &hdr) != nil {
		return false
	}
	t, ok := hdr[jose.HeaderType]
	return ok && string(t) == "null"
}

// scopesOf returns the scopes of the scope claim (space-separated, RFC
// 9068) or, without it, of scp (a list or a space-separated string).
func scopesOf(c claimsOf) []string {
	if c.Scope != "" {
		return strings.Fields(c.Scope)
	}
	var list []string
	if json.Unmarshal(c.Scp, &list) == nil {
		return list
	}
	var s string
	if json.Unmarshal(c.Scp, &s) == nil {
		return strings.Fields(s)
	}
	return nil
}

// keysFor returns the keys of the key set with id kid (every key when kid
// is empty), fetching the key set when it is missing, old, or lacks kid
// and may be fetched again.
func (v *JWTVerifier) keysFor(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	for attempt := 0; ; attempt++ {
		v.mu.Lock()
		now := v.now()
		keys := v.keys
		var found []jose.JSONWebKey
		if keys != nil {
			if kid == "" {
				found = keys.Keys
			} else {
				found = keys.Key(kid)
			}
		}
		// A key set is fetched when there is none, when it is old, or
		// when it lacks the token's key; but not more than once per
		// RefreshInterval, whatever the tokens that arrive.
		want := keys == nil || now.Sub(v.fetched) >= v.cfg.MaxAge || len(found) == 0
		may := v.tried.IsZero() || v.cfg.RefreshInterval < 0 || now.Sub(v.tried) >= v.cfg.RefreshInterval
		if attempt > 0 || !want || !may && v.fetch == nil {
			v.mu.Unlock()
			if keys == nil {
				return nil, fmt.Errorf("%w: no key set fetched yet", ErrJWKSUnavailable)
			}
			return found, nil
		}
		f := v.fetch
		if f == nil {
			f = &jwksFetch{done: make(chan struct{})}
			v.fetch, v.tried = f, now
			go v.refresh(f)
		}
		v.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if f.err != nil && keys == nil {
			return nil, f.err
		}
	}
}

// refresh fetches the key set for f. It runs on its own goroutine, so
// that a client that hangs up does not fail the fetch of the others.
func (v *JWTVerifier) refresh(f *jwksFetch) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	keys, err := v.get(ctx)
	v.mu.Lock()
	if err == nil {
		v.keys, v.fetched = keys, v.now()
	} else {
		f.err = fmt.Errorf("%w: %v", ErrJWKSUnavailable, err)
		if v.keys != nil {
			v.logger.Warn("key set not refreshed; using the keys already known", "url", v.cfg.JWKSURL, "error", err)
		}
	}
	v.fetch = nil
	v.mu.Unlock()
	close(f.done)
}

// get fetches and decodes the key set.
func (v *JWTVerifier) get(ctx context.Context) (*jose.JSONWebKeySet, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.cfg.JWKSURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", v.cfg.JWKSURL, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKS+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxJWKS {
		return nil, fmt.Errorf("GET %s: the key set is larger than %d bytes", v.cfg.JWKSURL, maxJWKS)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("GET %s: not a JSON Web Key Set: %v", v.cfg.JWKSURL, err)
	}
	return &set, nil
}

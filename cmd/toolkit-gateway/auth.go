package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"github.com/llmkit/toolkit/redisstate"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/mcpserver"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// Auth is how MCP clients authenticate to the gateway's HTTP endpoint:
// with one of a list of bearer tokens, with a JWT access token of an
// OAuth authorization server, or either. Without it the endpoint is open
// (to whoever reaches its address). The health and metrics endpoints are
// never authenticated.
type Auth struct {
	// Bearer accepts fixed tokens.
	Bearer *BearerAuth `yaml:"bearer"`
	// JWT accepts JWT access tokens and makes the gateway an OAuth 2.1
	// protected resource.
	JWT *JWTAuth `yaml:"jwt"`
}

// BearerAuth lists the bearer tokens accepted, read from the environment
// or a file (never written in the configuration). The file is read again
// on SIGHUP. Tokens are compared in constant time and never logged. A
// token grants the JWT's required scopes, if any.
type BearerAuth struct {
	// TokensEnv names an environment variable holding tokens separated by
	// commas or white space.
	TokensEnv string `yaml:"tokens_env"`
	// TokensFile is a file holding one token per line; empty lines and
	// lines starting with # are skipped.
	TokensFile string `yaml:"tokens_file"`

	tokens []tokenHash // what the tokens hash to
}

// JWTAuth accepts the JWT access tokens of an OAuth authorization server
// (see oauth.JWTVerifier), and serves the gateway's protected
// resource metadata (RFC 9728) at /.well-known/oauth-protected-resource
// and its path-based form, named in the WWW-Authenticate challenge of
// every 401.
type JWTAuth struct {
	// JWKSURL is the authorization server's key set (https, or http on a
	// loopback address).
	JWKSURL string `yaml:"jwks_url"`
	// Issuer is the iss the tokens must have.
	Issuer string `yaml:"issuer"`
	// Audience must be in the tokens' aud: the gateway's URL as clients
	// know it, such as https://gateway.example.com/mcp.
	Audience string `yaml:"audience"`
	// RequiredScopes must all be in a token's scope (403 otherwise).
	RequiredScopes []string `yaml:"required_scopes"`
	// Resource is the gateway's resource identifier in its metadata: the
	// absolute URL of its MCP endpoint (default: Audience).
	Resource string `yaml:"resource"`
	// AuthorizationServers are the issuers named in the metadata
	// (default: Issuer).
	AuthorizationServers []string `yaml:"authorization_servers"`
	// Algorithms are the accepted signature algorithms (default: RS, PS,
	// ES and EdDSA ones; never none or HMAC).
	Algorithms []string `yaml:"algorithms"`
	// Leeway is the clock skew allowed on exp and nbf (default 30s).
	Leeway time.Duration `yaml:"leeway"`
	// RequireAccessTokenType refuses tokens not typed at+jwt (RFC 9068);
	// by default tokens typed JWT or untyped pass too (see
	// oauth.JWTConfig.RequireAccessTokenType).
	RequireAccessTokenType bool `yaml:"require_access_token_type"`
}

// OAuth is how the gateway authorizes itself to an upstream server that
// asks for OAuth (see mcp.OptOAuth and mcp.OptOAuth with oauth.ClientCredentials).
type OAuth struct {
	// Grant is authorization_code (the default: a person authorizes once,
	// at the URL the gateway prints on standard error; tokens are kept
	// under token_dir),
	// client_credentials (the gateway's own client ID and secret) or
	// token_exchange (with per_user: each user's access token, which the
	// gateway verified with auth.jwt, exchanged for an upstream token;
	// mcp.UserTokenExchange) or enterprise (with per_user:
	// enterprise-managed authorization, SEP-990: each user's token, an ID
	// token of the IdP idp_issuer verified with auth.jwt, exchanged at the
	// IdP for an identity assertion grant that the upstream's
	// authorization server redeems; mcp.UserEnterprise).
	Grant string `yaml:"grant"`
	// ClientID is the client registered with the authorization server;
	// required for client_credentials and token_exchange. With authorization_code and no
	// client_id the client registers itself (dynamic registration). ${VAR}
	// in it is replaced by the environment variable VAR, which must be
	// set.
	ClientID string `yaml:"client_id"`
	// ClientSecretEnv and ClientSecretFile give the client secret, from
	// an environment variable or a file (its first line); required for
	// client_credentials (token_exchange without one is a public client).
	ClientSecretEnv  string `yaml:"client_secret_env"`
	ClientSecretFile string `yaml:"client_secret_file"`
	// Scopes are asked for (authorization_code, token_exchange; default:
	// those the server names).
	Scopes []string `yaml:"scopes"`
	// Audience is the audience parameter of token_exchange, when the
	// authorization server wants one beside the resource.
	Audience string `yaml:"audience"`
	// IdPIssuer is the issuer of the enterprise identity provider (grant
	// enterprise): its token endpoint is found in its metadata.
	IdPIssuer string `yaml:"idp_issuer"`
	// IdPClientID and IdPClientSecretEnv identify the gateway at the IdP
	// (grant enterprise; no secret: a public client).
	IdPClientID        string `yaml:"idp_client_id"`
	IdPClientSecretEnv string `yaml:"idp_client_secret_env"`
	// RedirectURL is where the authorization server sends the person back
	// (authorization_code): a loopback http URL on which the gateway
	// listens, any path (default http://127.0.0.1:0/callback, any free
	// port; a pre-registered client needs a fixed one). It is checked when
	// the gateway starts the upstream (see oauth.NewLoopbackAuthorizer).
	RedirectURL string `yaml:"redirect_url"`
	// ClientName is sent in a dynamic registration.
	ClientName string `yaml:"client_name"`
	// ClientMetadataURL is the https URL of the client's ID metadata
	// document, used as client ID by servers that support them.
	ClientMetadataURL string `yaml:"client_metadata_url"`
	// NoDynamicRegistration forbids dynamic client registration.
	NoDynamicRegistration bool `yaml:"no_dynamic_registration"`
	// Allow names the destinations the OAuth requests may reach although
	// they are not public https ones (the upstream's own origin needs no
	// entry): origins ("http://127.0.0.1:9000") or hosts ("10.1.2.3"),
	// see mcp.OptOAuthAllow.
	Allow []string `yaml:"allow"`
	// PerUser makes each user of the gateway act upstream with their own
	// token (grant authorization_code; mcp.OptOAuthPerUser): the gateway
	// must authenticate its clients (auth), and the upstream gets
	// upstream_sessions: per_client (the default then; shared is an
	// error). A user without a token is asked to authorize through URL
	// elicitation on their own session (a client without it gets the
	// error -32042 with the URL); redirect_url is then required: the
	// gateway's public URL whose path it serves on its own listener
	// (https, or http on a loopback host). Tokens are kept per user under
	// token_dir. An anonymous client's calls are refused.
	PerUser bool `yaml:"per_user"`

	secret    string
	idpSecret string
}

// OAuth grants.
const (
	grantAuthorizationCode = "authorization_code"
	grantClientCredentials = "client_credentials"
	grantTokenExchange     = "token_exchange"
	grantEnterprise        = "enterprise"
)

// defaultRedirectURL is the redirect of the authorization code grant
// when none is configured.
const defaultRedirectURL = "http://127.0.0.1:0/callback"

// authorizeTimeout is the connect timeout of an upstream authorized by a
// person, unless the configuration gives one.
const authorizeTimeout = 5 * time.Minute

// tokenHash is the SHA-256 of a token: tokens are compared through their
// hashes, in constant time, so that neither their content nor their length
// shows in the time a refusal takes.
type tokenHash [sha256.Size]byte

// tokenPattern is the shape of a bearer token (RFC 6750 b64token).
var tokenPattern = regexp.MustCompile(`^[A-Za-z0-9._~+/-]+=*$`)

// minTokenLen is the length below which a token is refused as guessable.
const minTokenLen = 16

// maxTokensFile bounds the size of a tokens or secret file.
const maxTokensFile = 1 << 20

// checkAuth checks the auth section and reads the bearer tokens.
func (v *validator) checkAuth(c *Config) {
	a := c.Auth
	if a == nil {
		return
	}
	if c.Transport == "stdio" {
		v.fail("auth is for transport http", "auth")
	}
	if strings.HasPrefix(c.Path, "/.well-known/") || strings.HasPrefix(c.SSEPath, "/.well-known/") {
		v.fail("with auth, /.well-known/ is for the protected resource metadata", "path")
	}
	if a.Bearer == nil && a.JWT == nil {
		v.fail("give bearer, jwt or both", "auth")
	}
	if b := a.Bearer; b != nil {
		v.checkBearer(b)
	}
	if j := a.JWT; j != nil {
		v.checkJWT(j)
	}
}

func (v *validator) checkBearer(b *BearerAuth) {
	at := func(k string) []any { return []any{"auth", "bearer", k} }
	if b.TokensEnv == "" && b.TokensFile == "" {
		v.fail("give tokens_env, tokens_file or both", "auth", "bearer")
		return
	}
	b.tokens = nil
	before := len(v.errs)
	if b.TokensEnv != "" {
		val, ok := os.LookupEnv(b.TokensEnv)
		if !ok {
			v.fail(fmt.Sprintf("environment variable %s is not set", b.TokensEnv), at("tokens_env")...)
		}
		b.tokens = append(b.tokens, envTokens(val, func(i int, msg string) {
			v.fail(fmt.Sprintf("token %d of %s %s", i, b.TokensEnv, msg), at("tokens_env")...)
		})...)
	}
	if b.TokensFile != "" {
		b.TokensFile = v.abs(b.TokensFile)
		data, err := readSecretFile(b.TokensFile)
		if err != nil {
			v.fail(err.Error(), at("tokens_file")...)
		}
		b.tokens = append(b.tokens, fileTokens(data, func(line int, msg string) {
			v.fail(fmt.Sprintf("the token at %s:%d %s", b.TokensFile, line, msg), at("tokens_file")...)
		})...)
	}
	if len(b.tokens) == 0 && len(v.errs) == before {
		v.fail("no token found", "auth", "bearer")
	}
}

// envTokens returns the hashes of the tokens of an environment variable's
// value (separated by commas or white space), and calls bad with the
// position (from 1) and the problem of each unusable one.
func envTokens(val string, bad func(i int, msg string)) []tokenHash {
	var out []tokenHash
	for i, tok := range strings.FieldsFunc(val, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
		if msg := badToken(tok); msg != "" {
			bad(i+1, msg)
			continue
		}
		out = append(out, sha256.Sum256([]byte(tok)))
	}
	return out
}

// fileTokens returns the hashes of the tokens of a tokens file (one a
// line; blank lines and lines that start with # are skipped), and calls
// bad with the line number and the problem of each unusable one.
func fileTokens(data []byte, bad func(line int, msg string)) []tokenHash {
	var out []tokenHash
	for i, line := range strings.Split(string(data), "\n") {
		tok := strings.TrimSpace(line)
		if tok == "" || strings.HasPrefix(tok, "#") {
			continue
		}
		if msg := badToken(tok); msg != "" {
			bad(i+1, msg)
			continue
		}
		out = append(out, sha256.Sum256([]byte(tok)))
	}
	return out
}

// badToken says what is wrong with a token, without quoting it.
func badToken(tok string) string {
	switch {
	case len(tok) < minTokenLen:
		return fmt.Sprintf("is too short: use at least %d characters", minTokenLen)
	case !tokenPattern.MatchString(tok):
		return "has characters a bearer token cannot have (use letters, digits and -._~+/)"
	}
	return ""
}

// readSecretFile reads a file of secrets; errors never quote it.
func readSecretFile(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTokensFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxTokensFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", file, maxTokensFile)
	}
	return data, nil
}

func (v *validator) checkJWT(j *JWTAuth) {
	at := func(k string) []any { return []any{"auth", "jwt", k} }
	for _, f := range []struct{ key, val string }{{"jwks_url", j.JWKSURL}, {"issuer", j.Issuer}, {"audience", j.Audience}} {
		if f.val == "" {
			v.fail("missing", at(f.key)...)
		}
	}
	algsOK := true
	for i, a := range j.Algorithms {
		if !slices.Contains(oauth.DefaultJWTAlgorithms, a) {
			v.fail(fmt.Sprintf("%q is not accepted: use %s", a, strings.Join(oauth.DefaultJWTAlgorithms, ", ")), "auth", "jwt", "algorithms", i)
			algsOK = false
		}
	}
	if j.JWKSURL != "" && j.Issuer != "" && j.Audience != "" && algsOK {
		// What the verifier refuses then is the URL.
		if _, err := oauth.NewJWTVerifier(j.verifierConfig(nil)); err != nil {
			v.fail(strings.TrimPrefix(err.Error(), "bad parameter: JWTConfig: JWKSURL: "), at("jwks_url")...)
		}
	}
	if j.Leeway < 0 {
		v.fail("must not be negative", at("leeway")...)
	}
	for i, s := range j.RequiredScopes {
		if s == "" || strings.ContainsAny(s, " \t\"\\") {
			v.fail(fmt.Sprintf("%q is not a scope", s), "auth", "jwt", "required_scopes", i)
		}
	}
	key := "resource"
	if j.Resource == "" {
		j.Resource, key = j.Audience, "audience"
	}
	if j.Resource != "" {
		if _, err := oauth.ProtectedResourceMetadataURL(j.Resource); err != nil {
			v.fail(fmt.Sprintf("the resource identifier must be the absolute URL of the MCP endpoint: %v", err), at(key)...)
		}
	}
	if len(j.AuthorizationServers) == 0 && j.Issuer != "" {
		j.AuthorizationServers = []string{j.Issuer}
	}
	for i, s := range j.AuthorizationServers {
		if u, err := url.Parse(s); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			v.fail(fmt.Sprintf("%q is not an http(s) URL", s), "auth", "jwt", "authorization_servers", i)
		}
	}
}

// verifierConfig is the configuration of the JWT verifier.
func (j *JWTAuth) verifierConfig(logger *slog.Logger) oauth.JWTConfig {
	return oauth.JWTConfig{
		JWKSURL: j.JWKSURL, Issuer: j.Issuer, Audience: j.Audience,
		Algorithms: j.Algorithms, Leeway: j.Leeway, Logger: logger,
		RequireAccessTokenType: j.RequireAccessTokenType,
	}
}

// metadata is the gateway's protected resource metadata.
func (j *JWTAuth) metadata() *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               j.Resource,
		AuthorizationServers:   j.AuthorizationServers,
		ScopesSupported:        j.RequiredScopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           gatewayName,
	}
}

// checkOAuth checks the oauth section of server i and reads its secret.
func (v *validator) checkOAuth(s *Server, i int) {
	o := s.OAuth
	if o == nil {
		return
	}
	at := func(path ...any) []any { return append([]any{"servers", i, "oauth"}, path...) }
	if u, err := url.Parse(s.URL); s.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		v.fail("OAuth is for http(s) servers", at()...)
		return
	}
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			v.fail("an Authorization header and oauth exclude each other", "servers", i, "headers", k)
		}
	}
	for j, e := range o.Allow {
		if _, err := oauth.NewAllowList(e); err != nil {
			v.fail(strings.TrimPrefix(err.Error(), toolkit.ErrBadParameter.Error()+": "), at("allow", j)...)
		}
	}
	switch o.Grant {
	case "":
		o.Grant = grantAuthorizationCode
	case grantAuthorizationCode, grantClientCredentials, grantTokenExchange, grantEnterprise:
	default:
		v.fail(fmt.Sprintf("%q is not a grant: use %s, %s, %s or %s", o.Grant, grantAuthorizationCode, grantClientCredentials, grantTokenExchange, grantEnterprise), at("grant")...)
		return
	}
	if o.Audience != "" && o.Grant != grantTokenExchange {
		v.fail("goes with grant token_exchange", at("audience")...)
	}
	v.checkEnterprise(o, at)
	checkScopes := func() {
		for j, sc := range o.Scopes {
			if sc == "" || strings.ContainsAny(sc, " \t") {
				v.fail(fmt.Sprintf("%q is not a scope", sc), at("scopes", j)...)
			}
		}
	}
	if o.ClientSecretEnv != "" && o.ClientSecretFile != "" {
		v.fail("give client_secret_env or client_secret_file, not both", at("client_secret_file")...)
	}
	o.secret = ""
	switch {
	case o.ClientSecretEnv != "":
		val, ok := os.LookupEnv(o.ClientSecretEnv)
		if !ok || val == "" {
			v.fail(fmt.Sprintf("environment variable %s is not set", o.ClientSecretEnv), at("client_secret_env")...)
		}
		o.secret = val
	case o.ClientSecretFile != "":
		o.ClientSecretFile = v.abs(o.ClientSecretFile)
		data, err := readSecretFile(o.ClientSecretFile)
		if err != nil {
			v.fail(err.Error(), at("client_secret_file")...)
			break
		}
		first, _, _ := strings.Cut(string(data), "\n")
		if o.secret = strings.TrimSpace(first); o.secret == "" {
			v.fail(fmt.Sprintf("%s holds no secret on its first line", o.ClientSecretFile), at("client_secret_file")...)
		}
	}
	o.ClientID = v.expand(o.ClientID, at("client_id")...)
	if (o.ClientSecretEnv != "" || o.ClientSecretFile != "") && o.ClientID == "" {
		v.fail("a client secret needs its client_id", at("client_id")...)
	}
	if o.Grant == grantClientCredentials {
		if o.ClientID == "" {
			v.fail("missing: the client_credentials grant needs the client's ID", at("client_id")...)
		}
		if o.ClientSecretEnv == "" && o.ClientSecretFile == "" {
			v.fail("missing: the client_credentials grant needs client_secret_env or client_secret_file", at()...)
		}
		for _, k := range []struct {
			key string
			set bool
		}{{"per_user", o.PerUser}, {"scopes", len(o.Scopes) > 0}, {"redirect_url", o.RedirectURL != ""}, {"client_name", o.ClientName != ""}, {"client_metadata_url", o.ClientMetadataURL != ""}, {"no_dynamic_registration", o.NoDynamicRegistration}} {
			if k.set {
				v.fail("goes with grant authorization_code (client_credentials asks for the scopes the server names)", at(k.key)...)
			}
		}
		return
	}
	if o.exchanges() {
		v.checkTokenExchange(s, i)
		checkScopes()
		return
	}
	if o.PerUser {
		if s.UpstreamSessions == "" {
			s.UpstreamSessions = upstreamPerClient
		}
	} else if o.RedirectURL == "" {
		o.RedirectURL = defaultRedirectURL
	}
	if o.ClientMetadataURL != "" {
		if u, err := url.Parse(o.ClientMetadataURL); err != nil || u.Scheme != "https" || u.Host == "" {
			v.fail(fmt.Sprintf("%q is not an https URL", o.ClientMetadataURL), at("client_metadata_url")...)
		}
	}
	if o.ClientID == "" && o.ClientMetadataURL == "" && o.NoDynamicRegistration {
		v.fail("without client_id or client_metadata_url the client must register itself", at("no_dynamic_registration")...)
	}
	checkScopes()
}

// authenticator checks the bearer tokens of downstream clients: the
// configured tokens (replaced on reload), then JWTs.
type authenticator struct {
	logger *slog.Logger
	tokens atomic.Pointer[[]tokenHash]
	jwt    *oauth.JWTVerifier
	scopes []string // granted to a configured token
	meta   *oauthex.ProtectedResourceMetadata
}

// newAuthenticator returns the authenticator of a, or nil without auth.
func newAuthenticator(a *Auth, logger *slog.Logger) (*authenticator, error) {
	if a == nil {
		return nil, nil
	}
	au := &authenticator{logger: logger}
	au.setTokens(nil)
	if a.Bearer != nil {
		au.setTokens(a.Bearer.tokens)
	}
	if j := a.JWT; j != nil {
		v, err := oauth.NewJWTVerifier(j.verifierConfig(logger))
		if err != nil {
			return nil, err
		}
		au.jwt, au.scopes, au.meta = v, j.RequiredScopes, j.metadata()
	}
	return au, nil
}

func (a *authenticator) setTokens(t []tokenHash) {
	t = slices.Clone(t)
	a.tokens.Store(&t)
}

// options are the HTTP options that make the server check tokens.
func (a *authenticator) options(leeway time.Duration) []mcpserver.HTTPOption {
	opts := []mcpserver.HTTPOption{mcpserver.WithBearerAuth(a.verify, &auth.RequireBearerTokenOptions{
		Scopes: a.scopes,
		// Configured tokens do not expire; a JWT without exp is refused
		// by the verifier, which also allows the clock skew.
		AllowMissingExpiration: true,
		ClockSkew:              max(leeway, oauth.DefaultJWTLeeway),
	})}
	if a.meta != nil {
		opts = append(opts, mcpserver.WithProtectedResource(a.meta))
	}
	return opts
}

// The principals of the two ways in are disjoint: a session belongs to the
// principal that opened it, and a JWT whose subject is "token:1" must not
// reach a session opened with the first configured token (nor the reverse).
// The verifier refuses a JWT without a subject.
func configuredPrincipal(i int) string { return fmt.Sprintf("token:%d", i) }
func jwtPrincipal(sub string) string   { return "jwt:" + sub }

// verify is the server's auth.TokenVerifier.
func (a *authenticator) verify(ctx context.Context, token string, req *http.Request) (*auth.TokenInfo, error) {
	h := tokenHash(sha256.Sum256([]byte(token)))
	match := 0
	for i, t := range *a.tokens.Load() {
		// Every token is compared, so the time taken does not tell which.
		if subtle.ConstantTimeCompare(h[:], t[:]) == 1 {
			match = i + 1
		}
	}
	if match > 0 {
		return &auth.TokenInfo{UserID: configuredPrincipal(match), Scopes: a.scopes}, nil
	}
	if a.jwt != nil {
		info, err := a.jwt.Verify(ctx, token, req)
		if err != nil {
			return nil, err
		}
		info.UserID = jwtPrincipal(info.UserID)
		return info, nil
	}
	a.logger.DebugContext(ctx, "bearer token refused", "reason", "not one of the configured tokens")
	return nil, auth.ErrInvalidToken
}

// authorizers are the loopback listeners that receive the redirects of
// the authorization code grant, one per redirect URL, shared by the
// upstreams that name it.
type authorizers struct {
	logger *slog.Logger
	mu     sync.Mutex
	m      map[string]*oauth.LoopbackAuthorizer
	stores map[string]*oauth.FileTokenStore

	callbacks map[string]*oauth.Callback // of per_user upstreams, by path (peruser.go)
	mux       *http.ServeMux             // where they are served, once serving

	// relay, with a state section, carries the callbacks' redirects
	// between replicas; each callback listens to it until close.
	relay     oauth.RedirectRelay
	listening sync.WaitGroup
	stopRelay context.CancelFunc
	relayCtx  context.Context
}

// get returns the authorizer of redirect, starting it if needed.
func (a *authorizers) get(redirect string) (*oauth.LoopbackAuthorizer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if l, ok := a.m[redirect]; ok {
		return l, nil
	}
	l, err := oauth.NewLoopbackAuthorizer(redirect, promptWriter{a.logger, os.Stderr})
	if err != nil {
		return nil, err
	}
	if a.m == nil {
		a.m = map[string]*oauth.LoopbackAuthorizer{}
	}
	a.m[redirect] = l
	return l, nil
}

// store returns the token store in file, one per file.
func (a *authorizers) store(file string) *oauth.FileTokenStore {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.stores[file]; ok {
		return s
	}
	if a.stores == nil {
		a.stores = map[string]*oauth.FileTokenStore{}
	}
	s := oauth.NewFileTokenStore(file)
	a.stores[file] = s
	return s
}

// close stops every listener.
func (a *authorizers) close() {
	a.mu.Lock()
	for _, l := range a.m {
		l.Close()
	}
	clear(a.m)
	if a.stopRelay != nil {
		a.stopRelay()
	}
	a.mu.Unlock()
	a.listening.Wait()
}

// promptWriter shows the person who must authorize an upstream the URL
// to open: the loopback authorizer's text goes to standard error as it
// is (the log would cut the URL's query, where the request is), and a
// log record points at it.
type promptWriter struct {
	logger *slog.Logger
	out    io.Writer
}

func (w promptWriter) Write(p []byte) (int, error) {
	n, err := w.out.Write(p)
	w.logger.Warn("upstream authorization needed: open the URL printed on standard error")
	return n, err
}

// oauthOptions are the connector options of an upstream's oauth section.
func (g *gateway) oauthOptions(s Server) ([]mcp.Option, error) {
	o := s.OAuth
	if o == nil {
		return nil, nil
	}
	var opts []mcp.Option
	if len(o.Allow) > 0 {
		opts = append(opts, mcp.OptOAuthAllow(o.Allow...))
	}
	if o.Grant == grantClientCredentials {
		return append(opts, mcp.OptOAuth(oauth.ClientCredentials(o.ClientID, o.secret))), nil
	}
	if o.exchanges() {
		return append(opts, tokenExchangeOptions(s)...), nil
	}
	if o.PerUser {
		opts, err := g.perUserOptions(s, opts)
		if err != nil {
			return nil, err
		}
		return withAuthorizeTimeout(s, opts), nil
	}
	login, err := g.logins.get(o.RedirectURL)
	if err != nil {
		return nil, err
	}
	cfg := g.authCodeConfig(s)
	cfg.Authorize, cfg.RedirectURL = login.Authorize, login.RedirectURL()
	return withAuthorizeTimeout(s, append(opts, mcp.OptOAuth(oauth.AuthorizationCode(cfg)))), nil
}

// authCodeConfig is the configuration of the authorization code grant of
// upstream s, but for how the person authorizes (Authorize, RedirectURL).
func (g *gateway) authCodeConfig(s Server) oauth.Config {
	o := s.OAuth
	cfg := oauth.Config{
		ClientMetadataURL:     o.ClientMetadataURL,
		ClientID:              o.ClientID,
		ClientSecret:          o.secret,
		ClientName:            cmp.Or(o.ClientName, gatewayName),
		NoDynamicRegistration: o.NoDynamicRegistration,
	}
	if scopes := slices.Clone(o.Scopes); len(scopes) > 0 {
		cfg.Scopes = func([]string) []string { return scopes }
	}
	if tokens := g.tokenStore(s.Name); tokens != nil {
		cfg.Store = tokens
	}
	return cfg
}

// tokenStore is where the tokens of source name go (its users' too): the
// fleet's store, else the file of name under token_dir, else nil (in
// memory).
func (g *gateway) tokenStore(name string) oauth.PrincipalTokenStore {
	if tokens := g.sharedTokens(); tokens != nil {
		return tokens
	}
	if dir := g.config().TokenDir; dir != "" {
		return g.logins.store(tokenFile(dir, name))
	}
	return nil
}

// sharedTokens is the fleet's token store on Redis, or nil without a
// state section.
func (g *gateway) sharedTokens() *redisstate.TokenStore {
	if g.state == nil {
		return nil
	}
	tokens, err := g.state.Tokens() // checked: the state section has keys
	if err != nil {
		return nil
	}
	return tokens
}

// sharedFlights records the users' authorizations in flight for the
// fleet, so that a user is asked once whichever replicas need it, or is
// nil without a state section.
func (g *gateway) sharedFlights() oauth.FlightRegistry {
	if g.state == nil {
		return nil
	}
	flights, err := g.state.Flights() // checked: the state section has keys
	if err != nil {
		return nil
	}
	return flights
}

// withAuthorizeTimeout gives an upstream authorized by a person the time
// to do it when its configuration sets no connect timeout.
func withAuthorizeTimeout(s Server, opts []mcp.Option) []mcp.Option {
	if s.Timeouts.Connect == 0 {
		opts = append(opts, mcp.OptTimeouts(mcp.Timeouts{Connect: authorizeTimeout}))
	}
	return opts
}

// tokenFile is the file of the tokens of the upstream name under dir.
func tokenFile(dir, name string) string {
	return filepath.Join(dir, name+".json")
}

// reloadAuth applies the auth section of a reloaded configuration: the
// bearer tokens are replaced; other changes need a restart.
func (g *gateway) reloadAuth(cur, next *Config) {
	if cur.TokenDir != next.TokenDir {
		g.logger.Warn("configuration change needs a restart; ignored", "field", "token_dir")
	}
	if (cur.Auth == nil) != (next.Auth == nil) || g.auth == nil {
		if cur.Auth != nil || next.Auth != nil {
			g.logger.Warn("configuration change needs a restart; ignored", "field", "auth")
		}
		next.Auth = cur.Auth
		return
	}
	if !reflect.DeepEqual(cur.Auth.JWT, next.Auth.JWT) {
		g.logger.Warn("configuration change needs a restart; ignored", "field", "auth.jwt")
		next.Auth.JWT = cur.Auth.JWT
	}
	if (cur.Auth.Bearer == nil) != (next.Auth.Bearer == nil) {
		g.logger.Warn("configuration change needs a restart; ignored", "field", "auth.bearer")
		next.Auth.Bearer = cur.Auth.Bearer
		return
	}
	if b := next.Auth.Bearer; b != nil {
		g.auth.setTokens(b.tokens)
		g.logger.Info("bearer tokens reloaded", "tokens", len(b.tokens))
	}
}

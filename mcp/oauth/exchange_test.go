package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit/internal/testing/oauthtest"
)

// exchangeSetup is an identity provider that issued the users' access
// tokens (to the gateway), an authorization server that trusts it, an MCP
// server that takes the authorization server's tokens, and a handler of
// token exchange for that server, on a fake clock.
type exchangeSetup struct {
	idp, as *oauthtest.Issuer
	rs      *resourceServer
	h       *Handler
	logs    *lockedBuffer
	clock   *fakeClock
	users   sync.Map // user → token
}

func newExchangeSetup(t *testing.T, cfg TokenExchangeConfig) *exchangeSetup {
	t.Helper()
	s := &exchangeSetup{idp: oauthtest.NewIssuer(t), as: oauthtest.NewIssuer(t), logs: &lockedBuffer{}, clock: newFakeClock()}
	s.as.TrustIdP(s.idp)
	s.as.Register("gateway", oauthtest.Client{Secret: "secret-gateway"})
	s.rs = newResourceServer(t, s.as)
	if cfg.ClientID == "" {
		cfg.ClientID, cfg.ClientSecret = "gateway", "secret-gateway"
	}
	flow, err := TokenExchange(cfg)
	mustNotErr(t, err)
	allow, err := NewAllowList(s.as.URL)
	mustNotErr(t, err)
	s.h = NewHandler(context.Background(), flow, HandlerConfig{
		Resource: s.rs.URL + "/mcp", Allow: allow,
		Logger: slog.New(slog.NewTextHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	s.h.clock = s.clock
	return s
}

// userToken returns the access token the IdP issued to the gateway for
// user (always the same one).
func (s *exchangeSetup) userToken(user string) string {
	if tok, ok := s.users.Load(user); ok {
		return tok.(string)
	}
	c := s.idp.Claims("gateway")
	c["sub"], c["jti"] = user, "idp-"+user
	tok, _ := s.users.LoadOrStore(user, s.idp.Sign("rsa-1", c))
	return tok.(string)
}

// session connects to the MCP server for the user whose token ctx
// carries.
func (s *exchangeSetup) session(ctx context.Context) (*sdk.ClientSession, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "gateway", Version: "1"}, nil)
	return client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: s.rs.URL + "/mcp", OAuthHandler: s.h, MaxRetries: -1}, nil)
}

// whoami returns the subject the MCP server saw in the session's token.
func whoami(ctx context.Context, cs *sdk.ClientSession) (string, error) {
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		return "", err
	}
	return res.Content[0].(*sdk.TextContent).Text, nil
}

// subjectOfToken returns the sub of a JWT, unverified.
func subjectOfToken(t *testing.T, tok string) string {
	t.Helper()
	j, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256})
	mustNotErr(t, err)
	var c jwt.Claims
	mustNotErr(t, j.UnsafeClaimsWithoutVerification(&c))
	return c.Subject
}

// tokenFor returns the token the handler's source gives for the user
// whose token ctx carries, or nil.
func (s *exchangeSetup) tokenFor(t *testing.T, ctx context.Context) string {
	t.Helper()
	ts, err := s.h.TokenSource(ctx)
	mustNotErr(t, err)
	tok, err := ts.Token()
	mustNotErr(t, err)
	if tok == nil {
		return ""
	}
	return tok.AccessToken
}

// noSecrets fails the test if the log or the texts given show a token or
// a secret.
func (s *exchangeSetup) noSecrets(t *testing.T, texts ...string) {
	t.Helper()
	for _, text := range append(texts, s.logs.String()) {
		if strings.Contains(text, "secret-") || strings.Contains(text, "eyJ") {
			t.Errorf("a secret leaked:\n%s", text)
		}
		s.users.Range(func(_, tok any) bool {
			if strings.Contains(text, tok.(string)[:40]) {
				t.Errorf("a user's token leaked:\n%s", text)
			}
			return true
		})
	}
}

// TestTokenExchange: the user's own access token is exchanged once for a
// token of the MCP server, which sees the user as its subject; the
// request carried requested_token_type access_token, the resource and
// the audience, with client_secret_basic.
func TestTokenExchange(t *testing.T) {
	leakCheck(t)
	s := newExchangeSetup(t, TokenExchangeConfig{Audience: "mcp-tools", Scopes: []string{"tools"}})
	ctx, cancel := context.WithTimeout(WithSubjectToken(context.Background(), s.userToken("alice"), ""), waitLimit)
	defer cancel()
	cs, err := s.session(ctx)
	mustNotErr(t, err)
	defer cs.Close()
	for range 3 {
		who, err := whoami(ctx, cs)
		if err != nil || who != "alice" {
			t.Fatalf("whoami = %q, %v; want alice", who, err)
		}
	}
	if n := s.as.Exchanges(); n != 1 {
		t.Fatalf("%d exchanges, want 1", n)
	}
	reqs := s.as.ExchangeRequests()
	want := oauthtest.ExchangeRequest{ClientID: "gateway", AuthMethod: "client_secret_basic", SubjectTokenType: TokenTypeAccessToken,
		RequestedTokenType: TokenTypeAccessToken, Resource: s.rs.URL + "/mcp", Audience: "mcp-tools", Scope: "tools", Subject: "alice"}
	if len(reqs) != 1 || reqs[0] != want {
		t.Fatalf("exchange requests %+v, want %+v", reqs, want)
	}
	s.noSecrets(t)
}

// TestTokenExchangeSubjects: two users at once each get their own token
// and the server sees each as its subject; neither is ever served the
// other's, and a third user is served none before an exchange of their
// own.
func TestTokenExchangeSubjects(t *testing.T) {
	leakCheck(t)
	s := newExchangeSetup(t, TokenExchangeConfig{})
	base, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	users := []string{"alice", "bob"}
	errs := make(chan error, len(users))
	for _, u := range users {
		go func() {
			ctx := WithSubjectToken(base, s.userToken(u), TokenTypeAccessToken)
			cs, err := s.session(ctx)
			if err != nil {
				errs <- err
				return
			}
			for range 3 {
				var who string
				who, err = whoami(ctx, cs)
				if err == nil && who != u {
					err = fmt.Errorf("%s's session is %s's", u, who)
				}
				if err != nil {
					break
				}
			}
			cs.Close() // before the test ends
			errs <- err
		}()
	}
	for range users {
		mustNotErr(t, <-errs)
	}
	tokens := map[string]bool{}
	for _, u := range users {
		if n := s.as.ExchangesFor(u); n != 1 {
			t.Errorf("%d exchanges for %s, want 1", n, u)
		}
		tok := s.tokenFor(t, WithSubjectToken(base, s.userToken(u), ""))
		if got := subjectOfToken(t, tok); got != u {
			t.Errorf("%s is served %s's token", u, got)
		}
		tokens[tok] = true
	}
	if len(tokens) != 2 {
		t.Fatalf("the users share a token")
	}
	if tok := s.tokenFor(t, WithSubjectToken(base, s.userToken("carol"), "")); tok != "" {
		t.Fatalf("carol is served %s's token", subjectOfToken(t, tok))
	}
	if tok := s.tokenFor(t, base); tok != "" {
		t.Fatal("a request without a subject is served a token")
	}
	s.noSecrets(t)
}

// TestTokenExchangeExpiry: a token about to expire is exchanged again
// before it is sent, with the session's context (the call's carries no
// subject): the server never refuses it.
func TestTokenExchangeExpiry(t *testing.T) {
	leakCheck(t)
	s := newExchangeSetup(t, TokenExchangeConfig{})
	bg, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	ctx := WithSubjectToken(bg, s.userToken("alice"), "")
	cs, err := s.session(ctx)
	mustNotErr(t, err)
	defer cs.Close()
	first := s.tokenFor(t, ctx)
	s.clock.Advance(time.Hour - 5*time.Second) // within the refresh margin
	who, err := whoami(bg, cs)
	if err != nil || who != "alice" {
		t.Fatalf("whoami = %q, %v; want alice", who, err)
	}
	if n := s.as.ExchangesFor("alice"); n != 2 {
		t.Fatalf("%d exchanges, want 2", n)
	}
	if tok := s.tokenFor(t, ctx); tok == "" || tok == first {
		t.Fatal("the token was not exchanged again")
	}
	if n := s.rs.refused.Load(); n != 0 {
		t.Fatalf("the server refused %d tokens", n)
	}
}

// TestTokenExchangeRevoked: a token the server refuses before its expiry
// is exchanged again, for the subject it was obtained for when the
// call's context carries none.
func TestTokenExchangeRevoked(t *testing.T) {
	leakCheck(t)
	s := newExchangeSetup(t, TokenExchangeConfig{})
	bg, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	cs, err := s.session(WithSubjectToken(bg, s.userToken("alice"), ""))
	mustNotErr(t, err)
	defer cs.Close()
	s.as.RevokeAccessTokens()
	if who, err := whoami(bg, cs); err != nil || who != "alice" {
		t.Fatalf("whoami = %q, %v; want alice", who, err)
	}
	if n := s.as.ExchangesFor("alice"); n != 2 {
		t.Fatalf("%d exchanges, want 2", n)
	}
}

// TestTokenExchangeRefused: a subject token the authorization server
// does not accept fails the request with ErrExchangeRefused and its
// invalid_grant, quoting no token; the failure is remembered for a few
// seconds (no new request to the server), then tried again. Another
// user meanwhile is not held up.
func TestTokenExchangeRefused(t *testing.T) {
	leakCheck(t)
	s := newExchangeSetup(t, TokenExchangeConfig{})
	stranger := oauthtest.NewIssuer(t) // an IdP the server does not trust
	c := stranger.Claims("gateway")
	c["sub"] = "mallory"
	bad := stranger.Sign("rsa-1", c)
	s.users.Store("mallory", bad)
	ctx, cancel := context.WithTimeout(WithSubjectToken(context.Background(), bad, ""), waitLimit)
	defer cancel()
	_, err1 := s.session(ctx)
	var se *ServerError
	if !errors.Is(err1, ErrExchangeRefused) || !errors.As(err1, &se) || se.Code != "invalid_grant" {
		t.Fatalf("connect = %v, want ErrExchangeRefused with invalid_grant", err1)
	}
	_, err2 := s.session(ctx)
	if !errors.Is(err2, ErrExchangeRefused) || s.as.ExchangesRefused() != 1 {
		t.Fatalf("again: %v, %d refused; want the failure remembered", err2, s.as.ExchangesRefused())
	}
	actx := WithSubjectToken(ctx, s.userToken("alice"), "")
	cs, err := s.session(actx)
	mustNotErr(t, err)
	if who, err := whoami(actx, cs); err != nil || who != "alice" {
		t.Fatalf("whoami = %q, %v; want alice", who, err)
	}
	cs.Close()
	s.clock.Advance(failedExchangeWait)
	if _, err := s.session(ctx); !errors.Is(err, ErrExchangeRefused) || s.as.ExchangesRefused() != 2 {
		t.Fatalf("after the wait: %v, %d refused; want a new attempt", err, s.as.ExchangesRefused())
	}
	if !strings.Contains(s.logs.String(), "token exchange failed") {
		t.Errorf("the failure was not logged:\n%s", s.logs)
	}
	s.noSecrets(t, err1.Error(), err2.Error())
}

// TestTokenExchangeNoSubject: a request whose context carries no subject
// token fails with a clear error, and nothing is exchanged.
func TestTokenExchangeNoSubject(t *testing.T) {
	leakCheck(t)
	s := newExchangeSetup(t, TokenExchangeConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if _, err := s.session(ctx); err == nil || !strings.Contains(err.Error(), "no subject token") {
		t.Fatalf("connect = %v, want an error saying there is no subject token", err)
	}
	if n := len(s.as.ExchangeRequests()); n != 0 {
		t.Fatalf("%d exchange requests, want none", n)
	}
}

// TestTokenExchangeOptions: configurations that cannot work are refused.
func TestTokenExchangeOptions(t *testing.T) {
	for _, cfg := range []TokenExchangeConfig{
		{},
		{ClientID: "a", AuthMethod: "private_key_jwt"},
		{ClientID: "a", AuthMethod: AuthMethodNone, ClientSecret: "s"},
		{ClientID: "a", AuthMethod: AuthMethodClientSecretPost},
	} {
		if _, err := TokenExchange(cfg); err == nil {
			t.Errorf("TokenExchange(%+v) = nil error", cfg)
		}
	}
}

// fakeAS is an MCP server at /mcp that takes bearer tokens "at-<user>"
// (and answers the token), its resource metadata, and its authorization
// server's metadata on the same origin, whose token endpoint the test
// writes.
type fakeAS struct {
	*httptest.Server
	tokenEndpoint string   // in the metadata (default URL/token)
	authMethods   []string // token_endpoint_auth_methods_supported, if any
	hits          atomic.Int32
}

func newFakeAS(t *testing.T, token http.HandlerFunc) *fakeAS {
	t.Helper()
	s := &fakeAS{}
	mux := http.NewServeMux()
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	s.tokenEndpoint = s.URL + "/token"
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer at-"); ok {
			_, _ = io.WriteString(w, tok)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer scope="tools", resource_metadata="`+s.URL+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"resource": s.URL + "/mcp", "authorization_servers": []string{s.URL}, "scopes_supported": []string{"tools", "admin"}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		m := map[string]any{"issuer": s.URL, "token_endpoint": s.tokenEndpoint,
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"}}
		if s.authMethods != nil {
			m["token_endpoint_auth_methods_supported"] = s.authMethods
		}
		writeJSON(w, http.StatusOK, m)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		_ = r.ParseForm() // so that the request's context ends when the client hangs up
		token(w, r)
	})
	return s
}

// handler returns a handler of flow for the server's /mcp, logging to
// logs.
func (s *fakeAS) handler(t *testing.T, flow *Flow, logs io.Writer, allow ...string) *Handler {
	t.Helper()
	l, err := NewAllowList(allow...)
	mustNotErr(t, err)
	return NewHandler(context.Background(), flow, HandlerConfig{Resource: s.URL + "/mcp", Allow: l,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
}

// get sends GET /mcp through an oauth.Transport of h for the user whose
// token ctx carries, and returns the body.
func (s *fakeAS) get(ctx context.Context, h *Handler) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/mcp", nil)
	if err != nil {
		return "", err
	}
	resp, err := (&http.Client{Transport: &Transport{Handler: h}}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s", resp.Status)
	}
	return string(b), err
}

// exchangeAnswer answers a token exchange with "at-" and the subject
// token's part after "tok-".
func exchangeAnswer(w http.ResponseWriter, r *http.Request) {
	user, _ := strings.CutPrefix(r.PostFormValue("subject_token"), "secret-tok-")
	writeJSON(w, http.StatusOK, map[string]any{"access_token": "at-" + user, "token_type": "bearer",
		"issued_token_type": TokenTypeAccessToken, "expires_in": 3600})
}

// TestTokenExchangeHostile: what a hostile authorization server answers
// is bounded or refused, and quotes no secret.
func TestTokenExchangeHostile(t *testing.T) {
	leakCheck(t)
	cases := []struct {
		name    string
		token   http.HandlerFunc
		cfg     TokenExchangeConfig
		want    error
		says    string
		setup   func(t *testing.T, s *fakeAS) []string // allowed destinations
		checkAS func(t *testing.T, s *fakeAS)
	}{{
		name: "huge answer",
		token: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"token_type":"Bearer","access_token":"`)
			chunk := strings.Repeat("a", 64<<10)
			for range 160 { // 10 MiB, or until the client hangs up
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
			}
			_, _ = io.WriteString(w, `"}`)
		},
		want: ErrExchangeRefused, says: "larger than 65536 bytes",
	}, {
		name: "slow",
		token: func(_ http.ResponseWriter, r *http.Request) {
			<-r.Context().Done() // the client gives up
		},
		cfg:  TokenExchangeConfig{Timeout: 100 * time.Millisecond},
		want: context.DeadlineExceeded,
	}, {
		name: "redirect",
		setup: func(t *testing.T, s *fakeAS) []string {
			other := newCounting(t, false)
			s.Config.Handler.(*http.ServeMux).HandleFunc("POST /moved", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other.URL+"/token", http.StatusTemporaryRedirect)
			})
			s.tokenEndpoint = s.URL + "/moved"
			t.Cleanup(func() {
				if n := other.n.Load(); n != 0 {
					t.Errorf("the redirect was followed (%d requests)", n)
				}
			})
			return []string{other.URL}
		},
		want: ErrExchangeRefused, says: "307 Temporary Redirect",
	}, {
		name: "private token endpoint",
		setup: func(t *testing.T, s *fakeAS) []string {
			s.tokenEndpoint = "https://10.1.2.3/token"
			return nil
		},
		says: "non-public address", // the SDK's own check
	}, {
		name: "token endpoint elsewhere on the loopback",
		setup: func(t *testing.T, s *fakeAS) []string {
			other := newCounting(t, false)
			s.tokenEndpoint = other.URL + "/token"
			t.Cleanup(func() {
				if n := other.n.Load(); n != 0 {
					t.Errorf("the token endpoint was reached (%d requests)", n)
				}
			})
			return nil
		},
		want: ErrDestinationRefused, says: "not https",
	}, {
		name: "echoes the secrets",
		token: func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant",
				"error_description": "refused " + r.PostFormValue("subject_token")[3:] + " of " + r.PostFormValue("client_secret")})
		},
		cfg:  TokenExchangeConfig{AuthMethod: AuthMethodClientSecretPost},
		want: ErrExchangeRefused, says: "invalid_grant",
	}, {
		name: "not a bearer token",
		token: func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, map[string]any{"access_token": "at-x", "token_type": "N_A", "issued_token_type": oauthex.TokenTypeIDJAG})
		},
		want: ErrExchangeRefused, says: "not Bearer",
	}, {
		name: "an ID-JAG",
		token: func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, map[string]any{"access_token": "at-x", "token_type": "Bearer", "issued_token_type": oauthex.TokenTypeIDJAG})
		},
		want: ErrExchangeRefused, says: "not an access token",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			token := tc.token
			if token == nil {
				token = exchangeAnswer
			}
			s := newFakeAS(t, token)
			var allow []string
			if tc.setup != nil {
				allow = tc.setup(t, s)
			}
			cfg := tc.cfg
			cfg.ClientID, cfg.ClientSecret = "gateway", "secret-client"
			flow, err := TokenExchange(cfg)
			mustNotErr(t, err)
			logs := &lockedBuffer{}
			h := s.handler(t, flow, logs, allow...)
			ctx, cancel := context.WithTimeout(WithSubjectToken(context.Background(), "secret-tok-alice", ""), waitLimit)
			defer cancel()
			body, err := s.get(ctx, h)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(fmt.Sprint(err), tc.says) {
				t.Fatalf("get = %q, %v; want %v saying %q", body, err, tc.want, tc.says)
			}
			if ctx.Err() != nil {
				t.Fatal("the request was not bounded")
			}
			for _, text := range []string{err.Error(), logs.String()} {
				if strings.Contains(text, "secret-") || strings.Contains(text, "tok-alice") || strings.Contains(text, "aaaaaaaa") {
					t.Errorf("a secret or the answer leaked: %s", text)
				}
			}
		})
	}
}

// TestTokenExchangeAuthMethods: the client authenticates as configured,
// or as the server's metadata allows.
func TestTokenExchangeAuthMethods(t *testing.T) {
	leakCheck(t)
	for _, tc := range []struct {
		cfg     TokenExchangeConfig
		methods []string // the server's
		want    string
	}{
		{TokenExchangeConfig{ClientID: "a b", ClientSecret: "s:1"}, nil, "basic a b s:1"},
		{TokenExchangeConfig{ClientID: "a", ClientSecret: "s", AuthMethod: AuthMethodClientSecretPost}, nil, "post a s"},
		{TokenExchangeConfig{ClientID: "a", ClientSecret: "s"}, []string{"private_key_jwt", "client_secret_post"}, "post a s"},
		{TokenExchangeConfig{ClientID: "a", ClientSecret: "s"}, []string{"client_secret_post", "client_secret_basic"}, "basic a s"},
		{TokenExchangeConfig{ClientID: "a"}, nil, "none a"},
	} {
		var got atomic.Pointer[string]
		s := newFakeAS(t, func(w http.ResponseWriter, r *http.Request) {
			var how string
			if id, secret, ok := r.BasicAuth(); ok {
				how = "basic " + unescape(id) + " " + unescape(secret)
			} else if _, ok := r.PostForm["client_secret"]; ok {
				how = "post " + r.PostFormValue("client_id") + " " + r.PostFormValue("client_secret")
			} else {
				how = "none " + r.PostFormValue("client_id")
			}
			got.Store(&how)
			exchangeAnswer(w, r)
		})
		s.authMethods = tc.methods
		flow, err := TokenExchange(tc.cfg)
		mustNotErr(t, err)
		h := s.handler(t, flow, io.Discard)
		ctx := WithSubjectToken(context.Background(), "secret-tok-bob", "")
		if body, err := s.get(ctx, h); err != nil || body != "bob" {
			t.Fatalf("get = %q, %v", body, err)
		}
		if p := got.Load(); p == nil || *p != tc.want {
			t.Errorf("%+v authenticated as %v, want %q", tc.cfg, p, tc.want)
		}
	}
}

func unescape(s string) string {
	u, _ := url.QueryUnescape(s)
	return u
}

// TestTokenExchangeOneAtATime: the requests of one subject share one
// exchange; a subject whose exchange hangs holds up no other.
func TestTokenExchangeOneAtATime(t *testing.T) {
	leakCheck(t)
	release := make(chan struct{})
	var slowStarted sync.Once
	started := make(chan struct{})
	s := newFakeAS(t, func(w http.ResponseWriter, r *http.Request) {
		if r.PostFormValue("subject_token") == "secret-tok-slow" {
			slowStarted.Do(func() { close(started) })
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		exchangeAnswer(w, r)
	})
	flow, err := TokenExchange(TokenExchangeConfig{ClientID: "a"})
	mustNotErr(t, err)
	h := s.handler(t, flow, io.Discard)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	slow := WithSubjectToken(ctx, "secret-tok-slow", "")
	const n = 8
	done := make(chan error, n)
	for range n {
		go func() {
			body, err := s.get(slow, h)
			if err == nil && body != "slow" {
				err = fmt.Errorf("got %q", body)
			}
			done <- err
		}()
	}
	<-started
	// Meanwhile another user is served at once.
	if body, err := s.get(WithSubjectToken(ctx, "secret-tok-fast", ""), h); err != nil || body != "fast" {
		t.Fatalf("fast get = %q, %v", body, err)
	}
	close(release)
	for range n {
		mustNotErr(t, <-done)
	}
	if hits := s.hits.Load(); hits != 2 {
		t.Fatalf("%d token requests, want 2 (one per subject)", hits)
	}
}

// TestTokenExchangeMaxSubjects: past MaxSubjects, the tokens expiring
// soonest go; the handler keeps no more.
func TestTokenExchangeMaxSubjects(t *testing.T) {
	leakCheck(t)
	var life atomic.Int32
	life.Store(3600)
	s := newFakeAS(t, func(w http.ResponseWriter, r *http.Request) {
		user, _ := strings.CutPrefix(r.PostFormValue("subject_token"), "secret-tok-")
		writeJSON(w, http.StatusOK, map[string]any{"access_token": "at-" + user, "token_type": "Bearer", "expires_in": life.Add(10)})
	})
	flow, err := TokenExchange(TokenExchangeConfig{ClientID: "a", MaxSubjects: 3})
	mustNotErr(t, err)
	h := s.handler(t, flow, io.Discard)
	ctx := context.Background()
	for i := range 5 {
		user := fmt.Sprint("u", i)
		if body, err := s.get(WithSubjectToken(ctx, "secret-tok-"+user, ""), h); err != nil || body != user {
			t.Fatalf("get = %q, %v", body, err)
		}
	}
	sh := h.inner.(*subjectHandler)
	sh.mu.Lock()
	kept := len(sh.tokens)
	sh.mu.Unlock()
	if kept != 3 {
		t.Fatalf("%d subjects kept, want 3", kept)
	}
	// u0 and u1 had the tokens expiring soonest.
	for i, want := range []bool{false, false, true, true, true} {
		ts, _ := h.TokenSource(WithSubjectToken(ctx, fmt.Sprint("secret-tok-u", i), ""))
		tok, _ := ts.Token()
		if (tok != nil) != want {
			t.Errorf("u%d kept: %v, want %v", i, tok != nil, want)
		}
	}
}

// TestEnterprisePerUser: enterprise-managed authorization gets each
// user's token with that user's ID token, and never serves one user's
// token for another.
func TestEnterprisePerUser(t *testing.T) {
	leakCheck(t)
	var idp, jwtBearer atomic.Int32
	var s *fakeAS
	s = newFakeAS(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.PostFormValue("grant_type") {
		case oauthex.GrantTypeTokenExchange: // the IdP (same origin)
			idp.Add(1)
			user, ok := strings.CutPrefix(r.PostFormValue("subject_token"), "secret-id-")
			if !ok || r.PostFormValue("audience") != s.URL || r.PostFormValue("resource") != s.URL+"/mcp" {
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": "no " + r.PostFormValue("subject_token")})
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{"access_token": "jag-" + user, "token_type": "N_A", "issued_token_type": oauthex.TokenTypeIDJAG})
		case grantTypeJWTBearer:
			jwtBearer.Add(1)
			user, _ := strings.CutPrefix(r.PostFormValue("assertion"), "jag-")
			writeJSON(w, http.StatusOK, map[string]any{"access_token": "at-" + user, "token_type": "Bearer", "expires_in": 3600})
		}
	})
	idToken := func(ctx context.Context) (string, error) {
		tok, _, err := SubjectTokenFromContext(ctx)
		return tok, err
	}
	flow, err := Enterprise(EnterpriseConfig{IDToken: idToken, IdPTokenURL: s.URL + "/token", IdPClientID: "idp-client", ClientID: "c", ClientSecret: "secret-c"})
	mustNotErr(t, err)
	logs := &lockedBuffer{}
	h := s.handler(t, flow, logs)
	ctx := context.Background()
	for range 2 {
		for _, u := range []string{"alice", "bob"} {
			if body, err := s.get(WithSubjectToken(ctx, "secret-id-"+u, ""), h); err != nil || body != u {
				t.Fatalf("%s: get = %q, %v", u, body, err)
			}
		}
	}
	if idp.Load() != 2 || jwtBearer.Load() != 2 {
		t.Fatalf("%d exchanges at the IdP and %d grants, want 2 and 2", idp.Load(), jwtBearer.Load())
	}
	_, err = s.get(WithSubjectToken(ctx, "secret-xx-mallory", ""), h)
	var se *ServerError
	if !errors.Is(err, ErrExchangeRefused) || !errors.As(err, &se) || se.Code != "invalid_grant" || strings.Contains(err.Error(), "secret-") {
		t.Fatalf("mallory: %v, want ErrExchangeRefused with invalid_grant and no token", err)
	}
	if out := logs.String(); strings.Contains(out, "secret-") || strings.Contains(out, "jag-") {
		t.Errorf("a secret reached the log:\n%s", out)
	}
}

// FuzzParseExchangeAnswer: no answer panics the parser; what it accepts
// is a Bearer token that can go in a header, with a bounded expiry.
func FuzzParseExchangeAnswer(f *testing.F) {
	for _, seed := range []string{
		`{"access_token":"at","token_type":"Bearer","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","expires_in":3600}`,
		`{"access_token":"at","token_type":"bearer"}`,
		`{"access_token":"at","token_type":"N_A","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag"}`,
		`{"access_token":"a t\r\nX-Evil: 1","token_type":"Bearer"}`,
		`{"access_token":"at","token_type":"Bearer","expires_in":1e308}`,
		`{"access_token":"at","token_type":"Bearer","expires_in":-1}`,
		`{"access_token":"at","token_type":"Bearer","expires_in":"3600"}`,
		`{"access_token":["at"],"token_type":{"a":1}}`,
		`{"access_token":"at","token_type":"Bearer","scope":"` + strings.Repeat("s ", 5000) + `"}`,
		`[]`, `null`, `"at"`, ``, `{`, `{"access_token":"\u0000"}`,
	} {
		f.Add([]byte(seed))
	}
	now := time.Unix(1_800_000_000, 0)
	f.Fuzz(func(t *testing.T, body []byte) {
		tok, err := parseExchangeAnswer(body, now)
		if err != nil {
			if tok != nil {
				t.Fatal("a token with an error")
			}
			if strings.Contains(err.Error(), string(body)) && len(body) > 8 {
				t.Fatalf("the error quotes the answer: %v", err)
			}
			return
		}
		if tok.AccessToken == "" || !printableASCII(tok.AccessToken) || tok.TokenType != "Bearer" {
			t.Fatalf("accepted %+v", tok)
		}
		if !tok.Expiry.IsZero() && (!tok.Expiry.After(now) || tok.Expiry.After(now.Add(maxExpiresIn*time.Second))) {
			t.Fatalf("expiry %v out of bounds", tok.Expiry)
		}
	})
}

// TestTokenExchangeStop: Stop ends the exchanges in flight, and the
// requests waiting for them fail.
func TestTokenExchangeStop(t *testing.T) {
	leakCheck(t)
	started := make(chan struct{})
	s := newFakeAS(t, func(_ http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	})
	flow, err := TokenExchange(TokenExchangeConfig{ClientID: "a"})
	mustNotErr(t, err)
	h := s.handler(t, flow, io.Discard)
	ctx, cancel := context.WithTimeout(WithSubjectToken(context.Background(), "secret-tok-alice", ""), waitLimit)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.get(ctx, h)
		done <- err
	}()
	<-started
	h.Stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("get = %v, want the exchange canceled", err)
	}
}

// TestTokenExchangeScopes: the exchange asks for the scopes of the
// server's challenge, and for the same ones when the token is exchanged
// again before it expires (no challenge then).
func TestTokenExchangeScopes(t *testing.T) {
	leakCheck(t)
	var mu sync.Mutex
	var asked []string
	s := newFakeAS(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.PostFormValue("scope"))
		mu.Unlock()
		exchangeAnswer(w, r)
	})
	flow, err := TokenExchange(TokenExchangeConfig{ClientID: "a"})
	mustNotErr(t, err)
	h := s.handler(t, flow, io.Discard)
	clock := newFakeClock()
	h.clock = clock
	ctx := WithSubjectToken(context.Background(), "secret-tok-alice", "")
	for range 2 {
		if body, err := s.get(ctx, h); err != nil || body != "alice" {
			t.Fatalf("get = %q, %v", body, err)
		}
		clock.Advance(time.Hour)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || asked[0] != "tools" || asked[1] != "tools" {
		t.Fatalf("scopes asked %q, want tools twice", asked)
	}
}

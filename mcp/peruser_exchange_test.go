package mcp_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/oauthtest"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/mcpserver"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// exchangeClient is the client the gateway exchanges its users' tokens
// as.
const exchangeClient = "gateway-exchange"

// lockedBuffer is a log destination for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// exchangeGateway serves over HTTP, at url+"/mcp", a toolkit whose
// connector "up" exchanges each user's access token for an upstream
// token; the users' tokens are JWTs of idp (or of stranger, which the
// gateway accepts too but the upstream's authorization server does not
// trust) whose sub is the principal.
type exchangeGateway struct {
	url           string
	idp, stranger *oauthtest.Issuer
	logs          *lockedBuffer
}

func startExchangeGateway(t *testing.T, up *userUpstream) *exchangeGateway {
	t.Helper()
	return startUsersGateway(t, up, func(*exchangeGateway) mcp.Option {
		return mcp.OptOAuthPerUser(mcp.UserTokenExchange(oauth.TokenExchangeConfig{ClientID: exchangeClient, ClientSecret: "exchange-secret-1"}))
	})
}

// startUsersGateway is startExchangeGateway with the per-user option
// perUser gives.
func startUsersGateway(t *testing.T, up *userUpstream, perUser func(*exchangeGateway) mcp.Option) *exchangeGateway {
	t.Helper()
	g := &exchangeGateway{idp: oauthtest.NewIssuer(t), stranger: oauthtest.NewIssuer(t), logs: &lockedBuffer{}}
	up.iss.TrustIdP(g.idp)
	up.iss.Register(exchangeClient, oauthtest.Client{Secret: "exchange-secret-1"})
	g.idp.Register(exchangeClient, oauthtest.Client{Secret: "exchange-secret-1"})
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	g.url = hs.URL
	d, err := mcp.NewDelegate("gateway", "1",
		mcp.OptLogger(slog.New(slog.NewTextHandler(g.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		mcp.OptOAuth(oauth.ClientCredentials(gatewayClient, "gateway-secret-1")),
		mcp.OptOAuthAllow(up.iss.URL, g.idp.URL),
		perUser(g),
	)
	mustNotErr(t, err)
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	mustNotErr(t, err)
	srv, err := mcpserver.New(tk, nil, mcpserver.WithClientSessions(d))
	mustNotErr(t, err)
	var verifiers []*oauth.JWTVerifier
	for _, iss := range []*oauthtest.Issuer{g.idp, g.stranger} {
		v, err := oauth.NewJWTVerifier(oauth.JWTConfig{JWKSURL: iss.JWKSURL(), Issuer: iss.URL, Audience: g.url + "/mcp"})
		mustNotErr(t, err)
		verifiers = append(verifiers, v)
	}
	verify := func(ctx context.Context, tok string, r *http.Request) (*auth.TokenInfo, error) {
		for _, v := range verifiers {
			if info, err := v.Verify(ctx, tok, r); err == nil {
				return info, nil
			}
		}
		return nil, auth.ErrInvalidToken
	}
	authed, err := srv.Handler(mcpserver.WithBearerAuth(verify, nil))
	mustNotErr(t, err)
	mux.Handle("/mcp", authed)
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tk.Run(ctx) }()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		srv.Close()
		hs.Close()
		cancel()
		if err := <-runDone; err != nil {
			t.Error(err)
		}
	})
	changed := make(chan struct{}, 1)
	probe := g.connect(t, g.token(g.idp, "probe"), sdk.NewClient(&sdk.Implementation{Name: "probe", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	}))
	mustNotErr(t, tk.AddConnectorNS("up", up.URL+"/mcp"))
	for {
		<-changed
		res, err := probe.ListTools(context.Background(), nil)
		mustNotErr(t, err)
		if slices.ContainsFunc(res.Tools, func(tl *sdk.Tool) bool { return tl.Name == "whoami" }) {
			break
		}
	}
	probe.Close()
	return g
}

// token returns an access token of iss for the gateway, whose sub is
// user; each is new (its own jti).
func (g *exchangeGateway) token(iss *oauthtest.Issuer, user string) string {
	c := iss.Claims(g.url + "/mcp")
	c["sub"], c["jti"] = user, rand.Text()
	return iss.Sign("rsa-1", c)
}

// connect connects c with the bearer token tok.
func (g *exchangeGateway) connect(t *testing.T, tok string, c *sdk.Client) *sdk.ClientSession {
	t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: g.url + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{tok, http.DefaultTransport}}}
	cs, err := c.Connect(context.Background(), tr, &sdk.ClientSessionOptions{ProtocolVersion: mcp.StatefulProtocolVersion})
	mustNotErr(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// usersActAsThemselves has alice and bob, with tokens of g's IdP, call
// whoami twice each: each is answered as themselves, with one exchange
// (or grant redeemed) each at up's authorization server, and nobody is
// asked to authorize.
func (g *exchangeGateway) usersActAsThemselves(t *testing.T, up *userUpstream) {
	t.Helper()
	alice, bob := newURLUser("alice"), newURLUser("bob")
	as := g.connect(t, g.token(g.idp, "alice"), alice.Client)
	bs := g.connect(t, g.token(g.idp, "bob"), bob.Client)
	for range 2 {
		for _, c := range []struct {
			user string
			cs   *sdk.ClientSession
		}{{"alice", as}, {"bob", bs}} {
			if got, err := callText(t, c.cs, "whoami"); err != nil || got != c.user {
				t.Fatalf("%s's call: %q, %v\n%s", c.user, got, err, g.logs)
			}
		}
	}
	if n := alice.asked.Load() + bob.asked.Load(); n != 0 {
		t.Errorf("the users were asked %d times, want never", n)
	}
	for _, user := range []string{"alice", "bob"} {
		if n := up.iss.ExchangesFor(user); n != 1 {
			t.Errorf("%d exchanges for %s, want 1", n, user)
		}
	}
}

// TestPerUserTokenExchange: each user's calls act upstream with a token
// exchanged for the access token their own client presented to the
// gateway, without asking anyone anything; a user's newer token is the
// one exchanged for their next session; a user whose token the
// upstream's authorization server does not trust gets a clear error,
// never another user's token; no token reaches the logs or the errors.
func TestPerUserTokenExchange(t *testing.T) {
	checkLeaks(t)
	up := newUserUpstream(t)
	g := startExchangeGateway(t, up)

	g.usersActAsThemselves(t, up)

	// Alice's new token, on a new session, is exchanged in turn.
	alice2 := g.connect(t, g.token(g.idp, "alice"), newURLUser("alice").Client)
	if got, err := callText(t, alice2, "whoami"); err != nil || got != "alice" {
		t.Fatalf("alice's second session: %q, %v", got, err)
	}
	if n := up.iss.ExchangesFor("alice"); n != 2 {
		t.Errorf("%d exchanges for alice, want 2: her new token", n)
	}

	carol := g.connect(t, g.token(g.stranger, "carol"), newURLUser("carol").Client)
	_, err := callText(t, carol, "whoami")
	if err == nil || !strings.Contains(err.Error(), oauth.ErrExchangeRefused.Error()) || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("carol's call with a token the authorization server does not trust: %v\n%s", err, g.logs)
	}
	if got, want := up.calls(), []string{"alice", "bob", "alice", "bob", "alice"}; !slices.Equal(got, want) {
		t.Errorf("the upstream saw calls of %v, want %v", got, want)
	}
	for _, s := range []string{g.logs.String(), err.Error()} {
		if strings.Contains(s, "eyJ") || strings.Contains(s, "secret-1") {
			t.Errorf("a token or secret leaked: %s", s)
		}
	}
}

// TestPerUserEnterprise: with enterprise-managed authorization per user,
// each user's own token (an ID token of the enterprise IdP) is exchanged
// at the IdP for an identity assertion grant, which the upstream's
// authorization server redeems for that user's access token: alice and
// bob act upstream as themselves, once exchanged each, nobody asked; a
// user whose token the IdP did not issue gets a clear error; no token in
// the logs.
func TestPerUserEnterprise(t *testing.T) {
	checkLeaks(t)
	up := newUserUpstream(t)
	g := startUsersGateway(t, up, func(g *exchangeGateway) mcp.Option {
		return mcp.OptOAuthPerUser(mcp.UserEnterprise(oauth.EnterpriseConfig{
			IdPIssuer: g.idp.URL, IdPClientID: exchangeClient, IdPClientSecret: "exchange-secret-1",
			ClientID: exchangeClient, ClientSecret: "exchange-secret-1",
		}))
	})
	g.usersActAsThemselves(t, up)
	carol := g.connect(t, g.token(g.stranger, "carol"), newURLUser("carol").Client)
	_, err := callText(t, carol, "whoami")
	if err == nil || !strings.Contains(err.Error(), oauth.ErrExchangeRefused.Error()) {
		t.Fatalf("carol's call with a token the IdP did not issue: %v", err)
	}
	if got, want := up.calls(), []string{"alice", "bob", "alice", "bob"}; !slices.Equal(got, want) {
		t.Errorf("the upstream saw calls of %v, want %v", got, want)
	}
	for _, s := range []string{g.logs.String(), err.Error()} {
		if strings.Contains(s, "eyJ") || strings.Contains(s, "secret-1") {
			t.Errorf("a token or secret leaked: %s", s)
		}
	}
}

// TestOptOAuthPerUserTokenExchangeRefusals: an incomplete configuration,
// or one that names its own subject token, is refused.
func TestOptOAuthPerUserTokenExchangeRefusals(t *testing.T) {
	for _, cfg := range []oauth.TokenExchangeConfig{
		{},
		{ClientID: "c", SubjectToken: oauth.SubjectTokenFromContext},
	} {
		_, err := mcp.New("http://127.0.0.1/mcp", "c", "1", mcp.OptOAuthPerUser(mcp.UserTokenExchange(cfg)))
		if !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "UserTokenExchange") {
			t.Errorf("%+v: New = %v, want ErrBadParameter naming the option", cfg, err)
		}
	}
}

// TestOptOAuthPerUserEnterpriseRefusals: an incomplete configuration, or
// one that names its own ID token, is refused.
func TestOptOAuthPerUserEnterpriseRefusals(t *testing.T) {
	for _, cfg := range []oauth.EnterpriseConfig{
		{},
		{IdPIssuer: "https://idp.example.com", ClientID: "c", IDToken: func(context.Context) (string, error) { return "", nil }},
	} {
		_, err := mcp.New("http://127.0.0.1/mcp", "c", "1", mcp.OptOAuthPerUser(mcp.UserEnterprise(cfg)))
		if !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "UserEnterprise") {
			t.Errorf("%+v: New = %v, want ErrBadParameter naming the option", cfg, err)
		}
	}
}

func mustNotErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

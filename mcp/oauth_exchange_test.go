package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/oauthtest"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// exchangeServers are an identity provider that issued the users' access
// tokens, an authorization server that trusts it and knows the client
// "gateway", and an MCP server of that authorization server whose tool
// whoami answers the subject of the token it was called with.
type exchangeServers struct {
	idp, as *oauthtest.Issuer
	url     string // of the MCP server
}

func newExchangeServers(t *testing.T) *exchangeServers {
	t.Helper()
	s := &exchangeServers{idp: oauthtest.NewIssuer(t), as: oauthtest.NewIssuer(t)}
	s.as.TrustIdP(s.idp)
	s.as.Register("gateway", oauthtest.Client{Secret: "secret-gateway"})
	srv := sdk.NewServer(&sdk.Implementation{Name: "exchanged", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ map[string]any) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: auth.TokenInfoFromContext(ctx).UserID}}}, nil, nil
		})
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	s.url = hs.URL + "/mcp"
	v, err := oauth.NewJWTVerifier(oauth.JWTConfig{JWKSURL: s.as.JWKSURL(), Issuer: s.as.URL, Audience: s.url})
	mustNotErr(t, err)
	verify := func(ctx context.Context, tok string, r *http.Request) (*auth.TokenInfo, error) {
		info, err := v.Verify(ctx, tok, r)
		if err != nil || !s.as.Active(tok) {
			return nil, auth.ErrInvalidToken
		}
		return info, nil
	}
	metaURL, err := oauth.ProtectedResourceMetadataURL(s.url)
	mustNotErr(t, err)
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: metaURL})(
		sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)))
	mustNotErr(t, oauth.HandleProtectedResourceMetadata(mux, &oauthex.ProtectedResourceMetadata{Resource: s.url, AuthorizationServers: []string{s.as.URL}}))
	return s
}

// userToken returns an access token the IdP issued to the gateway for
// user.
func (s *exchangeServers) userToken(user string) string {
	c := s.idp.Claims("gateway")
	c["sub"] = user
	return s.idp.Sign("rsa-1", c)
}

// runAs runs a connector to the MCP server with ctx until the test ends,
// and waits for it to be ready unless noWait.
func runAs(t *testing.T, ctx context.Context, url string, noWait bool, opts ...Option) *running {
	t.Helper()
	st := newStates()
	opts = append([]Option{OptLogger(quietLogger())}, opts...)
	c, err := New(url, "gateway", "1", append(opts, OptOnStateChange(st.record))...)
	mustNotErr(t, err)
	ctx, cancel := context.WithCancel(ctx)
	r := &running{Connector: c, states: st, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- c.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	if !noWait {
		st.wait(t, toolkit.StatusReady, 1)
	}
	return r
}

// callWhoami calls the tool whoami through r and returns its text.
func callWhoami(t *testing.T, ctx context.Context, r *running) string {
	t.Helper()
	tools, err := r.ListTools(ctx)
	mustNotErr(t, err)
	for _, tl := range tools {
		if tl.Name() == "whoami" {
			out, err := tl.Run(ctx, json.RawMessage(`{}`))
			mustNotErr(t, err)
			res, ok := out.(toolkit.Resource)
			if !ok {
				t.Fatalf("whoami gave %T", out)
			}
			b, err := res.Read(ctx)
			mustNotErr(t, err)
			return string(b)
		}
	}
	t.Fatal("no whoami tool")
	return ""
}

// TestOAuthTokenExchange: two connectors, run for two users, each
// exchange their user's own token once and act upstream as that user;
// no token reaches the logs or the states.
func TestOAuthTokenExchange(t *testing.T) {
	s := newExchangeServers(t)
	logs := newLogCapture()
	cfg := oauth.TokenExchangeConfig{ClientID: "gateway", ClientSecret: "secret-gateway"}
	var states []string
	for _, user := range []string{"alice", "bob"} {
		ctx := oauth.WithSubjectToken(context.Background(), s.userToken(user), "")
		r := runAs(t, ctx, s.url, false, OptOAuth(oauth.TokenExchange(cfg)), OptOAuthAllow(s.as.URL), OptLogger(slogNew(logs)))
		for range 2 {
			if got := callWhoami(t, context.Background(), r); !strings.Contains(got, user) {
				t.Fatalf("%s's connector acts as %q", user, got)
			}
		}
		if n := s.as.ExchangesFor(user); n != 1 {
			t.Errorf("%d exchanges for %s, want 1", n, user)
		}
		states = append(states, fmt.Sprintf("%+v", r.State()))
	}
	for _, rec := range append(logs.all(), states...) {
		if strings.Contains(rec, "secret-") || strings.Contains(rec, "eyJ") {
			t.Errorf("a secret leaked: %s", rec)
		}
	}
}

// TestOAuthTokenExchangeRefused: a subject token the authorization server
// does not trust fails the connector with ErrExchangeRefused, quoting no
// token.
func TestOAuthTokenExchangeRefused(t *testing.T) {
	s := newExchangeServers(t)
	stranger := oauthtest.NewIssuer(t)
	bad := stranger.Sign("rsa-1", stranger.Claims("gateway"))
	cfg := oauth.TokenExchangeConfig{ClientID: "gateway", ClientSecret: "secret-gateway",
		SubjectToken: func(context.Context) (string, string, error) { return bad, oauth.TokenTypeAccessToken, nil }}
	logs := newLogCapture()
	r := runAs(t, context.Background(), s.url, true, OptOAuth(oauth.TokenExchange(cfg)), OptOAuthAllow(s.as.URL), OptReconnect(Reconnect{MaxAttempts: 1}), OptLogger(slogNew(logs)))
	var err error
	select {
	case err = <-r.done:
		r.done <- err
	case <-time.After(waitLimit):
		t.Fatal("the connector did not give up")
	}
	// The connector's error tells the cause, without its chain.
	if err == nil || !strings.Contains(err.Error(), oauth.ErrExchangeRefused.Error()) || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("Run = %v, want the exchange refused with invalid_grant", err)
	}
	for _, rec := range append(logs.all(), err.Error(), fmt.Sprintf("%+v", r.State())) {
		if strings.Contains(rec, "secret-") || strings.Contains(rec, "eyJ") {
			t.Errorf("a secret leaked: %s", rec)
		}
	}
}

// TestOAuthTokenExchangeOptions: an incomplete configuration is refused,
// naming the option.
func TestOAuthTokenExchangeOptions(t *testing.T) {
	_, err := New("http://127.0.0.1/mcp", "c", "1", OptOAuth(oauth.TokenExchange(oauth.TokenExchangeConfig{})))
	if !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "OptOAuth:") {
		t.Fatalf("New = %v, want ErrBadParameter naming the option", err)
	}
}

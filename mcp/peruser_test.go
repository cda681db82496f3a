package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/oauthtest"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/mcpserver"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// userUpstream is an MCP server behind the JWT access tokens of an
// oauthtest issuer, whose tool "whoami" answers the subject of the token
// its call carried, and records it.
type userUpstream struct {
	*httptest.Server
	iss *oauthtest.Issuer

	mu   sync.Mutex
	subs []string // the subject of each call, in order
}

// gatewayClient is the client the gateway's own session authenticates as
// (client credentials): it lists, never calls.
const gatewayClient = "gateway-itself"

func newUserUpstream(t *testing.T) *userUpstream {
	t.Helper()
	iss := oauthtest.NewIssuer(t)
	u := &userUpstream{iss: iss}
	mux := http.NewServeMux()
	u.Server = httptest.NewServer(mux)
	t.Cleanup(u.Close)
	resource := u.URL + "/mcp"
	iss.Register(gatewayClient, oauthtest.Client{Secret: "gateway-secret-1", Audience: resource})
	v, err := oauth.NewJWTVerifier(oauth.JWTConfig{JWKSURL: iss.JWKSURL(), Issuer: iss.URL, Audience: resource})
	if err != nil {
		t.Fatal(err)
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "per-user", Version: "1"}, nil)
	srv.AddTool(toolDef("whoami"), func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		sub := req.Extra.TokenInfo.UserID
		u.mu.Lock()
		u.subs = append(u.subs, sub)
		u.mu.Unlock()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: sub}}}, nil
	})
	meta, err := oauth.ProtectedResourceMetadataURL(resource)
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/mcp", auth.RequireBearerToken(v.Verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: meta})(
		sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)))
	if err := oauth.HandleProtectedResourceMetadata(mux, &oauthex.ProtectedResourceMetadata{Resource: resource, AuthorizationServers: []string{iss.URL}}); err != nil {
		t.Fatal(err)
	}
	return u
}

// calls returns the subjects of the calls so far.
func (u *userUpstream) calls() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.subs)
}

// perUserGateway serves, over HTTP, a toolkit whose connector "up" acts
// with each user's own token: /mcp for clients with a bearer token
// "token-<user>" (principal <user>), /open for anonymous ones, and the
// OAuth callback at /oauth/callback.
type perUserGateway struct {
	url  string
	conn *mcp.Connector
}

func startPerUserGateway(t *testing.T, up *userUpstream, tokens string, opts ...mcp.Option) (*perUserGateway, func()) {
	t.Helper()
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	cb, err := oauth.NewCallback(hs.URL+"/oauth/callback", oauth.CallbackConfig{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := mcp.NewDelegate("gateway", "1", append([]mcp.Option{
		mcp.OptLogger(slog.New(slog.DiscardHandler)),
		mcp.OptOAuth(oauth.ClientCredentials(gatewayClient, "gateway-secret-1")),
		mcp.OptOAuthAllow(up.iss.URL),
		mcp.OptOAuthPerUser(mcp.UserAuthorizationCode(oauth.Config{Store: oauth.NewFileTokenStore(tokens), ClientName: "per-user test"}, cb)),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(tk, nil, mcpserver.WithClientSessions(d))
	if err != nil {
		t.Fatal(err)
	}
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		user, ok := strings.CutPrefix(tok, "token-")
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: user, Expiration: tokenExpiry}, nil
	}
	authed, err := srv.Handler(mcpserver.WithBearerAuth(verify, nil))
	if err != nil {
		t.Fatal(err)
	}
	open, err := srv.Handler()
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/mcp", authed)
	mux.Handle("/open", open)
	mux.Handle(cb.Path(), cb)
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tk.Run(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		hs.CloseClientConnections()
		srv.Close()
		hs.Close()
		cancel()
		if err := <-runDone; err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(stop)
	g := &perUserGateway{url: hs.URL}
	changed := make(chan struct{}, 1)
	probe := g.connect(t, "", sdk.NewClient(&sdk.Implementation{Name: "probe", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	}))
	if err := tk.AddConnectorNS("up", up.URL+"/mcp"); err != nil {
		t.Fatal(err)
	}
	for {
		<-changed
		res, err := probe.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(res.Tools, func(tl *sdk.Tool) bool { return tl.Name == "whoami" }) {
			break
		}
	}
	probe.Close()
	item, err := tk.Lookup(context.Background(), "up.whoami")
	if err != nil {
		t.Fatal(err)
	}
	c, ok := mcp.ConnectorOfForTest(item)
	if !ok {
		t.Fatalf("%T is not a remote tool", item)
	}
	g.conn = c
	return g, stop
}

// tokenExpiry is far enough for any test.
var tokenExpiry = time.Now().Add(24 * time.Hour)

// bearer adds a bearer token to each request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// connect connects c as user (anonymous on /open when user is "").
func (g *perUserGateway) connect(t *testing.T, user string, c *sdk.Client) *sdk.ClientSession {
	t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: g.url + "/open", MaxRetries: -1}
	if user != "" {
		tr.Endpoint = g.url + "/mcp"
		tr.HTTPClient = &http.Client{Transport: bearer{"token-" + user, http.DefaultTransport}}
	}
	cs, err := c.Connect(context.Background(), tr, &sdk.ClientSessionOptions{ProtocolVersion: mcp.StatefulProtocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// browse is user's browser: it opens the authorization URL (the oauthtest
// issuer consents at once, as user) and follows the redirect to the
// gateway's callback, which must accept it.
func browse(user, authURL string) error {
	req, err := http.NewRequest(http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	req.Header.Set(oauthtest.UserHeader, user)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the redirect ended with %s", resp.Status)
	}
	return nil
}

// urlUser is a client of user that offers URL elicitation and opens the
// URLs it is sent, counting them; completed receives the elicitation IDs
// of the notifications/elicitation/complete it gets.
type urlUser struct {
	*sdk.Client
	asked     atomic.Int32
	completed chan string
}

func newURLUser(user string) *urlUser {
	u := &urlUser{completed: make(chan string, 8)}
	u.Client = sdk.NewClient(&sdk.Implementation{Name: user, Version: "1"}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			u.asked.Add(1)
			if req.Params.Mode != "url" || req.Params.ElicitationID == "" {
				return nil, fmt.Errorf("not a URL elicitation: %+v", req.Params)
			}
			if err := browse(user, req.Params.URL); err != nil {
				return nil, err
			}
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
			u.completed <- req.Params.ElicitationID
		},
	})
	return u
}

// urlElicitation returns the one URL elicitation of err, a -32042 error
// (URL elicitation required).
func urlElicitation(t *testing.T, err error) *sdk.ElicitParams {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != sdk.CodeURLElicitationRequired {
		t.Fatalf("a call without URL elicitation: %v, want -32042", err)
	}
	var data struct {
		Elicitations []*sdk.ElicitParams `json:"elicitations"`
	}
	if err := json.Unmarshal(we.Data, &data); err != nil || len(data.Elicitations) != 1 || data.Elicitations[0].Mode != "url" || data.Elicitations[0].ElicitationID == "" {
		t.Fatalf("the error's data: %s (%v)", we.Data, err)
	}
	return data.Elicitations[0]
}

// A user who opened the URL is not sent it again: a call that comes
// after the redirect, while the flow still exchanges its code, waits for
// the token instead of answering -32042 with the URL the user just
// opened.
func TestPerUserRedirectArrivedNotAskedAgain(t *testing.T) {
	checkLeaks(t)
	up := newUserUpstream(t)
	waiting, release := make(chan struct{}, 4), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	g, _ := startPerUserGateway(t, up, filepath.Join(t.TempDir(), "tokens.json"),
		mcp.OptUserWaitingForTest(func() { waiting <- struct{}{} }),
		mcp.OptRedirectTakenForTest(func() { <-release }))
	carol := g.connect(t, "carol", sdk.NewClient(&sdk.Implementation{Name: "carol", Version: "1"}, nil))
	_, err := carol.CallTool(context.Background(), &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	// The flow holds at the redirect until carol's next call waits.
	if err := browse("carol", urlElicitation(t, err).URL); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		text string
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		text, err := callText(t, carol, "whoami")
		got <- answer{text, err}
	}()
	select {
	case <-waiting:
		free()
	case a := <-got:
		t.Fatalf("carol's call after opening the URL did not wait for the flow: %q, %v", a.text, a.err)
	}
	if a := <-got; a.err != nil || a.text != "carol" {
		t.Fatalf("carol's call after opening the URL: %q, %v", a.text, a.err)
	}
}

// TestPerUserOAuth: each user acts upstream with their own token. Alice
// authorizes through URL elicitation on her session (and is told it
// completed); Bob, not yet authorized, is asked in turn and never acts
// with Alice's token; Alice's second session is not asked again; Carol's
// client, without URL elicitation, gets -32042 with the URL, opens it and
// calls again; an anonymous client is refused; a forged redirect is
// refused; a restart keeps each user's token. The gateway's own
// credentials list, and never call.
func TestPerUserOAuth(t *testing.T) {
	checkLeaks(t)
	up := newUserUpstream(t)
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	g, stop := startPerUserGateway(t, up, tokens)

	alice := newURLUser("alice")
	as := g.connect(t, "alice", alice.Client)
	if got, err := callText(t, as, "whoami"); err != nil || got != "alice" {
		t.Fatalf("alice's call: %q, %v", got, err)
	}
	if n := alice.asked.Load(); n != 1 {
		t.Errorf("alice was asked %d times, want 1", n)
	}
	if id := <-alice.completed; id == "" {
		t.Error("the completion named no elicitation")
	}

	bob := newURLUser("bob")
	bs := g.connect(t, "bob", bob.Client)
	if got, err := callText(t, bs, "whoami"); err != nil || got != "bob" {
		t.Fatalf("bob's call: %q, %v", got, err)
	}
	if n := bob.asked.Load(); n != 1 {
		t.Errorf("bob was asked %d times, want 1", n)
	}

	alice2 := newURLUser("alice")
	if got, err := callText(t, g.connect(t, "alice", alice2.Client), "whoami"); err != nil || got != "alice" {
		t.Fatalf("alice's second session: %q, %v", got, err)
	}
	if n := alice2.asked.Load() + alice.asked.Load(); n != 1 {
		t.Errorf("alice was asked %d times in all, want 1", n)
	}

	carol := g.connect(t, "carol", sdk.NewClient(&sdk.Implementation{Name: "carol", Version: "1"}, nil))
	_, err := carol.CallTool(context.Background(), &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err := browse("carol", urlElicitation(t, err).URL); err != nil {
		t.Fatal(err)
	}
	if got, err := callText(t, carol, "whoami"); err != nil || got != "carol" {
		t.Fatalf("carol's call after opening the URL: %q, %v", got, err)
	}

	// A redirect whose state belongs to no authorization is refused.
	resp, err := http.Get(g.url + "/oauth/callback?code=code-1&state=forged")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a forged redirect: %s", resp.Status)
	}

	anon := g.connect(t, "", sdk.NewClient(&sdk.Implementation{Name: "anon", Version: "1"}, nil))
	if got, err := callText(t, anon, "whoami"); err == nil || !strings.Contains(err.Error(), "no authenticated user") {
		t.Errorf("an anonymous call: %q, %v", got, err)
	}

	if a, p, f := g.conn.UserAuthorizations(); a != 3 || p != 0 || f != 0 {
		t.Errorf("UserAuthorizations = %d authorized, %d pending, %d failed; want 3, 0, 0", a, p, f)
	}
	if got, want := up.calls(), []string{"alice", "bob", "alice", "carol"}; !slices.Equal(got, want) {
		t.Errorf("the upstream saw calls of %v, want %v", got, want)
	}
	if n := up.iss.Authorizations(); n != 3 {
		t.Errorf("%d authorizations, want one per user", n)
	}

	// A restart on the same token file asks nobody again.
	stop()
	g2, _ := startPerUserGateway(t, up, tokens)
	for _, user := range []string{"alice", "bob", "carol"} {
		c := newURLUser(user)
		if got, err := callText(t, g2.connect(t, user, c.Client), "whoami"); err != nil || got != user {
			t.Errorf("%s after the restart: %q, %v", user, got, err)
		}
		if n := c.asked.Load(); n != 0 {
			t.Errorf("%s was asked again after the restart", user)
		}
	}
	if n := up.iss.Authorizations(); n != 3 {
		t.Errorf("%d authorizations after the restart, want still 3", n)
	}
}

// TestPerUserOneAuthorization: two sessions of one user calling while the
// user is asked share one authorization: one URL, sent to one of them;
// the other's call waits for it.
func TestPerUserOneAuthorization(t *testing.T) {
	checkLeaks(t)
	up := newUserUpstream(t)
	waiting := make(chan struct{}, 4)
	g, _ := startPerUserGateway(t, up, filepath.Join(t.TempDir(), "tokens.json"), mcp.OptUserWaitingForTest(func() { waiting <- struct{}{} }))
	entered, gate := make(chan struct{}), make(chan struct{})
	first := sdk.NewClient(&sdk.Implementation{Name: "alice-1", Version: "1"}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			close(entered)
			<-gate
			if err := browse("alice", req.Params.URL); err != nil {
				return nil, err
			}
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
	})
	second := newURLUser("alice")
	s1, s2 := g.connect(t, "alice", first), g.connect(t, "alice", second.Client)
	type result struct {
		text string
		err  error
	}
	r1, r2 := make(chan result, 1), make(chan result, 1)
	go func() { text, err := callText(t, s1, "whoami"); r1 <- result{text, err} }()
	<-entered
	go func() { text, err := callText(t, s2, "whoami"); r2 <- result{text, err} }()
	<-waiting // the second session's call waits for the first's authorization
	close(gate)
	for i, r := range []result{<-r1, <-r2} {
		if r.err != nil || r.text != "alice" {
			t.Errorf("session %d: %q, %v", i+1, r.text, r.err)
		}
	}
	if n := second.asked.Load(); n != 0 {
		t.Errorf("the second session was asked %d times", n)
	}
	if n := up.iss.Authorizations(); n != 1 {
		t.Errorf("%d authorizations, want 1", n)
	}
}

// TestPerUserDeclined: a user who declines the elicitation fails the
// authorization: the call says so, the next one is told when the next
// attempt may start, without asking again, and nothing reaches the
// upstream.
func TestPerUserDeclined(t *testing.T) {
	checkLeaks(t)
	up := newUserUpstream(t)
	g, _ := startPerUserGateway(t, up, filepath.Join(t.TempDir(), "tokens.json"))
	var asked atomic.Int32
	bob := sdk.NewClient(&sdk.Implementation{Name: "bob", Version: "1"}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked.Add(1)
			return &sdk.ElicitResult{Action: "decline"}, nil
		},
	})
	cs := g.connect(t, "bob", bob)
	if _, err := callText(t, cs, "whoami"); err == nil || !strings.Contains(err.Error(), "declined to authorize") {
		t.Fatalf("a declined authorization: %v", err)
	}
	if _, err := callText(t, cs, "whoami"); err == nil || !strings.Contains(err.Error(), "declined to authorize") || !strings.Contains(err.Error(), "next attempt in") {
		t.Errorf("the call after: %v", err)
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("asked %d times, want 1", n)
	}
	if calls := up.calls(); len(calls) != 0 {
		t.Errorf("the upstream saw calls of %v", calls)
	}
}

// TestOptOAuthPerUserRefusals: the options refuse what cannot work.
func TestOptOAuthPerUserRefusals(t *testing.T) {
	cb, err := oauth.NewCallback("https://gw.example/cb", oauth.CallbackConfig{})
	if err != nil {
		t.Fatal(err)
	}
	authorize := func(context.Context, *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) { return nil, nil }
	for name, opt := range map[string]mcp.Option{
		"nil callback":        mcp.OptOAuthPerUser(mcp.UserAuthorizationCode(oauth.Config{}, nil)),
		"own Authorize":       mcp.OptOAuthPerUser(mcp.UserAuthorizationCode(oauth.Config{Authorize: authorize}, cb)),
		"other redirect":      mcp.OptOAuthPerUser(mcp.UserAuthorizationCode(oauth.Config{RedirectURL: "https://other.example/cb"}, cb)),
		"store without users": mcp.OptOAuthPerUser(mcp.UserAuthorizationCode(oauth.Config{Store: plainStore{}}, cb)),
		"nil flow":            mcp.OptOAuthPerUser(nil, nil),
		"negative wait":       mcp.OptTimeouts(mcp.Timeouts{UserAuthorization: -time.Second}),
	} {
		if _, err := mcp.New("https://up.example/mcp", "c", "1", opt); !errors.Is(err, toolkit.ErrBadParameter) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// plainStore is an oauth.TokenStore that keeps no users apart.
type plainStore struct{}

func (plainStore) LoadToken(context.Context, string) (*oauth.StoredToken, error) { return nil, nil }
func (plainStore) SaveToken(context.Context, *oauth.StoredToken) error           { return nil }

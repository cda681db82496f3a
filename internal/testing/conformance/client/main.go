// Command client is the MCP client the conformance suite tests: it connects
// to the server URL given as its only argument through an mcp.Connector and
// does what the scenario named by MCP_CONFORMANCE_SCENARIO asks (with the
// JSON object MCP_CONFORMANCE_CONTEXT, when set). The suite runs it as
//
//	conformance client --command "/path/to/client" --scenario NAME
//
// The authorization scenarios (auth/...) configure the connector with
// mcp.OptOAuth, or, for the client credentials grant, with
// mcp.OptOAuth with oauth.ClientCredentials when the context holds a client secret and
// mcp.OptOAuth with oauth.ClientCredentialsJWT when it holds a private key, and
// mcp.OptOAuth with oauth.Enterprise for cross-app access, with the suite's loopback
// authorization servers allowed (mcp.OptOAuthAllow); the user's
// authorization is simulated by following the authorization server's
// redirect without a browser.
//
// It exits with status 0 when the scenario's steps succeeded and 1
// otherwise, saying why on stderr.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// clientMetadataURL is the client ID metadata document URL the suite's
// authorization servers accept.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// redirectURL is where the suite's authorization servers redirect; nothing
// listens there: the redirect is read from the Location header.
const redirectURL = "http://localhost:3000/callback"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: client SERVER_URL (scenario in MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var cctx map[string]any
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &cctx); err != nil {
			fmt.Fprintln(os.Stderr, "MCP_CONFORMANCE_CONTEXT:", err)
			os.Exit(2)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, os.Args[1], scenario, cctx); err != nil {
		fmt.Fprintf(os.Stderr, "scenario %s: %v\n", scenario, err)
		os.Exit(1)
	}
}

// step is a tool call a scenario makes once connected.
type step struct {
	tool string
	args map[string]any
}

func run(ctx context.Context, serverURL, scenario string, cctx map[string]any) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := []mcp.Option{
		mcp.OptLogger(logger),
		mcp.OptReconnect(mcp.Reconnect{MaxAttempts: 1}),
		mcp.OptTimeouts(mcp.Timeouts{Connect: 20 * time.Second}),
		// The suite's authorization servers listen on the loopback
		// interface, on other ports than the server.
		mcp.OptOAuthAllow("localhost", "127.0.0.1", "::1"),
	}
	var steps []step
	switch {
	case scenario == "initialize":
	case scenario == "tools_call":
		steps = []step{{"add_numbers", map[string]any{"a": 5, "b": 3}}}
	case scenario == "elicitation-sep1034-client-defaults":
		opts = append(opts, mcp.OptServerRequests(mcp.ServerRequests{Forward: true}))
		steps = []step{{"test_client_elicitation_defaults", map[string]any{}}}
	case scenario == "sse-retry":
		steps = []step{{"test_reconnection", map[string]any{}}}
	case scenario == "auth/cross-app-access-complete-flow":
		str := func(k string) string { v, _ := cctx[k].(string); return v }
		idToken := str("idp_id_token")
		opts = append(opts, mcp.OptOAuth(oauth.Enterprise(oauth.EnterpriseConfig{
			IDToken:      func(context.Context) (string, error) { return idToken, nil },
			IdPIssuer:    str("idp_issuer"),
			IdPClientID:  str("idp_client_id"),
			ClientID:     str("client_id"),
			ClientSecret: str("client_secret"),
		})))
		steps = []step{{"test-tool", map[string]any{}}}
	case strings.HasPrefix(scenario, "auth/client-credentials-"):
		id, _ := cctx["client_id"].(string)
		secret, _ := cctx["client_secret"].(string)
		keyPEM, _ := cctx["private_key_pem"].(string)
		switch {
		case keyPEM != "":
			key, err := oauth.ParsePrivateKeyPEM([]byte(keyPEM))
			if err != nil {
				return err
			}
			alg, _ := cctx["signing_algorithm"].(string)
			opts = append(opts, mcp.OptOAuth(oauth.ClientCredentialsJWT(id, key, alg)))
		case secret != "":
			opts = append(opts, mcp.OptOAuth(oauth.ClientCredentials(id, secret)))
		default:
			return errors.New("the scenario gives neither a client secret nor a private key")
		}
		steps = []step{{"test-tool", map[string]any{}}}
	case strings.HasPrefix(scenario, "auth/"):
		cfg := oauth.Config{
			Authorize:         followRedirect,
			RedirectURL:       redirectURL,
			ClientMetadataURL: clientMetadataURL,
			ClientName:        "toolkit conformance client",
		}
		cfg.ClientID, _ = cctx["client_id"].(string)
		cfg.ClientSecret, _ = cctx["client_secret"].(string)
		opts = append(opts, mcp.OptOAuth(oauth.AuthorizationCode(cfg)))
		steps = []step{{"test-tool", map[string]any{}}}
	default:
		return fmt.Errorf("unknown scenario %q", scenario)
	}

	ready := make(chan struct{})
	opts = append(opts, mcp.OptOnStateChange(func(_ context.Context, s *toolkit.ConnectorState) {
		if s.Status == toolkit.StatusReady {
			select {
			case <-ready:
			default:
				close(ready)
			}
		}
	}))
	c, err := mcp.New(serverURL, "test-client", "1.0.0", opts...)
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- c.Run(runCtx) }()
	defer func() {
		stop()
		<-ran
	}()
	select {
	case <-ready:
	case err := <-ran:
		ran <- err // for the deferred wait
		return fmt.Errorf("connecting: %w", err)
	case <-ctx.Done():
		return fmt.Errorf("connecting: %w (state: %s)", ctx.Err(), c.State().LastError)
	}
	tools, err := c.ListTools(ctx)
	if err != nil {
		return err
	}
	callCtx := toolkit.ContextWithSession(ctx, answerer{})
	for _, s := range steps {
		var tool toolkit.Tool
		for _, t := range tools {
			if t.Name() == s.tool {
				tool = t
			}
		}
		if tool == nil {
			return fmt.Errorf("the server has no tool %q", s.tool)
		}
		in, err := json.Marshal(s.args)
		if err != nil {
			return err
		}
		if _, err := tool.Run(callCtx, in); err != nil {
			return fmt.Errorf("calling %s: %w", s.tool, err)
		}
	}
	return nil
}

// followRedirect stands in for the user: the suite's authorization servers
// redirect at once to the redirect URL with the code, state and iss.
func followRedirect(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.String() == "" {
		return nil, fmt.Errorf("the authorization endpoint answered %s without a redirect", resp.Status)
	}
	q := loc.Query()
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// answerer is the session of the calls: it accepts every elicitation with
// no content (the server's defaults apply) and refuses sampling.
type answerer struct{ noSession }

func (answerer) CreateMessage(context.Context, *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	return nil, errors.New("sampling is not supported")
}

func (answerer) Elicit(context.Context, *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	return &sdk.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
}

// noSession is a toolkit.Session with nothing behind it.
type noSession struct{}

func (noSession) ID() string                                 { return "conformance" }
func (noSession) ClientInfo() *sdk.Implementation            { return nil }
func (noSession) Capabilities() *sdk.ClientCapabilities      { return nil }
func (noSession) Meta() map[string]any                       { return nil }
func (noSession) Logger() *slog.Logger                       { return slog.New(slog.DiscardHandler) }
func (noSession) Progress(float64, float64, ...string) error { return nil }

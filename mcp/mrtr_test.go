package mcp

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// initializeOnly returns the options of a test server that speaks only
// StatefulProtocolVersion: its tools ask their client with server
// requests (ServerSession.CreateMessage, Elicit, ListRoots), which the
// go-sdk refuses to send on the stateless protocol. A connector asking for
// the newest version falls back to the initialize handshake with it.
func initializeOnly() testserver.Options {
	return testserver.Options{Server: &sdk.ServerOptions{SupportedProtocolVersions: []string{StatefulProtocolVersion}}}
}

// mrtrState is the requestState the input tools give with their input
// requests and expect back.
const mrtrState = "state-1"

// addInputTools adds the tools "ask_model" and "ask_user" written the way
// of protocol 2026-07-28: instead of sending a request to the client they
// return an input-required result, and are called again with the answer
// (the go-sdk turns that into a server request for a client of an older
// protocol). Each reports the answer it got, and the number of rounds.
func addInputTools(s *testserver.Server) {
	rounds := func(req *sdk.CallToolRequest) (sdk.InputResponse, *sdk.CallToolResult) {
		if len(req.Params.InputResponses) == 0 {
			return nil, nil
		}
		if req.Params.RequestState != mrtrState {
			return nil, &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "bad request state " + req.Params.RequestState}}}
		}
		return req.Params.InputResponses["q"], nil
	}
	s.AddTool(mustTool("ask_model"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		got, bad := rounds(req)
		if bad != nil {
			return bad, nil
		}
		if got == nil {
			return &sdk.CallToolResult{RequestState: mrtrState, InputRequests: sdk.InputRequestMap{"q": &sdk.CreateMessageParams{MaxTokens: 5,
				Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "colour?"}}}}}}, nil
		}
		res, ok := got.(*sdk.CreateMessageWithToolsResult)
		if !ok || len(res.Content) != 1 {
			return nil, fmt.Errorf("sampling answer %T", got)
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "model: " + res.Content[0].(*sdk.TextContent).Text}}}, nil
	})
	s.AddTool(mustTool("ask_user"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		got, bad := rounds(req)
		if bad != nil {
			return bad, nil
		}
		if got == nil {
			return &sdk.CallToolResult{RequestState: mrtrState, InputRequests: sdk.InputRequestMap{"q": &sdk.ElicitParams{Message: "name?",
				RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}}}}, nil
		}
		res, ok := got.(*sdk.ElicitResult)
		if !ok {
			return nil, fmt.Errorf("elicitation answer %T", got)
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint("user: ", res.Action, " ", res.Content["name"])}}}, nil
	})
}

// requestingSession is a caller's session that answers sampling and
// elicitation itself.
type requestingSession struct{ *testSession }

func (s *requestingSession) CreateMessage(context.Context, *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	return &sdk.CreateMessageResult{Model: "m", Role: "assistant", Content: &sdk.TextContent{Text: "caller's teal"}}, nil
}

func (s *requestingSession) Elicit(context.Context, *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "caller's Ada"}}, nil
}

// A server's input-required results (protocol 2026-07-28) are answered by
// the same handlers as its sampling and elicitation requests (older
// protocols): the caller's session when it can, else the connector's own
// handlers; with nothing to answer, the call fails with an error saying
// why, not a hang. The same tools reach a connector on 2025-11-25 as
// server requests, answered the same way.
func TestInputRequired(t *testing.T) {
	type setup func(t *testing.T, s *testserver.Server) (string, []Option)
	memory := func(t *testing.T, s *testserver.Server) (string, []Option) {
		m := testserver.NewMemory(s.Server)
		t.Cleanup(m.Close)
		return "memory://mrtr", []Option{OptDialer(m.Dial)}
	}
	stateless := func(t *testing.T, s *testserver.Server) (string, []Option) {
		return testserver.ServeHTTP(t, s.Server, testserver.Stateless).URL, nil
	}
	stateful := func(t *testing.T, s *testserver.Server) (string, []Option) {
		return testserver.ServeHTTP(t, s.Server, testserver.Stateful).URL, nil
	}
	own := []Option{
		OptServerRequests(ServerRequests{Sampling: func(context.Context, *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
			return &sdk.CreateMessageResult{Model: "m", Role: "assistant", Content: &sdk.TextContent{Text: "app's teal"}}, nil
		}}),
		OptServerRequests(ServerRequests{Elicitation: func(context.Context, *sdk.ElicitParams) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "app's Ada"}}, nil
		}}),
	}
	for _, tc := range []struct {
		name     string
		setup    setup
		protocol string // asked; "" for the default
		want     string // negotiated
	}{
		{"memory", memory, "", StatelessProtocolVersion},
		{"stateless", stateless, "", StatelessProtocolVersion},
		{"stateful", stateful, "", StatefulProtocolVersion},
		{"memory", memory, StatefulProtocolVersion, StatefulProtocolVersion},
	} {
		t.Run(tc.name+"/"+tc.want, func(t *testing.T) {
			leakCheck(t)
			s := newServer(t, testserver.Options{})
			addInputTools(s)
			url, base := tc.setup(t, s)
			if tc.protocol != "" {
				base = append(base, OptProtocolVersion(tc.protocol))
			}
			check := func(r *running, ctx context.Context, tool, want string) {
				t.Helper()
				out, err := call(t, ctx, r.Connector, tool, `{}`)
				if err != nil {
					t.Errorf("%s: %v", tool, err)
					return
				}
				if got := read(t, out); got != want {
					t.Errorf("%s: %q, want %q", tool, got, want)
				}
			}

			// The connector's own handlers, for every caller.
			r := start(t, url, false, append(append(base, OptServerRequests(ServerRequests{Forward: true})), own...)...)
			if got := r.State().ProtocolVersion; got != tc.want {
				t.Errorf("negotiated %q, want %q", got, tc.want)
			}
			bg := context.Background()
			check(r, bg, "ask_model", "model: app's teal")
			check(r, bg, "ask_user", "user: accept app's Ada")
			// A caller that answers itself comes first.
			caller := toolkit.ContextWithSession(bg, &requestingSession{newTestSession("c")})
			check(r, caller, "ask_model", "model: caller's teal")
			check(r, caller, "ask_user", "user: accept caller's Ada")
			mustNotErr(t, r.stop(t))

			// Nothing answers: the call fails at once (saying so when the
			// connector runs the rounds; an older server words it itself).
			r = start(t, url, false, base...)
			for _, tool := range []string{"ask_model", "ask_user"} {
				_, err := call(t, bg, r.Connector, tool, `{}`)
				if err == nil || (tc.want == StatelessProtocolVersion && !strings.Contains(err.Error(), "does not")) {
					t.Errorf("%s with nothing to answer: %v", tool, err)
				}
			}
			mustNotErr(t, r.stop(t))
		})
	}
}

// A server that never answers server/discover (it drops requests it does
// not know) costs the connector one attempt: the next one asks for
// StatefulProtocolVersion with initialize directly.
func TestDiscoverIgnored(t *testing.T) {
	leakCheck(t)
	raw := &testserver.Raw{Handle: func(req testserver.RawRequest) [][]byte {
		switch req.Method {
		case "initialize":
			return [][]byte{testserver.Initialize(req, "quiet")}
		case "tools/list":
			return [][]byte{testserver.Result(req, map[string]any{"tools": []any{map[string]any{"name": "t", "inputSchema": map[string]any{"type": "object"}}}})}
		case "prompts/list", "resources/list", "resources/templates/list":
			return [][]byte{testserver.Result(req, map[string]any{})}
		}
		return nil // server/discover among others: never answered
	}}
	t.Cleanup(raw.Close)
	r := start(t, "memory://quiet", false, OptDialer(raw.Dial), fastBackoff, OptTimeouts(Timeouts{Connect: 100 * time.Millisecond}))
	if got := r.State().ProtocolVersion; got != StatefulProtocolVersion {
		t.Errorf("negotiated %q", got)
	}
	if r.states.count(toolkit.StatusReconnecting) != 1 {
		t.Errorf("states %+v: want one failed attempt", r.states.all)
	}
	if tools, _ := r.ListTools(context.Background()); len(tools) != 1 {
		t.Errorf("tools %v", tools)
	}
	mustNotErr(t, r.stop(t))
}

// A connector that authorizes with OAuth asks for StatefulProtocolVersion
// unless told a version (statefulForOAuth); others ask for the newest.
func TestAskedVersion(t *testing.T) {
	cfg := oauth.Config{
		Authorize: func(context.Context, *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			return nil, auth.ErrInvalidToken
		},
		RedirectURL: "http://127.0.0.1:9/callback",
	}
	for _, tc := range []struct {
		name string
		opts []Option
		want string
	}{
		{"default", nil, StatelessProtocolVersion},
		{"oauth", []Option{OptOAuth(oauth.AuthorizationCode(cfg))}, StatefulProtocolVersion},
		{"oauth, told the newest", []Option{OptOAuth(oauth.AuthorizationCode(cfg)), OptProtocolVersion(StatelessProtocolVersion)}, StatelessProtocolVersion},
		{"told an older one", []Option{OptProtocolVersion("2025-06-18")}, "2025-06-18"},
	} {
		c, err := New("https://example.com/mcp", "t", "1", tc.opts...)
		mustNotErr(t, err)
		if got := c.askedVersion(); got != tc.want {
			t.Errorf("%s: asks for %s, want %s", tc.name, got, tc.want)
		}
	}
}

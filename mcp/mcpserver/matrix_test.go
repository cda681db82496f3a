package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp"
)

// addRequestingTools adds to an upstream the tools "ask_model" (sampling) and
// "ask_user" (elicitation) and the prompt "ask_prompt" (elicitation),
// written for the upstream's generation: with
// server requests (ServerSession.CreateMessage, Elicit) for one of the
// initialize handshake, with input-required results for one of
// 2026-07-28.
func addRequestingTools(s *testserver.Server, rounds bool) {
	const state = "upstream-state"
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}
	sampling := &sdk.CreateMessageParams{MaxTokens: 5, Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "colour?"}}}}
	elicit := &sdk.ElicitParams{Message: "name?", RequestedSchema: schema}
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	s.AddTool(mustTool("ask_model"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if !rounds {
			res, err := req.Session.CreateMessage(ctx, sampling)
			if err != nil {
				return nil, err
			}
			return text("model: " + res.Content.(*sdk.TextContent).Text), nil
		}
		answer, ok := req.Params.InputResponses["m"].(*sdk.CreateMessageWithToolsResult)
		if !ok || req.Params.RequestState != state {
			return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"m": sampling}, RequestState: state}, nil
		}
		return text("model: " + answer.Content[0].(*sdk.TextContent).Text), nil
	})
	s.AddPrompt(&sdk.Prompt{Name: "ask_prompt"}, func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		message := func(s string) *sdk.GetPromptResult {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: s}}}}
		}
		if !rounds {
			res, err := req.Session.Elicit(ctx, elicit)
			if err != nil {
				return nil, err
			}
			return message(fmt.Sprint("prompt: ", res.Content["name"])), nil
		}
		answer, ok := req.Params.InputResponses["p"].(*sdk.ElicitResult)
		if !ok || req.Params.RequestState != state {
			return &sdk.GetPromptResult{InputRequests: sdk.InputRequestMap{"p": elicit}, RequestState: state}, nil
		}
		return message(fmt.Sprint("prompt: ", answer.Content["name"])), nil
	})
	s.AddTool(mustTool("ask_user"), func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if !rounds {
			res, err := req.Session.Elicit(ctx, elicit)
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprint("user: ", res.Action, " ", res.Content["name"])), nil
		}
		answer, ok := req.Params.InputResponses["u"].(*sdk.ElicitResult)
		if !ok || req.Params.RequestState != state {
			return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"u": elicit}, RequestState: state}, nil
		}
		return text(fmt.Sprint("user: ", answer.Action, " ", answer.Content["name"])), nil
	})
}

// TestProtocolMatrix runs every pairing of the protocol generations
// through a gateway — a go-sdk client at 2025-11-25 or 2026-07-28, the
// server face stateful or stateless, a connector, an upstream speaking
// 2025-11-25 only or 2026-07-28 — and checks list, call, a sampling tool,
// an elicitation tool, a prompt that asks the user, a list change and a
// resource update. What a
// stateless face cannot do for a 2025-11-25 client (send it requests or
// notifications outside a request: it has no session) fails cleanly.
// docs/quality.md "Conformance" has the table.
func TestProtocolMatrix(t *testing.T) {
	const (
		old = "2025-11-25"
		new = "2026-07-28"
	)
	for _, face := range []string{"stateful", "stateless"} {
		for _, upstream := range []string{old, new} {
			for _, client := range []string{old, new} {
				t.Run(fmt.Sprintf("face=%s/upstream=%s/client=%s", face, upstream, client), func(t *testing.T) {
					leakCheck(t)
					sessionless := face == "stateless" && client == old
					protocolMatrixCell(t, face == "stateless", upstream, client, !sessionless)
				})
			}
		}
	}
}

func protocolMatrixCell(t *testing.T, statelessFace bool, upstream, client string, reachable bool) {
	// The upstream.
	// The go-sdk records a subscription after its SubscribeHandler
	// returns, and logs "resource subscribed" once it has.
	subscribed := make(chan string, 8)
	o := testserver.Options{Server: &sdk.ServerOptions{
		SubscribeHandler:   func(context.Context, *sdk.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
		Logger:             slog.New(&messageHandler{msg: "resource subscribed", key: "uri", ch: subscribed}),
	}}
	if upstream < statelessVersion {
		o.Server.SupportedProtocolVersions = []string{upstream}
	}
	up := newServer(t, o)
	addRequestingTools(up, upstream >= statelessVersion)
	m := testserver.NewMemory(up.Server)
	t.Cleanup(m.Close)

	// The gateway: a toolkit of one connector, served over HTTP.
	var hopts []HTTPOption
	if statelessFace {
		hopts = append(hopts, WithStateless())
	}
	gw := startGateway(t, "memory://up", []mcp.Option{mcp.OptDialer(m.Dial), mcp.OptServerRequests(mcp.ServerRequests{Forward: true})}, nil, hopts)
	tk, ctx := gw.tk, context.Background()
	if st := tk.Connectors()[0]; st.ProtocolVersion != upstream {
		t.Errorf("the connector speaks %s to the upstream, want %s", st.ProtocolVersion, upstream)
	}

	// The client.
	changes, updates := make(chan struct{}, 8), make(chan string, 8)
	cs, err := connectHTTPVersion(t, gw.url, client, &sdk.ClientOptions{
		CreateMessageHandler: func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return &sdk.CreateMessageResult{Model: "m", Role: "assistant", Content: &sdk.TextContent{Text: "teal"}}, nil
		},
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changes <- struct{}{} },
		ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) { updates <- r.Params.URI },
	})
	mustNotErr(t, err)
	if got := cs.InitializeResult().ProtocolVersion; got != client {
		t.Errorf("the client speaks %s to the gateway, want %s", got, client)
	}

	// List and call.
	tools, err := cs.ListTools(ctx, nil)
	mustNotErr(t, err)
	names := func(tools *sdk.ListToolsResult) []string {
		var out []string
		for _, tl := range tools.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	if n := names(tools); !slices.Contains(n, "echo") || !slices.Contains(n, "ask_model") {
		t.Errorf("tools %q", n)
	}
	call := func(name string, args any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return err.Error(), false
		}
		return resultText(t, res), !res.IsError
	}
	if got, ok := call("echo", map[string]any{"text": "hi"}); !ok || got != "hi" {
		t.Errorf("echo: %q", got)
	}
	// Sampling and elicitation, through the connector and the face.
	for tool, want := range map[string]string{"ask_model": "model: teal", "ask_user": "user: accept Ada"} {
		got, ok := call(tool, map[string]any{})
		switch {
		case reachable && (!ok || got != want):
			t.Errorf("%s: %q, want %q", tool, got, want)
		case !reachable && ok:
			t.Errorf("%s: %q, want a clean failure (a stateless face cannot ask a client of %s)", tool, got, client)
		}
	}
	// A prompt that asks the user, through the connector and the face.
	p, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "ask_prompt"})
	switch {
	case reachable && (err != nil || len(p.Messages) != 1 || p.Messages[0].Content.(*sdk.TextContent).Text != "prompt: Ada"):
		t.Errorf("ask_prompt: %v %s", err, jsonOf(t, p))
	case !reachable && err == nil:
		t.Errorf("ask_prompt: %s, want a clean failure", jsonOf(t, p))
	}
	if !reachable {
		return // no list change or update can reach a client without a stream
	}

	// A resource update and a list change of the upstream reach the client.
	mustNotErr(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: testserver.TextURI}))
	if got := recvString(t, subscribed); got != testserver.TextURI {
		t.Errorf("the upstream subscribed to %q", got)
	}
	mustNotErr(t, up.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: testserver.TextURI}))
	if got := recvString(t, updates); got != testserver.TextURI {
		t.Errorf("update of %q", got)
	}
	up.AddTool(mustTool("late"), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late"}}}, nil
	})
	for {
		select {
		case <-changes:
		case <-time.After(waitLimit):
			t.Fatal("no tools/list_changed")
		}
		tools, err := cs.ListTools(ctx, nil)
		mustNotErr(t, err)
		if slices.Contains(names(tools), "late") {
			break
		}
	}
}

// A renamed tool keeps its Mcp-Name right on both sides of a gateway: a
// 2026-07-28 client names the exposed name in its header, the connector
// the upstream's name in its own, each set by the go-sdk from its body.
func TestRenamedToolHeaders(t *testing.T) {
	leakCheck(t)
	// The upstream checks the headers too: a stateless go-sdk handler.
	up := newServer(t, testserver.Options{})
	upstream := testserver.ServeHTTP(t, up.Server, testserver.Stateless)
	names := make(chan string, 16)
	upstream.Intercept(func(_ http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("Mcp-Method") == "tools/call" {
			names <- r.Header.Get("Mcp-Name")
		}
		return false
	})
	gw := startGateway(t, upstream.URL, nil, []Option{WithQualifiedNames()}, nil)
	ctx := context.Background()
	if st := gw.tk.Connectors()[0]; st.ProtocolVersion != statelessVersion {
		t.Errorf("upstream protocol %s", st.ProtocolVersion)
	}
	cs, err := connectHTTPVersion(t, gw.url, "", nil)
	mustNotErr(t, err)
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "up_echo", Arguments: map[string]any{"text": "renamed"}})
	mustNotErr(t, err)
	if res.IsError || resultText(t, res) != "renamed" {
		t.Errorf("up_echo: %s", jsonOf(t, res.Content))
	}
	if got := recvString(t, names); got != "echo" {
		t.Errorf("the connector's Mcp-Name %q, want the upstream's name", got)
	}
}

// messageHandler is a slog.Handler that sends the attribute key of every
// record whose message is msg to ch.
type messageHandler struct {
	msg, key string
	ch       chan<- string
}

func (h *messageHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *messageHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *messageHandler) WithGroup(string) slog.Handler            { return h }

func (h *messageHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message != h.msg {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == h.key {
			h.ch <- a.Value.String()
			return false
		}
		return true
	})
	return nil
}

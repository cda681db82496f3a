package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// A caller that relays input rounds (bridge.InputRound, for the tool it
// calls) gets a server's input-required result as a *bridge.InputRequired
// error — the server's requests and requestState as they are — and its
// retry with the answers and that state completes the call; a relay for
// another tool changes nothing (a nested call answers as usual), and a
// state too long to relay is answered by the connector itself.
func TestInputRoundsPassed(t *testing.T) {
	leakCheck(t)
	s := newServer(t, testserver.Options{})
	addInputTools(s)
	long := strings.Repeat("s", bridge.MaxPassedState+1)
	s.AddTool(mustTool("long_state"), func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if req.Params.RequestState != long {
			return &sdk.CallToolResult{RequestState: long, InputRequests: sdk.InputRequestMap{"q": &sdk.ElicitParams{Message: "name?"}}}, nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "answered here"}}}, nil
	})
	m := testserver.NewMemory(s.Server)
	t.Cleanup(m.Close)
	r := start(t, "memory://relay", false, OptDialer(m.Dial), OptServerRequests(ServerRequests{Forward: true}))
	caller := toolkit.ContextWithSession(context.Background(), &requestingSession{newTestSession("c")})
	tool := findTool(t, r.Connector, "ask_user")

	relay := &bridge.InputRound{Item: tool}
	_, err := tool.Run(bridge.WithInputRound(caller, relay), []byte(`{}`))
	var ir *bridge.InputRequired
	if !errors.As(err, &ir) {
		t.Fatalf("relayed call: %v, want *bridge.InputRequired", err)
	}
	if _, ok := ir.Requests["q"].(*sdk.ElicitParams); !ok || ir.State != mrtrState {
		t.Fatalf("relayed round: %#v state %q", ir.Requests, ir.State)
	}
	relay = &bridge.InputRound{Item: tool, State: ir.State,
		Responses: sdk.InputResponseMap{"q": &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "client's Ada"}}}}
	out, err := tool.Run(bridge.WithInputRound(caller, relay), []byte(`{}`))
	mustNotErr(t, err)
	if got := read(t, out.(toolkit.Resource)); got != "user: accept client's Ada" {
		t.Errorf("the retry: %q", got)
	}

	// A relay for another tool: the caller's session answers.
	other := bridge.WithInputRound(caller, &bridge.InputRound{Item: findTool(t, r.Connector, "ask_model")})
	res, err := call(t, other, r.Connector, "ask_user", `{}`)
	mustNotErr(t, err)
	if got := read(t, res); got != "user: accept caller's Ada" {
		t.Errorf("a relay for another tool: %q", got)
	}
	// A state too long to relay: answered here.
	lt := findTool(t, r.Connector, "long_state")
	out, err = lt.Run(bridge.WithInputRound(caller, &bridge.InputRound{Item: lt}), []byte(`{}`))
	mustNotErr(t, err)
	if got := read(t, out.(toolkit.Resource)); got != "answered here" {
		t.Errorf("a long state: %q", got)
	}
	mustNotErr(t, r.stop(t))
}

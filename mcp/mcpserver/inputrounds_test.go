package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// confirmTool asks the client's user to confirm, through the session's
// elicitation, and reports the answer; the error that ends a question
// goes to failed.
func confirmTool(failed chan<- error) *testTool {
	return funcTool("confirm", func(ctx context.Context, _ json.RawMessage) (any, error) {
		h, ok := toolkit.SessionAs[bridge.ServerRequestHandler](toolkit.SessionFromContext(ctx))
		if !ok {
			return nil, fmt.Errorf("the session cannot ask")
		}
		res, err := h.Elicit(ctx, &sdk.ElicitParams{Message: "sure?", RequestedSchema: &jsonschema.Schema{Type: "object",
			Properties: map[string]*jsonschema.Schema{"ok": {Type: "boolean"}}}})
		if err != nil {
			failed <- err
			return nil, err
		}
		return fmt.Sprintf("confirmed: %s %v", res.Action, res.Content["ok"]), nil
	})
}

var requestStateRE = regexp.MustCompile(`"requestState":"([^"]+)"`)

// A tool's question to a 2026-07-28 client goes out as an input-required
// result whose requestState is good once, for the principal and tool it
// was given to: forged, replayed, another principal's or another tool's
// retries are refused, and a call whose client does not come back in time
// is cancelled.
func TestInputRoundsState(t *testing.T) {
	leakCheck(t)
	failed := make(chan error, 4)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(confirmTool(failed),
		funcTool("other", func(context.Context, json.RawMessage) (any, error) { return "other", nil }))})
	ts := f.serveHTTP(t, WithBearerAuth(tokens, nil))
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	post := func(token, tool, state, answer string) (int, string) {
		t.Helper()
		extra := ""
		if state != "" {
			extra = fmt.Sprintf(`"requestState":%q,`, state)
		}
		if answer != "" {
			extra += `"inputResponses":{"q1":` + answer + `},`
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":{},%s%s}}`, tool, extra, meta)
		return postRaw(t, ts.URL, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool,
			"Authorization": "Bearer " + token}, body)
	}
	ask := func() string {
		t.Helper()
		status, body := post("alice-1", "confirm", "", "")
		m := requestStateRE.FindStringSubmatch(body)
		if status != 200 || m == nil || !strings.Contains(body, `"resultType":"input_required"`) || !strings.Contains(body, `"q1":{"method":"elicitation/create"`) {
			t.Fatalf("first round: %d %s", status, body)
		}
		return m[1]
	}
	yes := `{"action":"accept","content":{"ok":true}}`
	refused := func(what string, status int, body string) {
		t.Helper()
		if status != 400 || !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, "requestState") {
			t.Errorf("%s: %d %s, want the requestState refused", what, status, body)
		}
	}

	state := ask()
	id, _, _ := strings.Cut(state, ".")
	for _, forged := range []string{"forged.1", id + ".2", id, id + ".x", strings.Repeat("A", 26) + ".1"} {
		status, body := post("alice-1", "confirm", forged, yes)
		refused("forged "+forged, status, body)
	}
	status, body := post("bob-1", "confirm", state, yes)
	refused("another principal", status, body)
	status, body = post("alice-1", "other", state, yes)
	refused("another tool", status, body)
	// The call still waits for its answer: the right retry gets the result.
	status, body = post("alice-2", "confirm", state, yes) // alice, another token
	if status != 200 || !strings.Contains(body, "confirmed: accept true") {
		t.Fatalf("the answer: %d %s", status, body)
	}
	status, body = post("alice-1", "confirm", state, yes)
	refused("a replay", status, body)

	// One principal cannot hold more waiting calls than its share; others
	// still can.
	rounds := f.srv.rounds
	set := func(change func(r *inputRounds)) {
		rounds.mu.Lock()
		defer rounds.mu.Unlock()
		change(rounds)
	}
	set(func(r *inputRounds) { r.perPrincipal = 1 })
	first := ask()
	status, body = post("alice-1", "confirm", "", "")
	if status != 200 || !strings.Contains(body, `"isError":true`) || !strings.Contains(body, "wait for input") {
		t.Errorf("alice's second waiting call: %d %s", status, body)
	}
	<-failed // the second call's question failed
	status, body = post("bob-1", "confirm", "", "")
	if status != 200 || !strings.Contains(body, `"resultType":"input_required"`) {
		t.Errorf("bob's waiting call: %d %s", status, body)
	}
	if status, body = post("alice-1", "confirm", first, yes); status != 200 || !strings.Contains(body, "confirmed: accept true") {
		t.Errorf("alice's first call: %d %s", status, body)
	}
	set(func(r *inputRounds) { r.perPrincipal = MaxInputWaitsPerPrincipal })

	// A client that never comes back: the call is cancelled.
	set(func(r *inputRounds) { r.wait = time.Millisecond })
	state = ask()
	select {
	case err := <-failed:
		if err == nil {
			t.Error("the expired question ended without an error")
		}
	case <-time.After(waitLimit):
		t.Fatal("the call waiting for an absent client was never cancelled")
	}
	status, body = post("alice-1", "confirm", state, yes)
	refused("an expired requestState", status, body)
}

// FuzzRequestState checks that no requestState a client makes up, of any
// shape, is taken for a waiting call's, nor panics.
func FuzzRequestState(f *testing.F) {
	for _, seed := range []string{"", ".", "x.1", "x.-1", "x.99999999999999999999", "..", "\x00.1", strings.Repeat("A", 26) + ".1", "a.b.c"} {
		f.Add(seed)
	}
	r := newInputRounds()
	c, err := r.start("alice", "confirm")
	if err != nil {
		f.Fatal(err)
	}
	r.mu.Lock()
	if err := r.register(c); err != nil {
		f.Fatal(err)
	}
	c.round, c.pending, c.timer = 1, &inputAsk{call: c}, time.NewTimer(time.Hour)
	r.mu.Unlock()
	if _, _, err := r.resume(c.id+".1", "alice", &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: "confirm", RequestState: c.id + ".1",
		InputResponses: sdk.InputResponseMap{"q1": &sdk.ElicitResult{Action: "accept"}}}}); err != nil {
		f.Fatalf("the real requestState: %v", err)
	}
	r.mu.Lock()
	c.pending = &inputAsk{call: c} // waiting again, for the fuzzed states
	r.mu.Unlock()
	real := c.id + ".1"
	f.Fuzz(func(t *testing.T, state string) {
		if state == real {
			return
		}
		req := &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: "confirm", RequestState: state,
			InputResponses: sdk.InputResponseMap{"q1": &sdk.ElicitResult{Action: "accept"}}}}
		if ask, _, err := r.resume(state, "alice", req); err == nil || ask != nil {
			t.Fatalf("requestState %q taken", state)
		}
	})
}

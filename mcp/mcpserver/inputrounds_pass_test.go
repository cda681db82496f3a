package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// relayGateway serves, over stateless HTTP with bearer tokens, a toolkit
// whose one connector ("up") reaches the upstream m, with opts.
func relayGateway(t *testing.T, m *testserver.Memory, opts ...Option) string {
	return relayGatewayWith(t, m, []HTTPOption{WithStateless(), WithBearerAuth(tokens, nil)}, opts...)
}

// relayGatewayWith is relayGateway with the HTTP options hopts.
func relayGatewayWith(t *testing.T, m *testserver.Memory, hopts []HTTPOption, opts ...Option) string {
	t.Helper()
	return startGateway(t, "memory://up", []mcp.Option{mcp.OptDialer(m.Dial), mcp.OptServerRequests(mcp.ServerRequests{Forward: true})}, opts, hopts).url
}

// An upstream of 2026-07-28 that answers a call with an input-required
// result has it passed on to a 2026-07-28 client as it is — its input
// requests, by its keys — with the upstream's requestState sealed inside
// the gateway's own: the client never sees it, and the retry goes back
// to the same upstream tool with the client's answers and that state.
// Nothing waits in the gateway, so a replica that shares the keys takes
// the retry; one without them refuses it. The sealed state is good once,
// for the principal, tool and arguments it was given to, until it
// expires.
func TestInputRoundsPass(t *testing.T) {
	leakCheck(t)
	up := newServer(t, testserver.Options{})
	addRequestingTools(up, true)
	m := testserver.NewMemory(up.Server)
	t.Cleanup(m.Close)
	key := bytes.Repeat([]byte{5}, 32)
	a := inputPoster{t, relayGateway(t, m, WithInputStateKeys(key))}
	b := inputPoster{t, relayGateway(t, m, WithInputStateKeys(bytes.Repeat([]byte{6}, 32), key))}
	stranger := inputPoster{t, relayGateway(t, m)}

	const answer = `{"action":"accept","content":{"name":"Ada"}}`
	retry := func(p inputPoster, token, tool, args, state string) (int, string) {
		t.Helper()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%q,"arguments":%s,"requestState":%q,"inputResponses":{"u":%s},`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}}}`,
			tool, args, state, answer)
		return postRaw(t, p.url, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool,
			"Authorization": "Bearer " + token}, body)
	}
	ask := func(p inputPoster) string {
		t.Helper()
		status, body := p.post("alice-1", "ask_user", `{"name":"x"}`, "", "")
		m := requestStateRE.FindStringSubmatch(body)
		if status != 200 || m == nil || !strings.Contains(body, `"resultType":"input_required"`) || !strings.Contains(body, `"u":{"method":"elicitation/create"`) {
			t.Fatalf("first round: %d %s", status, body)
		}
		if strings.Contains(body, "upstream-state") {
			t.Errorf("the upstream's requestState reached the client: %s", body)
		}
		return m[1]
	}
	done := func(what string, status int, body string) {
		t.Helper()
		if status != 200 || !strings.Contains(body, "user: accept Ada") {
			t.Errorf("%s: %d %s", what, status, body)
		}
	}

	// The same replica, and another sharing the key, take the retry.
	state := ask(a)
	status, body := retry(a, "alice-2", "ask_user", ` {"name": "x"}`, state)
	done("the retry", status, body)
	status, body = retry(a, "alice-1", "ask_user", `{"name":"x"}`, state)
	refused(t, "a replay", status, body, "answered already")
	state = ask(a)
	status, body = retry(b, "alice-1", "ask_user", `{"name":"x"}`, state)
	done("the retry on another replica", status, body)
	status, body = retry(stranger, "alice-1", "ask_user", `{"name":"x"}`, ask(a))
	refused(t, "a replica without the key", status, body, "not issued by this server")

	// Another principal, arguments or tool; a tampered state.
	state = ask(a)
	status, body = retry(a, "bob-1", "ask_user", `{"name":"x"}`, state)
	refused(t, "another principal", status, body, "another principal")
	status, body = retry(a, "alice-1", "ask_user", `{"name":"y"}`, state)
	refused(t, "other arguments", status, body, "arguments")
	status, body = retry(a, "alice-1", "ask_model", `{"name":"x"}`, state)
	refused(t, "another tool", status, body, "another principal, tool")
	status, body = retry(a, "alice-1", "ask_user", `{"name":"x"}`, tamper(state, 30))
	refused(t, "tampered", status, body, "not issued by this server")
	status, body = retry(a, "alice-1", "ask_user", `{"name":"x"}`, state)
	done("after the refusals", status, body)
}

// A relayed requestState past its expiry is refused.
func TestInputRoundsPassExpired(t *testing.T) {
	leakCheck(t)
	k, err := newStateKeys(nil)
	mustNotErr(t, err)
	r := newInputRounds(k)
	r.wait = -1 // expired when made
	rq := toolRoundRequest("alice", "ask_user", "up.ask_user", "")
	c, err := r.start(rq)
	mustNotErr(t, err)
	res := r.passed(c, &bridge.InputRequired{State: "s"}).(*sdk.CallToolResult)
	rq.state = res.RequestState
	if _, err := r.admit(rq); err != errStateExpired {
		t.Errorf("admit: %v", err)
	}
}

// addRequestingItems adds to an upstream of 2026-07-28 the prompt "greet" and
// the resource "test://asking", which answer with an input-required
// result (elicitation, key "u", state "item-state") until they get the
// answer, then use it.
func addRequestingItems(s *testserver.Server) {
	const state = "item-state"
	elicit := &sdk.ElicitParams{Message: "name?", RequestedSchema: &jsonschema.Schema{Type: "object",
		Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}}
	name := func(answers sdk.InputResponseMap, got string) (string, bool) {
		a, ok := answers["u"].(*sdk.ElicitResult)
		if !ok || got != state {
			return "", false
		}
		return fmt.Sprint(a.Content["name"]), true
	}
	s.AddPrompt(&sdk.Prompt{Name: "greet"}, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		n, ok := name(req.Params.InputResponses, req.Params.RequestState)
		if !ok {
			return &sdk.GetPromptResult{InputRequests: sdk.InputRequestMap{"u": elicit}, RequestState: state}, nil
		}
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "hello " + n}}}}, nil
	})
	s.AddResource(&sdk.Resource{URI: "test://asking", Name: "asking", MIMEType: "text/plain"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		n, ok := name(req.Params.InputResponses, req.Params.RequestState)
		if !ok {
			return &sdk.ReadResourceResult{InputRequests: sdk.InputRequestMap{"u": elicit}, RequestState: state}, nil
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "read by " + n}}}, nil
	})
}

// An upstream's input-required results of prompts/get and resources/read
// reach a 2026-07-28 client as they are, relayed like a tool's, and a
// 2025-11-25 client as elicitation requests the connector answers through
// it; a relayed state of a prompt does not serve a tool or a resource.
func TestInputRoundsPassPromptsResources(t *testing.T) {
	leakCheck(t)
	up := newServer(t, testserver.Options{})
	addRequestingItems(up)
	addRequestingTools(up, true)
	m := testserver.NewMemory(up.Server)
	t.Cleanup(m.Close)
	url := relayGatewayWith(t, m, nil)
	ctx := context.Background()
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		asked := 0
		cs, err := connectHTTPVersion(t, url, version, &sdk.ClientOptions{
			ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				asked++
				return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
			},
		})
		mustNotErr(t, err)
		p, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "greet"})
		if err != nil || len(p.Messages) != 1 || p.Messages[0].Content.(*sdk.TextContent).Text != "hello Ada" {
			t.Errorf("%s: prompt: %v %s", version, err, jsonOf(t, p))
		}
		r, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "test://asking"})
		if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "read by Ada" {
			t.Errorf("%s: resource: %v %s", version, err, jsonOf(t, r))
		}
		if asked != 2 {
			t.Errorf("%s: the client was asked %d times, want 2", version, asked)
		}
	}

	// Raw: the relayed round, and its state refused elsewhere.
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	post := func(method, name, params string) (int, string) {
		t.Helper()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{%s,%s}}`, method, params, meta)
		return postRaw(t, url, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name}, body)
	}
	status, body := post("prompts/get", "greet", `"name":"greet"`)
	m1 := requestStateRE.FindStringSubmatch(body)
	if status != 200 || m1 == nil || !strings.Contains(body, `"u":{"method":"elicitation/create"`) || strings.Contains(body, "item-state") {
		t.Fatalf("prompt, first round: %d %s", status, body)
	}
	answer := `"inputResponses":{"u":{"action":"accept","content":{"name":"Bo"}}}`
	status, body = post("tools/call", "ask_user", fmt.Sprintf(`"name":"ask_user","arguments":{},"requestState":%q,%s`, m1[1], answer))
	refused(t, "a prompt's state for a tool", status, body, "another principal, tool")
	status, body = post("resources/read", "test://asking", fmt.Sprintf(`"uri":"test://asking","requestState":%q,%s`, m1[1], answer))
	refused(t, "a prompt's state for a resource", status, body, "another principal, tool")
	status, body = post("prompts/get", "greet", fmt.Sprintf(`"name":"greet","arguments":{"x":"1"},"requestState":%q,%s`, m1[1], answer))
	refused(t, "a prompt's state for other arguments", status, body, "arguments")
	status, body = post("prompts/get", "greet", fmt.Sprintf(`"name":"greet","requestState":%q,%s`, m1[1], answer))
	if status != 200 || !strings.Contains(body, "hello Bo") {
		t.Errorf("prompt, retry: %d %s", status, body)
	}
	status, body = post("prompts/get", "greet", fmt.Sprintf(`"name":"greet","requestState":%q,%s`, m1[1], answer))
	refused(t, "a prompt's state replayed", status, body, "answered already")
}

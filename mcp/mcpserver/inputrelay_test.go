package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// relayGateway serves, over HTTP with bearer tokens, a toolkit whose one
// connector ("up") reaches the upstream m, with opts.
func relayGateway(t *testing.T, m *testserver.Memory, opts ...Option) string {
	t.Helper()
	d := mustDelegate(t, mcp.OptLogger(quietLogger()), mcp.OptDialer(m.Dial), mcp.OptForwardServerRequests())
	tk, err := toolkit.New(toolkit.WithDelegate(d))
	mustNotErr(t, err)
	srv, err := New(tk, nil, opts...)
	mustNotErr(t, err)
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tk.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		mustNotErr(t, <-runDone)
	})
	mustNotErr(t, tk.AddConnectorNS("up", "memory://up"))
	wctx, wcancel := context.WithTimeout(ctx, waitLimit)
	defer wcancel()
	_, err = tk.WaitConnectors(wctx)
	mustNotErr(t, err)
	tk.WaitEvents()
	h, err := srv.Handler(WithStateless(), WithBearerAuth(tokens, nil))
	mustNotErr(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
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
func TestInputRelay(t *testing.T) {
	leakCheck(t)
	up := newServer(t, testserver.Options{})
	addAskingTools(up, true)
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
func TestInputRelayExpired(t *testing.T) {
	leakCheck(t)
	k, err := newStateKeys(nil)
	mustNotErr(t, err)
	r := newInputRounds(k)
	r.wait = -1 // expired when made
	c, err := r.start("alice", "ask_user", nil)
	mustNotErr(t, err)
	res := r.relayed(c, "up.ask_user", &bridge.InputRequired{State: "s"})
	req := &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: "ask_user", RequestState: res.RequestState}}
	if _, err := r.admit(res.RequestState, "alice", "up.ask_user", req); err != errStateExpired {
		t.Errorf("admit: %v", err)
	}
}

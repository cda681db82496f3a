package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
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

// inputPoster posts raw tools/call requests of a 2026-07-28 client that
// offers elicitation to a server's HTTP face.
type inputPoster struct {
	t   *testing.T
	url string
}

// post sends a tools/call of tool with args, as the principal of token,
// with state and answer (the inputResponses' "q1") when not empty.
func (p inputPoster) post(token, tool, args, state, answer string) (int, string) {
	p.t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	extra := ""
	if state != "" {
		extra = fmt.Sprintf(`"requestState":%q,`, state)
	}
	if answer != "" {
		extra += `"inputResponses":{"q1":` + answer + `},`
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s,%s%s}}`, tool, args, extra, meta)
	return postRaw(p.t, p.url, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool,
		"Authorization": "Bearer " + token}, body)
}

// ask starts a call of confirm as alice and returns the requestState of
// its question.
func (p inputPoster) ask() string {
	p.t.Helper()
	status, body := p.post("alice-1", "confirm", `{"n":1}`, "", "")
	m := requestStateRE.FindStringSubmatch(body)
	if status != 200 || m == nil || !strings.Contains(body, `"resultType":"input_required"`) || !strings.Contains(body, `"q1":{"method":"elicitation/create"`) {
		p.t.Fatalf("first round: %d %s", status, body)
	}
	return m[1]
}

const yes = `{"action":"accept","content":{"ok":true}}`

// refused checks that a retry was refused for its requestState, with the
// message saying why (want).
func refused(t *testing.T, what string, status int, body, want string) {
	t.Helper()
	if status != 400 || !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, "requestState") || !strings.Contains(body, want) {
		t.Errorf("%s: %d %s, want the requestState refused (%s)", what, status, body, want)
	}
}

// tamper returns state with the byte at i changed.
func tamper(state string, i int) string {
	raw, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil {
		panic(err)
	}
	raw[i%len(raw)] ^= 0x01
	return base64.RawURLEncoding.EncodeToString(raw)
}

// A tool's question to a 2026-07-28 client goes out as an input-required
// result whose requestState is sealed and good once, for the principal,
// tool and arguments it was given to: forged, tampered, replayed, another
// principal's, another tool's or other arguments' retries are refused,
// and a call whose client does not come back in time is cancelled and its
// requestState refused as expired.
func TestInputRoundsState(t *testing.T) {
	leakCheck(t)
	failed := make(chan error, 4)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(confirmTool(failed),
		funcTool("other", func(context.Context, json.RawMessage) (any, error) { return "other", nil }))})
	ts := f.serveHTTP(t, WithBearerAuth(tokens, nil))
	p := inputPoster{t, ts.URL}

	state := p.ask()
	forged := map[string]string{
		"not base64":          "forged.1",
		"short":               "AAAA",
		"random":              base64.RawURLEncoding.EncodeToString(make([]byte, 80)),
		"nonce tampered":      tamper(state, 0),
		"ciphertext tampered": tamper(state, 20),
		"tag tampered":        tamper(state, -1+len(state)*3/4),
		"truncated":           state[:len(state)-2],
		"too long":            strings.Repeat("A", maxInputStateLen+1),
	}
	// One sealed by another server (another key) for the same call.
	other, err := newStateKeys(nil)
	mustNotErr(t, err)
	opened, err := f.srv.rounds.keys.open(state)
	mustNotErr(t, err)
	forged["another key"] = other.seal(opened)
	for what, s := range forged {
		status, body := p.post("alice-1", "confirm", `{"n":1}`, s, yes)
		refused(t, what, status, body, "not issued by this server")
	}
	status, body := p.post("bob-1", "confirm", `{"n":1}`, state, yes)
	refused(t, "another principal", status, body, "another principal")
	status, body = p.post("alice-1", "other", `{"n":1}`, state, yes)
	refused(t, "another tool", status, body, "another principal, tool")
	status, body = p.post("alice-1", "confirm", `{"n":2}`, state, yes)
	refused(t, "other arguments", status, body, "arguments")
	// The call still waits for its answer: the right retry gets the
	// result, whatever the arguments' encoding.
	status, body = p.post("alice-2", "confirm", ` { "n" : 1 } `, state, yes) // alice, another token
	if status != 200 || !strings.Contains(body, "confirmed: accept true") {
		t.Fatalf("the answer: %d %s", status, body)
	}
	status, body = p.post("alice-1", "confirm", `{"n":1}`, state, yes)
	refused(t, "a replay", status, body, "answered already")

	// A replay while the call waits again (a later round) is refused as
	// answered, not taken for the new round.
	twice := funcTool("twice", func(ctx context.Context, _ json.RawMessage) (any, error) {
		h, _ := toolkit.SessionAs[bridge.ServerRequestHandler](toolkit.SessionFromContext(ctx))
		for range 2 {
			if _, err := h.Elicit(ctx, &sdk.ElicitParams{Message: "again?", RequestedSchema: &jsonschema.Schema{Type: "object"}}); err != nil {
				return nil, err
			}
		}
		return "twice", nil
	})
	mustNotErr(t, f.tk.AddTool(twice))
	f.tk.WaitEvents()
	status, body = p.post("alice-1", "twice", `{}`, "", "")
	m := requestStateRE.FindStringSubmatch(body)
	if status != 200 || m == nil {
		t.Fatalf("twice, first round: %d %s", status, body)
	}
	status, body = p.post("alice-1", "twice", `{}`, m[1], yes)
	m2 := requestStateRE.FindStringSubmatch(body)
	if status != 200 || m2 == nil || !strings.Contains(body, `"q2"`) {
		t.Fatalf("twice, second round: %d %s", status, body)
	}
	status, body = p.post("alice-1", "twice", `{}`, m[1], yes)
	refused(t, "a replay of the first round", status, body, "answered already")
	twiceDone := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"twice","arguments":{},"requestState":%q,"inputResponses":{"q2":` + yes + `},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}}}`
	status, body = postRaw(t, ts.URL, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "twice",
		"Authorization": "Bearer alice-1"}, fmt.Sprintf(twiceDone, m2[1]))
	if status != 200 || !strings.Contains(body, `"text":"twice"`) {
		t.Fatalf("twice, end: %d %s", status, body)
	}

	// One principal cannot hold more waiting calls than its share; others
	// still can.
	rounds := f.srv.rounds
	set := func(change func(r *inputRounds)) {
		rounds.mu.Lock()
		defer rounds.mu.Unlock()
		change(rounds)
	}
	set(func(r *inputRounds) { r.perPrincipal = 1 })
	first := p.ask()
	status, body = p.post("alice-1", "confirm", `{"n":1}`, "", "")
	if status != 200 || !strings.Contains(body, `"isError":true`) || !strings.Contains(body, "wait for input") {
		t.Errorf("alice's second waiting call: %d %s", status, body)
	}
	<-failed // the second call's question failed
	status, body = p.post("bob-1", "confirm", `{"n":1}`, "", "")
	if status != 200 || !strings.Contains(body, `"resultType":"input_required"`) {
		t.Errorf("bob's waiting call: %d %s", status, body)
	}
	if status, body = p.post("alice-1", "confirm", `{"n":1}`, first, yes); status != 200 || !strings.Contains(body, "confirmed: accept true") {
		t.Errorf("alice's first call: %d %s", status, body)
	}
	set(func(r *inputRounds) { r.perPrincipal = MaxInputWaitsPerPrincipal })

	// A client that never comes back: the call is cancelled, and its
	// requestState has expired.
	set(func(r *inputRounds) { r.wait = time.Millisecond })
	state = p.ask()
	select {
	case err := <-failed:
		if err == nil {
			t.Error("the expired question ended without an error")
		}
	case <-time.After(waitLimit):
		t.Fatal("the call waiting for an absent client was never cancelled")
	}
	status, body = p.post("alice-1", "confirm", `{"n":1}`, state, yes)
	refused(t, "an expired requestState", status, body, "expired")
}

// Two servers given the same keys open each other's requestStates, but a
// call waits for its input in the process that started it: a retry that
// reaches the other server is refused as naming no call waiting there
// (not as a forgery), and the call still takes the retry on its own
// server. A server given the old key second (rotation) still opens what
// that key sealed; one without it does not.
func TestInputStateAcrossReplicas(t *testing.T) {
	leakCheck(t)
	key, old := bytes.Repeat([]byte{7}, 32), bytes.Repeat([]byte{9}, 16)
	replica := func(keys ...[]byte) (*fixture, inputPoster) {
		f := newFixture(t, []toolkit.Option{toolkit.WithTool(confirmTool(make(chan error, 4)))}, WithInputStateKeys(keys...))
		return f, inputPoster{t, f.serveHTTP(t, WithBearerAuth(tokens, nil)).URL}
	}
	_, a := replica(key)
	_, b := replica(key)
	_, rotated := replica(bytes.Repeat([]byte{8}, 32), key)
	_, stranger := replica(old)

	state := a.ask()
	status, body := b.post("alice-1", "confirm", `{"n":1}`, state, yes)
	refused(t, "the other replica", status, body, "runs on another replica")
	status, body = rotated.post("alice-1", "confirm", `{"n":1}`, state, yes)
	refused(t, "a replica with the key second", status, body, "runs on another replica")
	status, body = stranger.post("alice-1", "confirm", `{"n":1}`, state, yes)
	refused(t, "a replica without the key", status, body, "not issued by this server")
	if status, body = a.post("alice-1", "confirm", `{"n":1}`, state, yes); status != 200 || !strings.Contains(body, "confirmed: accept true") {
		t.Errorf("the replica that asked: %d %s", status, body)
	}
}

// WithInputStateKeys takes AES keys only.
func TestWithInputStateKeys(t *testing.T) {
	tk, err := toolkit.New()
	mustNotErr(t, err)
	for _, keys := range [][][]byte{nil, {make([]byte, 15)}, {make([]byte, 32), make([]byte, 33)}, {nil}} {
		if _, err := New(tk, nil, WithInputStateKeys(keys...)); !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "WithInputStateKeys") {
			t.Errorf("keys of %d: %v", len(keys), err)
		}
	}
}

// redeem remembers at most max unexpired states: past it a new one is
// refused (forgetting one would let it be answered twice), and expired
// ones make room.
func TestStateKeysRedeemBound(t *testing.T) {
	k, err := newStateKeys(nil)
	mustNotErr(t, err)
	k.max = 2
	now := time.Now()
	st := func(round uint32, ttl time.Duration) *inputState {
		return &inputState{round: round, expires: now.Add(ttl)}
	}
	mustNotErr(t, k.redeem(now, st(1, time.Minute)))
	mustNotErr(t, k.redeem(now, st(2, time.Second)))
	if err := k.redeem(now, st(1, time.Minute)); err != errStateAnswered {
		t.Errorf("twice: %v", err)
	}
	if err := k.redeem(now, st(3, time.Minute)); err != errStateBusy {
		t.Errorf("past the bound: %v", err)
	}
	if err := k.redeem(now.Add(2*time.Second), st(3, time.Minute)); err != nil {
		t.Errorf("once one expired: %v", err)
	}
}

// toolRoundRequest is the roundRequest of a tools/call of tool (key) with
// no arguments by principal, with state.
func toolRoundRequest(principal, tool, key, state string) *roundRequest {
	return &roundRequest{method: "tools/call", key: key, name: tool, state: state, principal: principal,
		answers: sdk.InputResponseMap{"q1": &sdk.ElicitResult{Action: "accept"}},
		result: func(asks sdk.InputRequestMap, state string) sdk.Result {
			return &sdk.CallToolResult{InputRequests: asks, RequestState: state}
		}}
}

// FuzzRequestState checks that no requestState a client makes up, of any
// shape — tampered sealed ones included —, is taken for a waiting call's,
// nor panics; and that the decoder of opened plaintexts refuses what seal
// did not make.
func FuzzRequestState(f *testing.F) {
	keys, err := newStateKeys([][]byte{bytes.Repeat([]byte{1}, 32)})
	if err != nil {
		f.Fatal(err)
	}
	r := newInputRounds(keys)
	c, err := r.start(toolRoundRequest("alice", "confirm", "builtin.confirm", ""))
	if err != nil {
		f.Fatal(err)
	}
	r.mu.Lock()
	if err := r.register(c); err != nil {
		f.Fatal(err)
	}
	c.round, c.pending, c.timer, c.request = 1, &serverRequest{call: c}, time.NewTimer(time.Hour), requestHash("confirm", nil)
	r.mu.Unlock()
	real := keys.seal(&inputState{call: c.id, round: 1, expires: time.Now().Add(time.Hour), principal: "alice", tool: "confirm", request: c.request,
		target: "tools/call builtin.confirm"})
	take := func(state string) (*serverRequest, error) {
		rq := toolRoundRequest("alice", "confirm", "builtin.confirm", state)
		s, err := r.admit(rq)
		if err != nil {
			return nil, err
		}
		if s.passed {
			return nil, errors.New("a relayed state")
		}
		ask, _, err := r.resume(s, rq.answers)
		return ask, err
	}
	if _, err := take(real); err != nil {
		f.Fatalf("the real requestState: %v", err)
	}
	r.mu.Lock()
	c.round, c.pending = 2, &serverRequest{call: c} // waiting again, for the fuzzed states
	r.mu.Unlock()
	for _, seed := range []string{"", ".", "x.1", "a.b.c", "\x00", strings.Repeat("A", 26) + ".1", real, real[:len(real)-1], tamper(real, 5), strings.Repeat("_", 200)} {
		f.Add(seed, []byte(seed))
	}
	f.Add("", []byte{inputStateVersion})
	f.Add("", append([]byte{inputStateVersion, 0}, make([]byte, 60+4)...))
	f.Add("", append([]byte{inputStateVersion, 1}, make([]byte, 60+4)...))
	f.Add("", append([]byte{inputStateVersion, 0}, append(make([]byte, 60+2), 1, 'x', 0)...))
	f.Add("", append([]byte{inputStateVersion, 0}, append(make([]byte, 60+3), 1, 'x')...))
	f.Add("", append([]byte{inputStateVersion, 2}, make([]byte, 60+4)...))
	f.Add("", append(append([]byte{inputStateVersion, 0}, make([]byte, 60)...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01))
	f.Fuzz(func(t *testing.T, state string, plain []byte) {
		if ask, err := take(state); err == nil || ask != nil {
			t.Fatalf("requestState %q taken", state)
		}
		s, err := parseInputState(plain)
		if err != nil {
			return
		}
		// What parses is what seal makes of it, byte for byte.
		again, err := keys.open(keys.seal(s))
		if err != nil || *again != *s {
			t.Fatalf("parsed %q as %+v, which does not seal back (%v)", plain, s, err)
		}
	})
}

// TestInputRoundsFairShare: with the default bounds, no small group of
// principals fills the calls waiting for input: sixty-four principals
// that each take every slot they can leave room for another, who still
// gets calls to wait; a waiting call is held minutes, not ten.
func TestInputRoundsFairShare(t *testing.T) {
	r := newInputRounds(nil)
	fill := func(principal string) int {
		r.mu.Lock()
		defer r.mu.Unlock()
		n := 0
		for ; n < MaxInputWaits; n++ {
			c := &inputCall{principal: principal}
			_, _ = rand.Read(c.id[:])
			if err := r.register(c); err != nil {
				if !errors.Is(err, toolkit.ErrUnavailable) {
					t.Fatalf("%s: %v", principal, err)
				}
				break
			}
		}
		return n
	}
	for i := range 16 {
		if n := fill(fmt.Sprint("greedy-", i)); n > MaxInputWaits/64 {
			t.Errorf("greedy-%d holds %d waiting calls, want at most %d", i, n, MaxInputWaits/64)
		}
	}
	for i := 16; i < 64; i++ {
		fill(fmt.Sprint("greedy-", i))
	}
	if n := fill("other"); n < inputReserveShare {
		t.Errorf("another principal got %d waiting calls after 64 greedy ones, want at least %d", n, inputReserveShare)
	}
	if InputWait > 5*time.Minute {
		t.Errorf("InputWait %v holds a slot longer than a person needs", InputWait)
	}
}

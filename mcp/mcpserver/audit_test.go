package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/policy"
	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/resource"
)

// auditBuffer collects audit lines; safe for concurrent use.
type auditBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *auditBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// records decodes the lines written so far.
func (b *auditBuffer) records(t *testing.T) (recs []map[string]any, raw string) {
	t.Helper()
	b.mu.Lock()
	raw = b.buf.String()
	b.mu.Unlock()
	sc := bufio.NewScanner(strings.NewReader(raw))
	for sc.Scan() {
		r := map[string]any{}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs, raw
}

// TestAuditEveryToolsCall: every tools/call is in the toolkit's audit
// once — those refused before the toolkit's Call (a name the server does
// not serve, arguments that are not an object, an unknown name through
// call_tool) with the decision "none" and the refusal's outcome — each
// with the client's principal and session, and none with its arguments.
func TestAuditEveryToolsCall(t *testing.T) {
	leakCheck(t)
	var audit auditBuffer
	tkOpts := func() []toolkit.Option {
		eng, err := policy.New(context.Background(), policy.Config{Rules: []policy.Rule{{Name: "no-classified", Effect: toolkit.Deny, Tools: []string{"classified"}}}})
		mustNotErr(t, err)
		return []toolkit.Option{
			toolkit.WithTool(namedTool("echo", "builtin"), namedTool("classified", "builtin")),
			toolkit.WithPolicy(eng), toolkit.WithAudit(slog.NewJSONHandler(&audit, nil)),
		}
	}
	plain := newFixture(t, tkOpts())
	search := newFixture(t, tkOpts(), WithToolSearch(ToolSearch{}))
	connect := func(f *fixture) *sdk.ClientSession {
		cs, err := connectHTTP(t, f.serveHTTP(t, WithBearerAuth(tokens, nil)).URL, bearer("alice-1"), nil)
		mustNotErr(t, err)
		return cs
	}
	a, b := connect(plain), connect(search)
	const secret = "hush-hush"
	call := func(cs *sdk.ClientSession, name string, args any) {
		t.Helper()
		cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	}
	call(a, "echo", map[string]any{"q": secret})
	call(a, "nope", map[string]any{"q": secret})
	call(a, "echo", []string{secret})
	call(a, "classified", map[string]any{"q": secret})
	call(b, CallToolName, map[string]any{"name": "echo", "arguments": map[string]any{"q": secret}})
	call(b, CallToolName, map[string]any{"name": "nope", "arguments": map[string]any{"q": secret}})

	recs, raw := audit.records(t)
	if strings.Contains(raw, secret) {
		t.Fatalf("an argument reached the audit:\n%s", raw)
	}
	var got []string
	sessions := map[any]bool{}
	for _, r := range recs {
		for _, f := range []string{"time", "principal", "session", "namespace", "tool", "args_sha256", "decision", "rule", "outcome", "duration", "upstream"} {
			if _, ok := r[f]; !ok {
				t.Errorf("a record without %s: %v", f, r)
			}
		}
		if r["principal"] != "alice" || r["session"] == "" || len(fmt.Sprint(r["args_sha256"])) != 64 {
			t.Errorf("record %v", r)
		}
		sessions[r["session"]] = true
		got = append(got, fmt.Sprintf("%v %v %v", r["tool"], r["decision"], r["outcome"]))
	}
	want := []string{
		"echo allow ok",
		"nope none not_found",
		"echo none bad_input",
		"classified deny denied",
		"echo allow ok",
		"nope none not_found",
	}
	if !slices.Equal(got, want) {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(sessions) != 2 {
		t.Errorf("sessions %v, want the two clients'", sessions)
	}
}

// TestAuditTooManyCalls: a tools/call refused for the session's ceiling
// on calls in flight is in the audit, as unavailable.
func TestAuditTooManyCalls(t *testing.T) {
	leakCheck(t)
	var audit auditBuffer
	started, release := make(chan struct{}), make(chan struct{})
	slow := funcTool("slow", func(context.Context, json.RawMessage) (any, error) {
		close(started)
		<-release
		return "done", nil
	})
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(slow), toolkit.WithAudit(slog.NewJSONHandler(&audit, nil))}, WithMaxSessionCalls(1))
	cs := f.connect(t, nil)
	first := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "slow"})
		first <- err
	}()
	<-started
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "slow"}); err == nil {
		t.Fatal("a second call in flight was not refused")
	}
	close(release)
	mustNotErr(t, <-first)
	recs, _ := audit.records(t)
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%v %v %v", r["tool"], r["decision"], r["outcome"]))
	}
	if want := []string{"slow none unavailable", "slow none ok"}; !slices.Equal(got, want) {
		t.Errorf("records %q, want %q", got, want)
	}
}

// TestAuditRefusedInputRounds: a retry of a 2026-07-28 input round
// refused for its requestState — forged, tampered, truncated, another
// principal's, other arguments', replayed — is in the audit once each, as
// bad input with the refusal's reason; the call that asked and was
// answered is in it once.
func TestAuditRefusedInputRounds(t *testing.T) {
	leakCheck(t)
	var audit auditBuffer
	failed := make(chan error, 4)
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(confirmTool(failed)), toolkit.WithAudit(slog.NewJSONHandler(&audit, nil))})
	p := inputPoster{t, f.serveHTTP(t, WithBearerAuth(tokens, nil)).URL}
	state := p.ask()
	retries := []struct{ token, args, state, reason string }{
		{"alice-1", `{"n":1}`, "forged.1", "not issued by this server"},
		{"alice-1", `{"n":1}`, tamper(state, 20), "not issued by this server"},
		{"alice-1", `{"n":1}`, state[:len(state)-2], "not issued by this server"},
		{"bob-1", `{"n":1}`, state, "another principal"},
		{"alice-1", `{"n":2}`, state, "another principal, tool or arguments"},
		{"alice-1", `{"n":1}`, state, ""}, // the answer
		{"alice-1", `{"n":1}`, state, "answered already"},
	}
	for _, r := range retries {
		status, body := p.post(r.token, "confirm", r.args, r.state, yes)
		if r.reason != "" {
			refused(t, r.reason, status, body, r.reason)
		} else if status != 200 || !strings.Contains(body, "confirmed: accept true") {
			t.Fatalf("the answer: %d %s", status, body)
		}
	}
	recs, _ := audit.records(t)
	var got []string
	for _, r := range recs {
		reason, _ := r["reason"].(string)
		got = append(got, fmt.Sprintf("%v %v %v", r["principal"], r["outcome"], reason))
	}
	want := []string{
		"alice bad_input " + errStateForged.Message,
		"alice bad_input " + errStateForged.Message,
		"alice bad_input " + errStateForged.Message,
		"bob bad_input " + errStateOther.Message,
		"alice bad_input " + errStateOther.Message,
		"alice ok ",
		"alice bad_input " + errStateAnswered.Message,
	}
	if !slices.Equal(got, want) {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAuditPromptsAndResources: each prompts/get and resources/read is
// one audit record when it ends — served, an unknown name or URI, bad
// arguments, a retry whose requestState is forged — with the client's
// principal and session (none for a 2026-07-28 request), the namespace it resolved to, the prompt's
// arguments only as their digest, the outcome and, for a refused round,
// the reason.
func TestAuditPromptsAndResources(t *testing.T) {
	leakCheck(t)
	var audit auditBuffer
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"topic": {Type: "string"}}, Required: []string{"topic"}}
	p := &renderPrompt{testPrompt: testPrompt{name: "brief", schema: schema},
		render: func(_ context.Context, in json.RawMessage) (*prompt.Rendered, error) {
			if !strings.Contains(string(in), "topic") {
				return nil, fmt.Errorf("%w: topic is required", toolkit.ErrBadParameter)
			}
			return &prompt.Rendered{Messages: []prompt.Message{{Role: "user", Content: resource.Must("m", []byte("about it"))}}}, nil
		}}
	f := newFixture(t, []toolkit.Option{
		toolkit.WithPrompt(p),
		toolkit.WithResource(&staticResource{uri: "file:///a", name: "a", typ: "text/plain", data: []byte("a")}),
		toolkit.WithAudit(slog.NewJSONHandler(&audit, nil)),
	})
	url := f.serveHTTP(t, WithBearerAuth(tokens, nil)).URL
	cs, err := connectHTTP(t, url, bearer("alice-1"), nil)
	mustNotErr(t, err)
	ctx := context.Background()
	const secret = "hush-hush"
	if _, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "brief", Arguments: map[string]string{"topic": secret}}); err != nil {
		t.Fatal(err)
	}
	cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "nope", Arguments: map[string]string{"topic": secret}})
	cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "brief", Arguments: map[string]string{"other": secret}})
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "file:///a"}); err != nil {
		t.Fatal(err)
	}
	cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "file:///nope"})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	status, body := postRaw(t, url, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "prompts/get", "Mcp-Name": "brief", "Authorization": "Bearer bob-1"},
		`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"brief","arguments":{"topic":"x"},"requestState":"forged.1","inputResponses":{"q1":`+yes+`},`+meta+`}}`)
	refused(t, "a forged requestState", status, body, "not issued by this server")

	recs, raw := audit.records(t)
	if strings.Contains(raw, secret) {
		t.Fatalf("an argument reached the audit:\n%s", raw)
	}
	var got []string
	for _, r := range recs {
		name := r["prompt"]
		if name == nil {
			name = r["uri"]
		}
		reason, _ := r["reason"].(string)
		got = append(got, fmt.Sprintf("%v|%v|%v|%v|%v|%v", r["msg"], r["principal"], r["namespace"], name, r["outcome"], reason))
		if (r["session"] == "" && r["principal"] == "alice") || len(fmt.Sprint(r["args_sha256"])) != 64 || r["decision"] != "none" {
			t.Errorf("record %v", r)
		}
	}
	want := []string{
		"prompt get|alice|builtin|brief|ok|",
		"prompt get|alice||nope|not_found|",
		"prompt get|alice|builtin|brief|bad_input|",
		"resource read|alice|builtin|file:///a|ok|",
		"resource read|alice||file:///nope|not_found|",
		"prompt get|bob|builtin|brief|bad_input|" + errStateForged.Message,
	}
	if !slices.Equal(got, want) {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

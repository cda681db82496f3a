package toolkit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit/internal/policyctx"
	"github.com/llmkit/toolkit/resource"
)

// runCounter returns a tool that counts its runs.
func runCounter(name string) (*testTool, *atomic.Int64) {
	var n atomic.Int64
	return &testTool{name: name, run: func(_ context.Context, in json.RawMessage) (any, error) {
		n.Add(1)
		return string(in), nil
	}}, &n
}

// denyFor is a policy that denies the tools named in names to principal
// (every principal when it is "*"), and asks for the tools in ask.
func denyFor(principal string, names ...string) PolicyFunc {
	return func(_ context.Context, req PolicyRequest) Decision {
		for _, n := range names {
			if req.Tool.Name() == n && (principal == "*" || req.Principal == principal) {
				return Decision{Effect: Deny, Rule: "no-" + n, Reason: "not for " + principal}
			}
		}
		return Decision{Effect: Allow}
	}
}

func TestPolicyDenyRefusesAndNamesTheRule(t *testing.T) {
	ctx := context.Background()
	secret, runs := runCounter("secret")
	tk := mustNew(t, WithTool(secret, newTool("open")), WithPolicy(denyFor("bob", "secret")))

	_, err := tk.Call(WithPrincipal(ctx, "bob"), "secret")
	var pe *PolicyError
	if !errors.Is(err, ErrDenied) || !errors.As(err, &pe) {
		t.Fatalf("bob calling secret: %v, want a *PolicyError wrapping ErrDenied", err)
	}
	if errors.Is(err, ErrRateLimited) || errors.Is(err, ErrToolFailed) {
		t.Errorf("the refusal %v wraps more than ErrDenied", err)
	}
	if pe.Decision.Rule != "no-secret" || !strings.Contains(err.Error(), `rule "no-secret"`) || !strings.Contains(err.Error(), "not for bob") {
		t.Errorf("error %q does not name the rule and its reason", err)
	}
	if runs.Load() != 0 {
		t.Errorf("the denied tool ran %d times", runs.Load())
	}
	if _, err := tk.Call(WithPrincipal(ctx, "alice"), "secret"); err != nil {
		t.Errorf("alice calling secret: %v", err)
	}
	if _, err := tk.Call(ctx, "open"); err != nil {
		t.Errorf("calling open without a principal: %v", err)
	}
}

func TestPolicyDenyHidesPerPrincipal(t *testing.T) {
	ctx := context.Background()
	tk := mustNew(t, WithTool(newTool("secret"), newTool("open")), WithPolicy(denyFor("bob", "secret")))
	names := func(ctx context.Context, req ListRequest) []string {
		t.Helper()
		resp, err := tk.List(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range resp.Items {
			out = append(out, it.Name)
		}
		if int(resp.Count) != len(out) && req.Limit == nil {
			t.Errorf("Count %d for %d items", resp.Count, len(out))
		}
		return out
	}
	bob, alice := WithPrincipal(ctx, "bob"), WithPrincipal(ctx, "alice")
	if got := names(bob, ListRequest{Type: ListTypeTools}); fmt.Sprint(got) != "[open]" {
		t.Errorf("bob lists %v, want [open]", got)
	}
	if got := names(alice, ListRequest{Type: ListTypeTools}); fmt.Sprint(got) != "[open secret]" {
		t.Errorf("alice lists %v, want [open secret]", got)
	}
	if got := names(bob, ListRequest{Name: "secret"}); len(got) != 0 {
		t.Errorf("bob finds %v by name", got)
	}
	one := uint(1)
	if got := names(bob, ListRequest{Type: ListTypeTools, Limit: &one}); fmt.Sprint(got) != "[open]" {
		t.Errorf("bob's first page is %v, want [open]", got)
	}
	if got := names(policyctx.Unfiltered(bob), ListRequest{Type: ListTypeTools}); fmt.Sprint(got) != "[open secret]" {
		t.Errorf("an unfiltered list is %v", got)
	}
	it, err := tk.LookupType(bob, ListTypeTools, "secret")
	if err != nil {
		t.Fatal(err)
	}
	if tk.Visible(bob, it) || !tk.Visible(alice, it) {
		t.Errorf("Visible(bob)=%v Visible(alice)=%v, want false and true", tk.Visible(bob, it), tk.Visible(alice, it))
	}
	// Everything is visible without a policy.
	plain := mustNew(t, WithTool(newTool("secret")))
	if !plain.Visible(bob, Item{Type: ListTypeTools, Value: newTool("secret")}) {
		t.Error("a toolkit without policy hides a tool")
	}
}

func TestPolicyListingIsSaidSo(t *testing.T) {
	var mu sync.Mutex
	var seen []PolicyRequest
	p := PolicyFunc(func(_ context.Context, req PolicyRequest) Decision {
		mu.Lock()
		seen = append(seen, req)
		mu.Unlock()
		return Decision{Effect: Ask}
	})
	tk := mustNew(t, WithTool(newTool("a")), WithPolicy(p))
	resp, err := tk.List(WithPrincipal(context.Background(), "p1"), ListRequest{Type: ListTypeTools})
	if err != nil || len(resp.Items) != 1 {
		t.Fatalf("a tool that asks must be listed: %v %v", resp, err)
	}
	if len(seen) != 1 || !seen[0].Listing || seen[0].Arguments != nil || seen[0].Principal != "p1" || seen[0].Namespace != BuiltinNamespace {
		t.Fatalf("the policy saw %+v", seen)
	}
	_, _ = tk.Call(WithPrincipal(context.Background(), "p1"), "a", resource.Must("in", json.RawMessage(`{"x":1}`)))
	if len(seen) != 2 || seen[1].Listing || string(seen[1].Arguments) != `{"x":1}` {
		t.Fatalf("the policy saw %+v for the call", seen[1:])
	}
}

func TestPolicyAsk(t *testing.T) {
	ctx := context.Background()
	ask := PolicyFunc(func(context.Context, PolicyRequest) Decision {
		return Decision{Effect: Ask, Rule: "confirm", Reason: "it writes"}
	})
	yes := ApproverFunc(func(context.Context, ApprovalRequest) (bool, error) { return true, nil })
	no := ApproverFunc(func(context.Context, ApprovalRequest) (bool, error) { return false, nil })
	cannot := ApproverFunc(func(context.Context, ApprovalRequest) (bool, error) {
		return false, fmt.Errorf("%w: no elicitation", ErrNotImplemented)
	})
	broken := errors.New("the approval service is down")
	fails := ApproverFunc(func(context.Context, ApprovalRequest) (bool, error) { return false, broken })

	for _, tt := range []struct {
		name     string
		toolkit  Approver // WithApprover
		context  Approver // ContextWithApprover
		approval Approval
	}{
		{"toolkit approves", yes, nil, ApprovalGranted},
		{"toolkit declines", no, nil, ApprovalDeclined},
		{"context wins over toolkit", no, yes, ApprovalGranted},
		{"context declines before toolkit", yes, no, ApprovalDeclined},
		{"one that cannot ask passes on", yes, cannot, ApprovalGranted},
		{"none can ask", nil, cannot, ApprovalUnavailable},
		{"nobody to ask", nil, nil, ApprovalUnavailable},
		{"asking fails", yes, fails, ApprovalFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, runs := runCounter("write")
			opts := []Option{WithTool(w), WithPolicy(ask)}
			if tt.toolkit != nil {
				opts = append(opts, WithApprover(tt.toolkit))
			}
			tk := mustNew(t, opts...)
			cctx := ctx
			if tt.context != nil {
				cctx = ContextWithApprover(ctx, tt.context)
			}
			_, err := tk.Call(cctx, "write")
			if tt.approval == ApprovalGranted {
				if err != nil || runs.Load() != 1 {
					t.Fatalf("approved call: %v (ran %d times)", err, runs.Load())
				}
				return
			}
			var pe *PolicyError
			if !errors.As(err, &pe) || !errors.Is(err, ErrDenied) {
				t.Fatalf("got %v, want a refusal", err)
			}
			if pe.Approval != tt.approval || runs.Load() != 0 {
				t.Errorf("approval %q (ran %d times), want %q", pe.Approval, runs.Load(), tt.approval)
			}
			if tt.approval == ApprovalFailed && !errors.Is(err, broken) {
				t.Errorf("%v does not keep the approver's error", err)
			}
			if !strings.Contains(err.Error(), `rule "confirm"`) {
				t.Errorf("%q does not name the rule", err)
			}
		})
	}
}

// approvingSession is a session that approves through its own client.
type approvingSession struct {
	localSession
	asked []ApprovalRequest
}

func (s *approvingSession) Approve(_ context.Context, req ApprovalRequest) (bool, error) {
	s.asked = append(s.asked, req)
	return true, nil
}

func TestPolicyAskSessionApprover(t *testing.T) {
	ask := PolicyFunc(func(context.Context, PolicyRequest) Decision { return Decision{Effect: Ask, Rule: "r", Reason: "why"} })
	no := ApproverFunc(func(context.Context, ApprovalRequest) (bool, error) { return false, nil })
	tk := mustNew(t, WithTool(newTool("write")), WithPolicy(ask), WithApprover(no))
	s := &approvingSession{localSession: localSession{id: "s1"}}
	// Through a session made by WithProgressFunc, which wraps s.
	ctx := WithProgressFunc(ContextWithSession(WithPrincipal(context.Background(), "carol"), s), func(float64, float64, string) {})
	if _, err := tk.Call(ctx, "write", resource.Must("in", json.RawMessage(`{"path":"/tmp/x"}`))); err != nil {
		t.Fatalf("the session approved, yet: %v", err)
	}
	if len(s.asked) != 1 {
		t.Fatalf("the session was asked %d times", len(s.asked))
	}
	got := s.asked[0]
	if got.Principal != "carol" || got.Namespace != BuiltinNamespace || got.Tool.Name() != "write" || string(got.Arguments) != `{"path":"/tmp/x"}` || got.Rule != "r" || got.Reason != "why" {
		t.Errorf("the approver was asked %+v", got)
	}
}

func TestPolicyRateLimitAndUnknownEffect(t *testing.T) {
	limited := PolicyFunc(func(context.Context, PolicyRequest) Decision {
		return Decision{Effect: Deny, Rule: "per-principal", RetryAfter: 1500 * time.Millisecond}
	})
	tk := mustNew(t, WithTool(newTool("a")), WithPolicy(limited))
	_, err := tk.Call(context.Background(), "a")
	var pe *PolicyError
	if !errors.Is(err, ErrRateLimited) || !errors.Is(err, ErrDenied) || !errors.As(err, &pe) || pe.Decision.RetryAfter != 1500*time.Millisecond {
		t.Fatalf("got %v, want a rate-limit refusal", err)
	}
	if !strings.Contains(err.Error(), "retry after 1.5s") {
		t.Errorf("%q does not say when to retry", err)
	}
	if Outcome(err) != OutcomeRateLimited {
		t.Errorf("outcome %q", Outcome(err))
	}

	odd := PolicyFunc(func(context.Context, PolicyRequest) Decision { return Decision{Effect: Effect(7)} })
	tk = mustNew(t, WithTool(newTool("a")), WithPolicy(odd))
	if _, err := tk.Call(context.Background(), "a"); !errors.Is(err, ErrDenied) || Outcome(err) != OutcomeDenied {
		t.Fatalf("an unknown effect must refuse the call: %v", err)
	}
}

func TestEffectText(t *testing.T) {
	for _, e := range []Effect{Allow, Deny, Ask} {
		b, err := e.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Effect
		if err := back.UnmarshalText(b); err != nil || back != e {
			t.Errorf("%v round-trips to %v, %v", e, back, err)
		}
	}
	var e Effect
	if err := e.UnmarshalText([]byte("permit")); !errors.Is(err, ErrBadParameter) {
		t.Errorf("permit: %v", err)
	}
	if _, err := Effect(9).MarshalText(); err == nil {
		t.Error("Effect(9) marshals")
	}
}

func TestNotifyPolicyChange(t *testing.T) {
	d := newDelegate()
	tk := mustNew(t, WithDelegate(d))
	got := make(chan ConnectorEvent, 4)
	cancel := tk.Subscribe(func(ev ConnectorEvent) { got <- ev })
	defer cancel()
	tk.NotifyPolicyChange("srv")
	ev := <-got
	if ev.Kind != ConnectorEventPolicyChanged || ev.Namespace != "srv" || ev.Kind.String() != "policy_changed" {
		t.Errorf("got %+v", ev)
	}
	tk.WaitEvents()
	select {
	case ev := <-d.events:
		t.Errorf("the delegate got %+v", ev)
	default:
	}
}

// auditRecords decodes the JSON lines of buf.
func auditRecords(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		rec := map[string]any{}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

func TestAudit(t *testing.T) {
	var buf bytes.Buffer
	h := slog.NewJSONHandler(&buf, nil)
	ctx := WithSession(WithPrincipal(context.Background(), "dave"), "sess-9")
	tk := mustNew(t, WithTool(newTool("open"), newTool("secret")), WithPolicy(denyFor("dave", "secret")), WithAudit(h))
	in := resource.Must("in", json.RawMessage(`{"password":"hunter2"}`))
	if _, err := tk.Call(ctx, "open", in); err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Call(ctx, "secret", in); !errors.Is(err, ErrDenied) {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "hunter2") {
		t.Fatalf("the audit holds the arguments: %s", buf.String())
	}
	recs := auditRecords(t, &buf)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2:\n%s", len(recs), buf.String())
	}
	want := map[string]any{
		"msg": "tool call", "principal": "dave", "session": "sess-9", "namespace": "builtin", "tool": "open",
		"args_sha256": sha256Hex(`{"password":"hunter2"}`), "decision": "allow", "rule": "", "outcome": "ok", "upstream": "",
	}
	for k, v := range want {
		if recs[0][k] != v {
			t.Errorf("record 1: %s = %v, want %v", k, recs[0][k], v)
		}
	}
	if _, ok := recs[0]["duration"]; !ok {
		t.Error("record 1 has no duration")
	}
	if recs[1]["decision"] != "deny" || recs[1]["rule"] != "no-secret" || recs[1]["outcome"] != "denied" || recs[1]["reason"] != "not for dave" {
		t.Errorf("record 2: %v", recs[1])
	}

	// Arguments on request.
	buf.Reset()
	tk = mustNew(t, WithTool(newTool("open")), WithAudit(h), WithAuditArguments(true))
	if _, err := tk.Call(ctx, "open", in); err != nil {
		t.Fatal(err)
	}
	recs = auditRecords(t, &buf)
	if len(recs) != 1 || recs[0]["args"] != `{"password":"hunter2"}` || recs[0]["decision"] != "none" {
		t.Errorf("with arguments: %v", recs)
	}
}

// auditFields are the attributes every audit record has: the issue's
// list (time, principal, session, namespace, tool, the arguments'
// SHA-256, decision and rule, outcome, duration, upstream).
var auditFields = []string{"time", "msg", "principal", "session", "namespace", "tool", "args_sha256", "decision", "rule", "outcome", "duration", "upstream"}

// TestAuditTenThousandCalls audits 10,000 calls, each with its own
// argument value, under a policy, through a session, of builtins and of a
// connector's tool, that run, fail, are denied, are refused for their
// input or name nothing: there are 10,000 records, each with every field
// and none with an argument value.
func TestAuditTenThousandCalls(t *testing.T) {
	const n = 10_000
	var buf bytes.Buffer
	failing := &testTool{name: "flaky", run: func(_ context.Context, in json.RawMessage) (any, error) {
		return nil, fmt.Errorf("cannot handle %s", in) // an error that quotes the input
	}}
	strict := &testTool{name: "strict", in: objSchema(map[string]*jsonschema.Schema{"value": {Type: "integer"}}, "value")}
	d := newDelegate()
	d.prepare = func(_ string, c *fakeConn) error { c.tools = []Tool{newTool("remote_echo")}; return nil }
	tk := mustNew(t, WithDelegate(d), WithTool(newTool("echo"), failing, strict, newTool("classified")),
		WithPolicy(denyFor("load", "classified")), WithAudit(slog.NewJSONHandler(&buf, nil)))
	const upstream = "test://srv/mcp"
	if err := tk.AddConnectorNS("srv", upstream); err != nil {
		t.Fatal(err)
	}
	tk.WaitEvents()
	ctx := WithSession(WithPrincipal(context.Background(), "load"), "sess-10k")
	keys := []string{"echo", "flaky", "srv.remote_echo", "classified", "strict", "nowhere.nothing"}
	want := map[string]string{
		"echo": OutcomeOK, "flaky": OutcomeToolFailed, "srv.remote_echo": OutcomeOK,
		"classified": OutcomeDenied, "strict": OutcomeBadInput, "nowhere.nothing": OutcomeNotFound,
	}
	for i := range n {
		key := keys[i%len(keys)]
		_, _ = tk.Call(ctx, key, resource.Must("in", json.RawMessage(fmt.Sprintf(`{"value":"v-%06d-secret"}`, i))))
	}
	if i := strings.Index(buf.String(), "-secret"); i >= 0 {
		t.Fatalf("an argument value reached the audit: %s", buf.String()[max(i-300, 0):i+10])
	}
	recs := auditRecords(t, &buf)
	if len(recs) != n {
		t.Fatalf("%d records for %d calls", len(recs), n)
	}
	sums := map[any]bool{}
	outcomes := map[string]int{}
	for i, r := range recs {
		for _, f := range auditFields {
			if _, ok := r[f]; !ok {
				t.Fatalf("record %d has no %s: %v", i, f, r)
			}
		}
		key := keys[i%len(keys)]
		if r["principal"] != "load" || r["session"] != "sess-10k" || r["outcome"] != want[key] {
			t.Fatalf("record %d, of %s: %v", i, key, r)
		}
		if got := fmt.Sprint(r["namespace"], ".", r["tool"]); got != key && got != "builtin."+key {
			t.Fatalf("record %d names %s, want %s", i, got, key)
		}
		switch key {
		case "srv.remote_echo":
			if r["upstream"] != upstream || r["decision"] != "allow" {
				t.Fatalf("record %d: %v", i, r)
			}
		case "classified":
			if r["decision"] != "deny" || r["rule"] != "no-classified" {
				t.Fatalf("record %d: %v", i, r)
			}
		case "nowhere.nothing":
			if r["decision"] != "none" {
				t.Fatalf("record %d: %v", i, r)
			}
		}
		sums[r["args_sha256"]] = true
		outcomes[fmt.Sprint(r["outcome"])]++
	}
	if len(sums) != n || outcomes[OutcomeToolFailed] != n/len(keys)+1 {
		t.Errorf("%d distinct argument digests and outcomes %v", len(sums), outcomes)
	}
}

// TestAuditRefusalsBeforeThePolicy: calls refused before the policy is
// asked — a key that names nothing, a connector not ready, a call nested
// too deep, an input that cannot be read — are audited with the decision
// "none" and the refusal's outcome; Audit records what a server
// refuses itself, and does nothing without an audit.
func TestAuditRefusalsBeforeThePolicy(t *testing.T) {
	var buf bytes.Buffer
	d := newDelegate()
	var tk *Toolkit
	deep := &testTool{name: "deep", run: func(ctx context.Context, in json.RawMessage) (any, error) {
		return tk.Call(ctx, "deep", resource.Must("in", in))
	}}
	tk = mustNew(t, WithDelegate(d), WithTool(deep, newTool("echo")), WithPolicy(denyFor("nobody")), WithMaxCallDepth(2),
		WithAudit(slog.NewJSONHandler(&buf, nil)))
	if err := tk.AddConnectorNS("slow", "test://slow"); err != nil {
		t.Fatal(err)
	}
	ctx := WithPrincipal(context.Background(), "eve")
	in := resource.Must("in", json.RawMessage(`{"q":"hidden"}`))
	if _, err := tk.Call(ctx, "nothing", in); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := tk.Call(ctx, "slow.tool", in); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a connector not ready: %v", err)
	}
	if _, err := tk.Call(ctx, "deep", in); !errors.Is(err, ErrDepthExceeded) {
		t.Fatalf("too deep: %v", err)
	}
	if _, err := tk.Call(ctx, "echo", unreadableInput{}); !errors.Is(err, ErrBadParameter) {
		t.Fatalf("unreadable input: %v", err)
	}
	tk.Audit(ctx, AuditEntry{Name: strings.Repeat("x", 1000), Arguments: json.RawMessage(`{"q":"hidden"}`), Err: fmt.Errorf("%w: unknown tool", ErrNotFound)})
	if strings.Contains(buf.String(), "hidden") {
		t.Fatalf("an argument reached the audit: %s", buf.String())
	}
	var got []string
	for _, r := range auditRecords(t, &buf) {
		for _, f := range auditFields {
			if _, ok := r[f]; !ok {
				t.Errorf("record without %s: %v", f, r)
			}
		}
		if r["principal"] != "eve" {
			t.Errorf("record %v", r)
		}
		tool := fmt.Sprint(r["tool"])
		if len(tool) > 300 {
			t.Errorf("a name of %d bytes in the audit", len(tool))
			tool = tool[:8]
		}
		got = append(got, fmt.Sprintf("%v.%.8s %v %v", r["namespace"], tool, r["decision"], r["outcome"]))
	}
	want := strings.Join([]string{
		".nothing none " + OutcomeNotFound,
		"slow.tool none " + OutcomeUnavailable,
		"builtin.deep none " + OutcomeDepthExceeded, // the third, nested call
		"builtin.deep allow " + OutcomeToolFailed,   // the tools that made the nested calls
		"builtin.deep allow " + OutcomeToolFailed,   // the tools that made the nested calls
		"builtin.echo none " + OutcomeBadInput,
		".xxxxxxxx none " + OutcomeNotFound,
	}, "\n")
	if g := strings.Join(got, "\n"); g != want {
		t.Errorf("records:\n%s\nwant:\n%s", g, want)
	}

	// Without an audit, nothing happens, and Audits says so.
	if !tk.Audits() {
		t.Error("Audits is false with an audit")
	}
	quiet := mustNew(t)
	quiet.Audit(ctx, AuditEntry{Name: "x", Err: ErrNotFound})
	if quiet.Audits() {
		t.Error("Audits is true without an audit")
	}
}

// unreadableInput is an input whose Read fails.
type unreadableInput struct{}

func (unreadableInput) URI() string         { return "test:input" }
func (unreadableInput) Name() string        { return "input" }
func (unreadableInput) Description() string { return "" }
func (unreadableInput) Type() string        { return "application/json" }
func (unreadableInput) Read(context.Context) ([]byte, error) {
	return nil, errors.New("disk gone")
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// allowingPolicy says it allows everything, and counts the times it is
// asked anyway.
type allowingPolicy struct {
	all   atomic.Bool
	asked atomic.Int64
}

func (p *allowingPolicy) AllowsAll() bool { return p.all.Load() }
func (p *allowingPolicy) Decide(context.Context, PolicyRequest) Decision {
	p.asked.Add(1)
	return Decision{Effect: Deny, Rule: "asked"}
}

func TestPolicyThatAllowsAllIsNotAsked(t *testing.T) {
	p := &allowingPolicy{}
	p.all.Store(true)
	tk := mustNew(t, WithTool(newTool("a")), WithPolicy(p))
	if _, err := tk.Call(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if resp, _ := tk.List(context.Background(), ListRequest{Type: ListTypeTools}); len(resp.Items) != 1 || p.asked.Load() != 0 {
		t.Fatalf("listed %d, asked %d times", len(resp.Items), p.asked.Load())
	}
	// Once it no longer allows everything, it decides.
	p.all.Store(false)
	if _, err := tk.Call(context.Background(), "a"); !errors.Is(err, ErrDenied) {
		t.Fatalf("%v", err)
	}
	if resp, _ := tk.List(context.Background(), ListRequest{Type: ListTypeTools}); len(resp.Items) != 0 {
		t.Fatalf("listed %d", len(resp.Items))
	}
}

package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/resource"
)

// decide asks e about a call of t (namespace ns) by principal with args.
func decide(e *Engine, principal, ns string, t toolkit.Tool, args string) toolkit.Decision {
	var raw json.RawMessage
	if args != "" {
		raw = json.RawMessage(args)
	}
	return e.Decide(context.Background(), toolkit.PolicyRequest{Principal: principal, Namespace: ns, Tool: t, Arguments: raw})
}

func mustEngine(t *testing.T, cfg Config, opts ...Option) *Engine {
	t.Helper()
	opts = append([]Option{WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	e, err := New(context.Background(), cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestRulesFirstMatchWins(t *testing.T) {
	e := mustEngine(t, Config{Default: toolkit.Deny, Rules: []Rule{
		{Name: "bob-no-fs", Effect: toolkit.Deny, Principals: []string{"jwt:bob"}, Namespaces: []string{"fs"}},
		{Name: "writes-ask", Effect: toolkit.Ask, Tools: []string{"write_*"}, Reason: "writes change files"},
		{Name: "fs", Effect: toolkit.Allow, Namespaces: []string{"fs"}},
		{Effect: toolkit.Allow, Principals: []string{"token:*"}},
	}})
	read, write := newFake("read_file", ""), newFake("write_file", "")
	for _, tt := range []struct {
		principal, ns string
		tool          toolkit.Tool
		effect        toolkit.Effect
		rule          string
	}{
		{"jwt:bob", "fs", read, toolkit.Deny, "bob-no-fs"},
		{"jwt:bob", "fs", write, toolkit.Deny, "bob-no-fs"},
		{"jwt:alice", "fs", write, toolkit.Ask, "writes-ask"},
		{"jwt:alice", "fs", read, toolkit.Allow, "fs"},
		{"jwt:alice", "web", read, toolkit.Deny, ""},
		{"token:1", "web", read, toolkit.Allow, "rules[3]"},
	} {
		d := decide(e, tt.principal, tt.ns, tt.tool, "")
		if d.Effect != tt.effect || d.Rule != tt.rule {
			t.Errorf("%s %s.%s: %v by %q, want %v by %q", tt.principal, tt.ns, tt.tool.Name(), d.Effect, d.Rule, tt.effect, tt.rule)
		}
	}
	if d := decide(e, "jwt:alice", "fs", write, ""); d.Reason != "writes change files" {
		t.Errorf("reason %q", d.Reason)
	}
}

func TestRulesAnnotations(t *testing.T) {
	e := mustEngine(t, Config{Rules: []Rule{
		{Name: "destructive", Effect: toolkit.Ask, Annotations: Annotations{Destructive: ptr(true)}},
		{Name: "closed-idempotent", Effect: toolkit.Deny, Annotations: Annotations{Idempotent: ptr(true), OpenWorld: ptr(false)}},
	}})
	plain := newFake("plain", "") // no hints: MCP says destructive and open-world
	ro := newFake("ro", "")
	ro.meta.ReadOnlyHint = true
	safe := newFake("safe", "")
	safe.meta.DestructiveHint = ptr(false)
	closed := newFake("closed", "")
	closed.meta = toolkit.ToolMeta{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)}
	for _, tt := range []struct {
		tool *fakeTool
		want toolkit.Effect
	}{{plain, toolkit.Ask}, {ro, toolkit.Allow}, {safe, toolkit.Allow}, {closed, toolkit.Deny}} {
		if d := decide(e, "", "ns", tt.tool, ""); d.Effect != tt.want {
			t.Errorf("%s: %v (%s), want %v", tt.tool.name, d.Effect, d.Rule, tt.want)
		}
	}
}

func TestRulesArguments(t *testing.T) {
	calls := 0
	e := mustEngine(t, Config{Rules: []Rule{
		{Name: "no-delete", Effect: toolkit.Deny, Tools: []string{"db"}, Arguments: []Condition{{Path: "/op", Equals: "delete"}}},
		{Name: "etc-asks", Effect: toolkit.Ask, Arguments: []Condition{{Path: "/path", Matches: ptr("/etc/*")}}},
		{Name: "small-ok", Effect: toolkit.Allow, Tools: []string{"db"}, Arguments: []Condition{{Path: "/limit", Equals: 10}}},
		{Name: "go-hook", Effect: toolkit.Deny, Tools: []string{"hooked"}, Match: func(_ context.Context, req toolkit.PolicyRequest) bool {
			calls++
			return strings.Contains(string(req.Arguments), "forbidden")
		}},
	}, Default: toolkit.Ask})
	db, fs, hooked := newFake("db", ""), newFake("fs", ""), newFake("hooked", "")
	for _, tt := range []struct {
		tool   toolkit.Tool
		args   string
		effect toolkit.Effect
		rule   string
	}{
		{db, `{"op":"delete"}`, toolkit.Deny, "no-delete"},
		{db, `{"op":"select","limit":10}`, toolkit.Allow, "small-ok"},
		{db, `{"op":"select","limit":11}`, toolkit.Ask, ""},
		{db, `{"op":"select","op":"delete"}`, toolkit.Deny, "no-delete"},        // ambiguous: deny matches
		{db, `not json`, toolkit.Deny, "no-delete"},                             // unreadable: deny matches
		{db, `{"op":"select","limit":10,"limit":1}`, toolkit.Deny, "no-delete"}, // allow never matches unreadable input
		{fs, `{"path":"/etc/passwd"}`, toolkit.Ask, "etc-asks"},
		{fs, ``, toolkit.Ask, ""},
		{hooked, `{"x":"forbidden"}`, toolkit.Deny, "go-hook"},
		{hooked, `{"x":"fine"}`, toolkit.Ask, ""},
	} {
		if d := decide(e, "", "ns", tt.tool, tt.args); d.Effect != tt.effect || d.Rule != tt.rule {
			t.Errorf("%s %s: %v by %q, want %v by %q", tt.tool.Name(), tt.args, d.Effect, d.Rule, tt.effect, tt.rule)
		}
	}
	if calls != 2 {
		t.Errorf("Match ran %d times, want 2 (only for the tool its other conditions match)", calls)
	}

	// Listing cannot judge arguments: a deny rule on them is passed over,
	// an allow or ask rule lists the tool.
	list := func(tool toolkit.Tool) toolkit.Decision {
		return e.Decide(context.Background(), toolkit.PolicyRequest{Namespace: "ns", Tool: tool, Listing: true})
	}
	if d := list(db); d.Effect != toolkit.Ask || d.Rule != "etc-asks" {
		t.Errorf("listing db: %v by %q", d.Effect, d.Rule)
	}
	if d := list(hooked); d.Effect == toolkit.Deny {
		t.Errorf("listing hooked: %v by %q", d.Effect, d.Rule)
	}
}

func TestEngineHidesAndRefusesThroughTheToolkit(t *testing.T) {
	e := mustEngine(t, Config{Rules: []Rule{{Name: "bob-no-delete", Effect: toolkit.Deny, Principals: []string{"bob"}, Tools: []string{"delete"}}}})
	del, get := newFake("delete", "deletes"), newFake("get", "gets")
	r := startToolkit(t, []toolkit.Tool{del, get}, toolkit.WithPolicy(e))
	bob := toolkit.WithPrincipal(context.Background(), "bob")
	alice := toolkit.WithPrincipal(context.Background(), "alice")
	if got := fmt.Sprint(r.names(t, bob)); got != "[get]" {
		t.Errorf("bob sees %s", got)
	}
	if got := fmt.Sprint(r.names(t, alice)); got != "[delete get]" {
		t.Errorf("alice sees %s", got)
	}
	_, err := r.tk.Call(bob, "srv.delete")
	if !errors.Is(err, toolkit.ErrDenied) || !strings.Contains(err.Error(), `rule "bob-no-delete"`) {
		t.Errorf("bob's call: %v", err)
	}
	if _, err := r.tk.Call(alice, "srv.delete"); err != nil || del.runs.Load() != 1 {
		t.Errorf("alice's call: %v (%d runs)", err, del.runs.Load())
	}
	// An engine decides for one toolkit.
	if _, err := toolkit.New(toolkit.WithPolicy(e)); !errors.Is(err, toolkit.ErrConflict) {
		t.Errorf("a second toolkit: %v", err)
	}
}

func TestSetConfigAnnounces(t *testing.T) {
	e := mustEngine(t, Config{})
	r := startToolkit(t, []toolkit.Tool{newFake("a", "")}, toolkit.WithPolicy(e))
	got := make(chan toolkit.ConnectorEvent, 8)
	cancel := r.tk.Subscribe(func(ev toolkit.ConnectorEvent) {
		if ev.Kind == toolkit.ConnectorEventPolicyChanged {
			got <- ev
		}
	})
	defer cancel()
	ctx := toolkit.WithPrincipal(context.Background(), "p")
	if n := len(r.names(t, ctx)); n != 1 {
		t.Fatalf("%d tools", n)
	}
	if err := e.SetConfig(Config{Default: toolkit.Deny}); err != nil {
		t.Fatal(err)
	}
	if ev := <-got; ev.Namespace != "" {
		t.Errorf("event %+v", ev)
	}
	if n := len(r.names(t, ctx)); n != 0 {
		t.Errorf("%d tools listed under default deny", n)
	}
	if err := e.SetConfig(Config{Rules: []Rule{{Tools: []string{`x\`}}}}); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("a bad config: %v", err)
	}
	if n := len(r.names(t, ctx)); n != 0 {
		t.Errorf("a refused config changed the rules: %d tools", n)
	}
}

func TestConfigCheck(t *testing.T) {
	err := Config{Default: 9, Rules: []Rule{
		{Name: "a", Tools: []string{`bad\`}},
		{Name: "a"},
		{Effect: 7},
		{Arguments: []Condition{{Path: "x", Equals: 1}}},
	}, RateLimits: []Limit{{Name: "l", Rate: Rate{}}, {Per: "nobody", Rate: Rate{1, time.Second}}, {Rate: Rate{1, time.Second}, Burst: -1}}}.Check()
	if !errors.Is(err, toolkit.ErrBadParameter) {
		t.Fatalf("%v", err)
	}
	for _, want := range []string{"default", "rules[0] (a): tools[0]", "rules[1] (a): ", `name "a" is already that of rules[0]`, "rules[2]: ", "rules[3]: arguments[0]: path",
		"rate_limits[0] (l): ", `rate_limits[1]: `, "per \"nobody\"", "rate_limits[2]: ", "burst -1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q is not in:\n%v", want, err)
		}
	}
}

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(`{
		"default": "deny",
		"rules": [
			{"name": "ro", "effect": "allow", "annotations": {"read_only": true}},
			{"name": "rm", "effect": "ask", "tools": ["rm_*"], "arguments": [{"path": "/force", "equals": true}], "reason": "force"}
		],
		"rate_limits": [{"per": "principal", "rate": "10/s", "burst": 5}]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Default != toolkit.Deny || len(c.Rules) != 2 || *c.Rules[0].Annotations.ReadOnly != true || c.Rules[1].Effect != toolkit.Ask ||
		c.RateLimits[0].Rate != (Rate{10, time.Second}) || c.RateLimits[0].Burst != 5 {
		t.Errorf("%+v", c)
	}
	back, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := ParseConfig(back); err != nil || len(again.Rules) != 2 {
		t.Errorf("round trip of %s: %v", back, err)
	}
	for _, bad := range []string{`{"rules":[{"effect":"permit"}]}`, `{"rulez":[]}`, `{"rate_limits":[{"rate":"10 per s"}]}`, `{} {}`, `[`} {
		if _, err := ParseConfig([]byte(bad)); !errors.Is(err, toolkit.ErrBadParameter) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// FuzzParseConfig checks that no input panics or hangs the parser, and
// that a config it accepts compiles into an engine that decides.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"default":"ask"}`,
		`{"rules":[{"name":"x","effect":"deny","principals":["*"],"tools":["a*b?c"],"annotations":{"destructive":true},"arguments":[{"path":"/a/0","matches":"x*"}]}]}`,
		`{"rate_limits":[{"per":"principal_tool","rate":"5/10s","tools":["*"]}]}`,
		`{"rules":[{"effect":"deny","arguments":[{"path":"/~2","equals":1}]}]}`,
		`{"rules":[{"effect":"deny","tools":["` + strings.Repeat("*a", 200) + `"]}]}`,
		`{"rate_limits":[{"rate":"0/s"}]}`, `{"rate_limits":[{"rate":"1/0s"}]}`, `{"rate_limits":[{"rate":"99999999999/s"}]}`,
		`{"rules":[{"effect":"allow","arguments":[{"path":"/a","equals":{"b":[1,null]}}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			if !errors.Is(err, toolkit.ErrBadParameter) {
				t.Fatalf("error without ErrBadParameter: %v", err)
			}
			return
		}
		e, err := New(context.Background(), c)
		if err != nil {
			t.Fatalf("a checked config does not compile: %v", err)
		}
		decide(e, "p", "ns", newFake("tool", ""), `{"a":["x"]}`)
		e.Decide(context.Background(), toolkit.PolicyRequest{Principal: "p", Namespace: "ns", Tool: newFake("t", ""), Listing: true})
	})
}

// ExampleEngine shows an in-process approver: a rule asks before any
// destructive tool runs, and the application's approver (here a function;
// in an agent, a question to the user) decides each call.
func ExampleEngine() {
	ctx := context.Background()
	eng, err := New(ctx, Config{Rules: []Rule{
		{Name: "confirm-destructive", Effect: toolkit.Ask, Annotations: Annotations{Destructive: ptr(true)}, Reason: "it deletes data"},
	}})
	if err != nil {
		panic(err)
	}
	approver := toolkit.ApproverFunc(func(_ context.Context, req toolkit.ApprovalRequest) (bool, error) {
		fmt.Printf("%s wants to run %s with %s (%s): ", req.Principal, req.Tool.Name(), req.Arguments, req.Reason)
		ok := !strings.Contains(string(req.Arguments), "everything")
		fmt.Println(map[bool]string{true: "yes", false: "no"}[ok])
		return ok, nil
	})
	drop := newFake("drop_table", "Drops a table.")
	tk, err := toolkit.New(toolkit.WithTool(drop), toolkit.WithPolicy(eng), toolkit.WithApprover(approver))
	if err != nil {
		panic(err)
	}
	ctx = toolkit.WithPrincipal(ctx, "agent:reports")
	_, err = tk.Call(ctx, "drop_table", resource.Must("input", json.RawMessage(`{"table":"tmp"}`)))
	fmt.Println("first call:", err)
	_, err = tk.Call(ctx, "drop_table", resource.Must("input", json.RawMessage(`{"table":"everything"}`)))
	fmt.Println("second call refused:", errors.Is(err, toolkit.ErrDenied))
	// Output:
	// agent:reports wants to run drop_table with {"table":"tmp"} (it deletes data): yes
	// first call: <nil>
	// agent:reports wants to run drop_table with {"table":"everything"} (it deletes data): no
	// second call refused: true
}

// TestRulesMemoOverflow checks that decisions stay right when more
// callers come than the memo holds.
func TestRulesMemoOverflow(t *testing.T) {
	e := mustEngine(t, Config{Default: toolkit.Deny, Rules: []Rule{
		{Name: "even", Effect: toolkit.Allow, Principals: []string{"*0", "*2", "*4", "*6", "*8"}},
	}})
	tool := newFake("t", "")
	for i := range maxMemo + 100 {
		want := toolkit.Deny
		if i%2 == 0 {
			want = toolkit.Allow
		}
		if d := decide(e, fmt.Sprint("p", i), "ns", tool, ""); d.Effect != want {
			t.Fatalf("principal %d: %v", i, d.Effect)
		}
	}
	if n := e.cfg.Load().rules.memo.Load().n.Load(); n > maxMemo {
		t.Errorf("the memo holds %d entries", n)
	}
}

func TestAllowsAll(t *testing.T) {
	e := mustEngine(t, Config{})
	if !e.AllowsAll() {
		t.Error("an empty engine does not allow all")
	}
	for _, cfg := range []Config{
		{Default: toolkit.Deny},
		{Rules: []Rule{{Effect: toolkit.Allow}}},
		{RateLimits: []Limit{{Rate: Rate{1, time.Second}}}},
	} {
		if err := e.SetConfig(cfg); err != nil {
			t.Fatal(err)
		}
		if e.AllowsAll() {
			t.Errorf("%+v allows all", cfg)
		}
	}
	pinned := mustEngine(t, Config{}, WithPins(memStore(nil)))
	if pinned.AllowsAll() {
		t.Error("an engine with pins allows all")
	}
}

// TestRuleUnmatchedTools: a tool pattern matches a tool by the name its
// server gives it, in a namespace the rule's namespaces match; one that
// matches none is returned, as is the exposed form server_tool.
func TestRuleUnmatchedTools(t *testing.T) {
	tools := map[string][]string{"github": {"create_issue", "list_issues"}, "calc": {"add"}}
	for _, c := range []struct {
		rule Rule
		want string
	}{
		{Rule{Tools: []string{"create_issue", "*_issues"}}, "[]"},
		{Rule{Tools: []string{"github_create_issue", "add"}}, "[github_create_issue]"},
		{Rule{Namespaces: []string{"calc"}, Tools: []string{"create_issue", "add"}}, "[create_issue]"},
		{Rule{Namespaces: []string{"nowhere"}, Tools: []string{"*"}}, "[*]"},
	} {
		if got := fmt.Sprint(c.rule.UnmatchedTools(tools)); got != c.want {
			t.Errorf("%+v: %s, want %s", c.rule, got, c.want)
		}
	}
}

package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/llmkit/toolkit"
)

// TestScriptJoinsToolResults: a script lists, reads and returns a
// summary; every inner call goes through Call as the script's principal,
// each one audit record whose parent is the run_code call.
func TestScriptJoinsToolResults(t *testing.T) {
	for _, worker := range []bool{false, true} {
		t.Run(map[bool]string{false: "in-process", true: "worker"}[worker], func(t *testing.T) {
			f := newFixture(t, worker, Limits{})
			out, err := f.run(t, context.Background(), "ada", `
const {files} = await tools.list_files({dir: "/d"});
const big = files.filter(f => f.size >= 4700);
const texts = [];
for (const f of big) texts.push(await tools.read_file({name: f.name}));
console.log("read", texts.length);
return {count: files.length, read: big.map(f => f.name), first: texts[0].slice(0, 20)};`)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Result struct {
					Count int      `json:"count"`
					Read  []string `json:"read"`
					First string   `json:"first"`
				} `json:"result"`
				Console string `json:"console"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if got.Result.Count != 50 || len(got.Result.Read) != 3 || got.Result.First != "contents of /d/fvb.." || got.Console != "read 3\n" {
				t.Fatalf("result %s", out)
			}
			recs := f.audit.records(t)
			if len(recs) != 5 {
				t.Fatalf("%d audit records, want 5 (4 inner, run_code)", len(recs))
			}
			outer := recs[4]
			if outer["tool"] != RunCodeName || outer["principal"] != "ada" {
				t.Fatalf("last record %v", outer)
			}
			for _, r := range recs[:4] {
				if r["parent"] != outer["call"] || r["principal"] != "ada" || r["outcome"] != "ok" {
					t.Errorf("inner record %v, want parent %v", r, outer["call"])
				}
			}
		})
	}
}

// TestDeniedCallIsCatchable: a call the policy denies rejects with a
// ToolError the script catches, naming the tool and the outcome; the
// denial is audited under the script's call. For root it runs.
func TestDeniedCallIsCatchable(t *testing.T) {
	for _, worker := range []bool{false, true} {
		f := newFixture(t, worker, Limits{})
		script := `try { return await tools.secret({}) } catch (e) { return {name: e.name, tool: e.tool, outcome: e.outcome, msg: e.message} }`
		out, err := f.run(t, context.Background(), "ada", script)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]string
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if got["name"] != "ToolError" || got["tool"] != "secret" || got["outcome"] != toolkit.OutcomeDenied || !strings.Contains(got["msg"], "no-secret") {
			t.Fatalf("caught %v", got)
		}
		recs := f.audit.records(t)
		if len(recs) != 2 || recs[0]["decision"] != "deny" || recs[0]["parent"] != recs[1]["call"] {
			t.Fatalf("audit %v", recs)
		}
		if out, err := f.run(t, context.Background(), "root", script); err != nil || out != "s3cret" {
			t.Fatalf("root: %q, %v", out, err)
		}
		// Uncaught, the denial fails the script, naming the tool and the
		// script's line.
		_, err = f.run(t, context.Background(), "ada", "const x = 1;\nawait tools.secret({});")
		var se *ScriptError
		if !errors.As(err, &se) || se.Line != 2 || !strings.Contains(se.Message, "ToolError") || !errors.Is(err, ErrScript) || !errors.Is(err, toolkit.ErrToolFailed) {
			t.Fatalf("uncaught denial: %v", err)
		}
	}
}

// TestScriptErrorsCarryPositions: syntax errors and throws say where.
func TestScriptErrorsCarryPositions(t *testing.T) {
	f := newFixture(t, false, Limits{})
	for _, c := range []struct {
		script    string
		line, col int
		msg       string
	}{
		{"return 1 +;", 1, 11, "SyntaxError: Unexpected token"},
		{"const a = 1;\n\n  null.x;", 3, 0, "TypeError"},
		{"throw new Error('boom')", 1, 7, "Error: boom"},
		{"await tools.nope({})", 1, 0, "unknown tool"},
	} {
		_, err := f.m.Run(context.Background(), c.script)
		var se *ScriptError
		if !errors.As(err, &se) || se.Line != c.line || c.col != 0 && se.Column != c.col || !strings.Contains(se.Message, c.msg) {
			t.Errorf("%q: %#v", c.script, err)
		}
	}
}

// TestScriptResults: a string is text, anything else JSON, undefined null.
func TestScriptResults(t *testing.T) {
	f := newFixture(t, false, Limits{})
	for script, want := range map[string]string{
		`return "hi"`:        "hi",
		`return {a: [1, 2]}`: `{"a":[1,2]}`,
		`return`:             "null",
		`return (await tools.list_files({dir: "x"})).files.length`: "50",
	} {
		out, err := f.run(t, context.Background(), "", script)
		if err != nil || out != want {
			t.Errorf("%s: %q, %v; want %q", script, out, err, want)
		}
	}
}

// TestAskedCallsGoToTheApprover: a call an ask rule holds goes to the
// approver of the script's context, with the script's principal; a yes
// runs it, a no rejects it as denied.
func TestAskedCallsGoToTheApprover(t *testing.T) {
	policy := toolkit.PolicyFunc(func(_ context.Context, req toolkit.PolicyRequest) toolkit.Decision {
		if req.Tool.Name() == "read_file" {
			return toolkit.Decision{Effect: toolkit.Ask, Rule: "confirm-reads"}
		}
		return toolkit.Decision{Effect: toolkit.Allow}
	})
	tk, err := toolkit.New(toolkit.WithPolicy(policy))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, false, Limits{})
	read, _ := f.tk.Lookup(context.Background(), "read_file")
	if err := tk.AddTool(read.(toolkit.Tool)); err != nil {
		t.Fatal(err)
	}
	m, err := New(tk, Config{})
	if err != nil {
		t.Fatal(err)
	}
	script := `try { return (await tools.read_file({name: "n"})).slice(0, 14) } catch (e) { return e.outcome }`
	for answer, want := range map[bool]string{true: "contents of n.", false: toolkit.OutcomeDenied} {
		var asked []string
		ctx := toolkit.ContextWithApprover(toolkit.WithPrincipal(context.Background(), "ada"), toolkit.ApproverFunc(func(_ context.Context, req toolkit.ApprovalRequest) (bool, error) {
			asked = append(asked, req.Principal+"/"+req.Tool.Name()+"/"+req.Rule)
			return answer, nil
		}))
		out, err := m.Run(ctx, script)
		if err != nil || out.Text != want || len(asked) != 1 || asked[0] != "ada/read_file/confirm-reads" {
			t.Errorf("approver says %v: %+v, %v, asked %v", answer, out, err, asked)
		}
	}
}

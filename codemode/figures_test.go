package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/model"
	"github.com/llmkit/toolkit/tool"
)

// The figures' tasks run against these tools, whose results are large,
// as a real system's are: a log directory, an issue tracker and a sales
// ledger.
func figuresToolkit(t testing.TB) *toolkit.Toolkit {
	t.Helper()
	tk, err := toolkit.New()
	if err != nil {
		t.Fatal(err)
	}
	type logFile struct {
		Name string `json:"name"`
		Size int    `json:"size"`
	}
	type issue struct {
		Number   int      `json:"number"`
		Title    string   `json:"title"`
		Body     string   `json:"body"`
		Assignee string   `json:"assignee"`
		Labels   []string `json:"labels"`
	}
	type user struct {
		Login string `json:"login"`
		Name  string `json:"name"`
		Bio   string `json:"bio"`
		Team  string `json:"team"`
	}
	type nameIn struct {
		Name string `json:"name" jsonschema:"the log file's name"`
	}
	type stateIn struct {
		State string `json:"state" jsonschema:"open or closed"`
	}
	type loginIn struct {
		Login string `json:"login"`
	}
	type quarterIn struct {
		Quarter string `json:"quarter" jsonschema:"Q1 to Q4"`
	}
	type listed struct {
		Files []logFile `json:"files"`
	}
	type issues struct {
		Issues []issue `json:"issues"`
	}
	err = tk.AddTool(
		tool.Must("list_logs", "List the log files of the service.", func(context.Context, struct{}) (listed, error) {
			var out listed
			for i := range 40 {
				kind := "app"
				if i%5 == 0 {
					kind = "err"
				}
				out.Files = append(out.Files, logFile{Name: fmt.Sprintf("2026-11-%02d.%s.log", i%30+1, kind), Size: 3000 + i})
			}
			return out, nil
		}),
		tool.Must("read_log", "Read a log file.", func(_ context.Context, in nameIn) (string, error) {
			var b strings.Builder
			for i := range 40 {
				level := "INFO"
				if i%9 == 0 {
					level = "ERROR"
				}
				fmt.Fprintf(&b, "2026-11-01T10:%02d:00Z %s request handled in %d ms by worker %d (%s)\n", i, level, 10+i, i%4, in.Name)
			}
			return b.String(), nil
		}),
		tool.Must("list_issues", "List the issues of the tracker in a state.", func(_ context.Context, in stateIn) (issues, error) {
			var out issues
			for i := range 100 {
				out.Issues = append(out.Issues, issue{Number: i + 1, Title: fmt.Sprintf("Issue %d: something is slow", i+1),
					Body: strings.Repeat("Steps to reproduce, what happened and what was expected. ", 4), Assignee: fmt.Sprintf("dev%d", i%7),
					Labels: []string{"bug", in.State}})
			}
			return out, nil
		}),
		tool.Must("get_user", "Get a user of the tracker.", func(_ context.Context, in loginIn) (user, error) {
			return user{Login: in.Login, Name: "Developer " + strings.TrimPrefix(in.Login, "dev"), Bio: strings.Repeat("Works on the backend. ", 30), Team: "core"}, nil
		}),
		tool.Must("get_sales", "Get the sales ledger of a quarter, as CSV.", func(_ context.Context, in quarterIn) (string, error) {
			var b strings.Builder
			b.WriteString("date,region,product,units,amount\n")
			for i := range 400 {
				fmt.Fprintf(&b, "2026-%02d-%02d,%s,product-%d,%d,%d.00\n", i%3+1, i%28+1, []string{"north", "south", "east", "west"}[i%4], i%17, i%9+1, (i%9+1)*25)
			}
			return b.String(), nil
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// figureTask is one multi-step task: the calls a model makes one at a
// time, and the script it writes instead.
type figureTask struct {
	name   string
	calls  func(prev []model.Result) []model.ToolCall // the next calls, given the results so far; none: done
	script string
	tools  []string // what the model declares
}

var figureTasks = []figureTask{
	{
		name: "log triage: the ERROR lines of the error logs",
		calls: func(prev []model.Result) []model.ToolCall {
			if len(prev) == 0 {
				return []model.ToolCall{{ID: "1", Name: "list_logs", Arguments: "{}"}}
			}
			if len(prev) > 1 {
				return nil
			}
			var l struct{ Files []struct{ Name string } }
			_ = json.Unmarshal([]byte(prev[0].Content), &l)
			var calls []model.ToolCall
			for i, f := range l.Files {
				if strings.Contains(f.Name, ".err.") {
					calls = append(calls, model.ToolCall{ID: fmt.Sprint(i + 2), Name: "read_log", Arguments: fmt.Sprintf(`{"name":%q}`, f.Name)})
				}
			}
			return calls
		},
		script: `const {files} = await tools.list_logs({});
const errors = [];
for (const f of files.filter(f => f.name.includes(".err."))) {
  const lines = (await tools.read_log({name: f.name})).split("\n").filter(l => l.includes(" ERROR "));
  errors.push({file: f.name, count: lines.length, first: lines[0]});
}
return errors;`,
		tools: []string{"list_logs", "read_log"},
	},
	{
		name: "issue join: who holds the open issues",
		calls: func(prev []model.Result) []model.ToolCall {
			switch len(prev) {
			case 0:
				return []model.ToolCall{{ID: "1", Name: "list_issues", Arguments: `{"state":"open"}`}}
			case 1:
				var calls []model.ToolCall
				for i := range 7 {
					calls = append(calls, model.ToolCall{ID: fmt.Sprint(i + 2), Name: "get_user", Arguments: fmt.Sprintf(`{"login":"dev%d"}`, i)})
				}
				return calls
			}
			return nil
		},
		script: `const {issues} = await tools.list_issues({state: "open"});
const counts = {};
for (const i of issues) counts[i.assignee] = (counts[i.assignee] || 0) + 1;
const out = [];
for (const [login, n] of Object.entries(counts)) out.push({name: (await tools.get_user({login})).name, open: n});
return out.sort((a, b) => b.open - a.open);`,
		tools: []string{"list_issues", "get_user"},
	},
	{
		name: "sales: totals by region over two quarters",
		calls: func(prev []model.Result) []model.ToolCall {
			if len(prev) == 0 {
				return []model.ToolCall{{ID: "1", Name: "get_sales", Arguments: `{"quarter":"Q1"}`}, {ID: "2", Name: "get_sales", Arguments: `{"quarter":"Q2"}`}}
			}
			return nil
		},
		script: `const totals = {};
for (const q of ["Q1", "Q2"]) {
  for (const row of (await tools.get_sales({quarter: q})).trim().split("\n").slice(1)) {
    const [, region, , , amount] = row.split(",");
    totals[region] = (totals[region] || 0) + Number(amount);
  }
}
return totals;`,
		tools: []string{"get_sales"},
	},
}

// transcript is what a conversation carries: every definition, call and
// result in the model's context at its last request, and the sum of what
// every request sent.
type transcript struct {
	final, sent int // bytes
}

// tokens estimates a byte count's tokens (4 bytes a token, the usual
// rule for English and JSON).
func tokens(n int) int { return (n + 3) / 4 }

func definitionsSize(t testing.TB, cat *model.Catalog, f model.Filter) int {
	t.Helper()
	defs, err := cat.Definitions(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(defs)
	return len(b)
}

// TestFiguresTokens plays three multi-step tasks with large intermediate
// results twice, with the same scripted model: by plain tool calls (each
// result enters the context), and in code mode (the model declares the
// tools it needs and runs one script). It reports what each conversation
// carries, and holds code mode to at least 70% fewer tokens at the last
// request. Run with -v to read the table.
func TestFiguresTokens(t *testing.T) {
	tk := figuresToolkit(t)
	m, err := New(tk, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tk.AddTool(m.Tools()...); err != nil {
		t.Fatal(err)
	}
	cat := model.NewCatalog(tk)
	d := model.NewDispatcher(tk, cat)
	ctx := context.Background()
	const user = `{"role":"user","content":"Please do the task."}`
	const answer = `{"role":"assistant","content":"Here is the answer, in a few sentences."}`
	t.Logf("%-48s %12s %12s %10s", "task", "plain", "code mode", "fewer")
	for _, task := range figureTasks {
		// Plain tool calls: every definition and every result in context.
		plain := transcript{}
		ctxBytes := len(user) + definitionsSize(t, cat, model.Filter{Exclude: []string{RunCodeName, DeclareToolsName}})
		var results []model.Result
		for {
			calls := task.calls(results)
			plain.sent += ctxBytes
			if len(calls) == 0 {
				break
			}
			for _, c := range calls {
				r := d.Call(ctx, c)
				if r.IsError {
					t.Fatalf("%s: %s: %s", task.name, c.Name, r.Content)
				}
				results = append(results, r)
				ctxBytes += len(c.Name) + len(c.Arguments) + len(r.Content) + 64 // the messages' framing
			}
		}
		plain.final = ctxBytes + len(answer)

		// Code mode: two definitions, the declarations, the script, its result.
		code := transcript{}
		ctxBytes = len(user) + definitionsSize(t, cat, Filter())
		declArgs := fmt.Sprintf(`{"names":%s}`, mustMarshal(task.tools))
		scriptArgs := string(mustMarshal(map[string]string{"code": task.script}))
		for _, c := range []model.ToolCall{{ID: "d", Name: DeclareToolsName, Arguments: declArgs}, {ID: "r", Name: RunCodeName, Arguments: scriptArgs}} {
			code.sent += ctxBytes
			r := d.Call(ctx, c)
			if r.IsError {
				t.Fatalf("%s: %s: %s", task.name, c.Name, r.Content)
			}
			ctxBytes += len(c.Name) + len(c.Arguments) + len(r.Content) + 64
		}
		code.sent += ctxBytes
		code.final = ctxBytes + len(answer)

		fewer := 100 * (1 - float64(code.final)/float64(plain.final))
		t.Logf("%-48s %6d tok %9d tok %9.0f%%   (sent over the turns: %d vs %d tokens)", task.name, tokens(plain.final), tokens(code.final), fewer, tokens(plain.sent), tokens(code.sent))
		if fewer < 70 {
			t.Errorf("%s: code mode carries %.0f%% fewer tokens, want 70%% or more", task.name, fewer)
		}
	}
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

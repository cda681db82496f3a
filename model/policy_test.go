package model_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/model"
	"github.com/llmkit/toolkit/policy"
)

// TestCatalogFollowsThePolicy checks that a catalog over a toolkit lists
// what the policy lets the caller see, and lists again when the policy
// changes.
func TestCatalogFollowsThePolicy(t *testing.T) {
	ctx := context.Background()
	eng, err := policy.New(ctx, policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := newToolkit().List(ctx, toolkit.ListRequest{Type: toolkit.ListTypeTools})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := toolkit.New(toolkit.WithTool(tools.Tools...), toolkit.WithPolicy(eng))
	if err != nil {
		t.Fatal(err)
	}
	catalog := model.NewCatalog(tk)
	names := func() []string {
		t.Helper()
		defs, err := catalog.Definitions(toolkit.WithPrincipal(ctx, "guest"), model.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range defs {
			out = append(out, d.Name)
		}
		return out
	}
	if got := names(); len(got) != 2 {
		t.Fatalf("before: %v", got)
	}
	if err := eng.SetConfig(policy.Config{Rules: []policy.Rule{{Effect: toolkit.Deny, Principals: []string{"guest"}, Tools: []string{"send_email"}}}}); err != nil {
		t.Fatal(err)
	}
	tk.WaitEvents()
	if got := names(); len(got) != 1 || got[0] != "get_weather" {
		t.Errorf("after a deny rule: %v", got)
	}
}

// TestDispatcherAuditsRefusals: the calls a dispatcher refuses before the
// toolkit's Call (a name that resolves to nothing, arguments that are not
// a JSON object) are in the toolkit's audit like those it runs, once
// each, without their arguments.
func TestDispatcherAuditsRefusals(t *testing.T) {
	ctx := toolkit.WithPrincipal(context.Background(), "agent")
	var buf bytes.Buffer
	tools, err := newToolkit().List(ctx, toolkit.ListRequest{Type: toolkit.ListTypeTools})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := toolkit.New(toolkit.WithTool(tools.Tools...), toolkit.WithAudit(slog.NewJSONHandler(&buf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	catalog := model.NewCatalog(tk)
	if err := catalog.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	d := model.NewDispatcher(tk, catalog, model.WithConcurrency(1))
	for _, r := range d.Dispatch(ctx,
		model.ToolCall{ID: "1", Name: "get_weather", Arguments: `{"city": "hush-1"}`},
		model.ToolCall{ID: "2", Name: "get_wether", Arguments: `{"city": "hush-2"}`},
		model.ToolCall{ID: "3", Name: "get_weather", Arguments: `["hush-3"]`},
	) {
		if r.IsError != (r.ID != "1") {
			t.Errorf("call %s: %+v", r.ID, r)
		}
	}
	if strings.Contains(buf.String(), "hush") {
		t.Fatalf("an argument reached the audit:\n%s", buf.String())
	}
	var got []string
	for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r["principal"] != "agent" || len(fmt.Sprint(r["args_sha256"])) != 64 {
			t.Errorf("record %v", r)
		}
		got = append(got, fmt.Sprintf("%v.%v %v %v", r["namespace"], r["tool"], r["decision"], r["outcome"]))
	}
	want := []string{"builtin.get_weather none ok", ".get_wether none not_found", "builtin.get_weather none bad_input"}
	if !slices.Equal(got, want) {
		t.Errorf("records %q, want %q", got, want)
	}
}

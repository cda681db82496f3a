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
	"github.com/llmkit/toolkit/tool"
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

// policyToolkit returns the tools of newToolkit under eng.
func policyToolkit(t *testing.T, eng toolkit.Policy) *toolkit.Toolkit {
	t.Helper()
	tools, err := newToolkit().List(context.Background(), toolkit.ListRequest{Type: toolkit.ListTypeTools})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := toolkit.New(toolkit.WithTool(tools.Tools...), toolkit.WithPolicy(eng))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestCatalogPerPrincipal checks that one catalog answers each caller
// with what the policy lets that caller see, whoever asked first: its
// snapshot is shared, the policy's filter is not.
func TestCatalogPerPrincipal(t *testing.T) {
	ctx := context.Background()
	eng, err := policy.New(ctx, policy.Config{Rules: []policy.Rule{
		{Effect: toolkit.Deny, Principals: []string{"guest"}, Tools: []string{"send_email"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	catalog := model.NewCatalog(policyToolkit(t, eng))
	admin := toolkit.WithPrincipal(ctx, "admin")
	guest := toolkit.WithPrincipal(ctx, "guest")
	names := func(ctx context.Context) []string {
		t.Helper()
		defs, err := catalog.Definitions(ctx, model.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range defs {
			out = append(out, d.Name)
		}
		return out
	}
	// The admin lists first, then the guest, then the admin again.
	if got := names(admin); len(got) != 2 {
		t.Errorf("admin: %v", got)
	}
	if got := names(guest); len(got) != 1 || got[0] != "get_weather" {
		t.Errorf("guest after the admin: %v", got)
	}
	if got := names(admin); len(got) != 2 {
		t.Errorf("admin after the guest: %v", got)
	}
	// Search leaves the denied tool out too.
	hits, err := catalog.Search(guest, "send an email", 5, model.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range hits {
		if d.Name == "send_email" {
			t.Errorf("the guest's search found send_email")
		}
	}
	if hits, _ := catalog.Search(admin, "send an email", 5, model.Filter{}); len(hits) == 0 || hits[0].Name != "send_email" {
		t.Errorf("the admin's search: %v", hits)
	}
}

// TestDisclosurePolicy checks that the search tool of a disclosure never
// finds, and so never offers, a tool the policy denies to the caller.
func TestDisclosurePolicy(t *testing.T) {
	ctx := context.Background()
	eng, err := policy.New(ctx, policy.Config{Rules: []policy.Rule{
		{Effect: toolkit.Deny, Principals: []string{"guest"}, Tools: []string{"send_email"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	tk := policyToolkit(t, eng)
	catalog := model.NewCatalog(tk)
	d := model.NewDisclosure(catalog)
	disp := model.NewDispatcher(tk, catalog)
	search := model.ToolCall{ID: "1", Name: model.DefaultSearchToolName, Arguments: `{"query":"send an email to a contact"}`}

	var adminFound model.Loaded
	res := d.Dispatch(toolkit.WithPrincipal(ctx, "admin"), disp, &adminFound, search)
	if !strings.Contains(res[0].Content, "send_email") {
		t.Fatalf("the admin's search: %s", res[0].Content)
	}

	guest := toolkit.WithPrincipal(ctx, "guest")
	var found model.Loaded
	res = d.Dispatch(guest, disp, &found, search)
	if strings.Contains(res[0].Content, "send_email") || slices.Contains(found.Names(), "send_email") {
		t.Errorf("the guest's search found send_email: %s, loaded %v", res[0].Content, found.Names())
	}
	// Even a Loaded that names it (kept from another conversation) does
	// not offer it to the guest.
	found.Load(0, "send_email")
	defs, err := d.Definitions(guest, &found)
	if err != nil {
		t.Fatal(err)
	}
	for _, def := range defs {
		if def.Name == "send_email" {
			t.Errorf("the guest is offered send_email")
		}
	}
}

// BenchmarkCatalogPolicy measures the definitions of 1,000 tools for one
// caller under a policy with a deny rule, against no policy: the cost of
// filtering every answer for its caller.
//
//	go test -run '^$' -bench CatalogPolicy -benchmem ./model/
func BenchmarkCatalogPolicy(b *testing.B) {
	ctx := toolkit.WithPrincipal(context.Background(), "guest")
	var tools []toolkit.Tool
	for i := range 1000 {
		tools = append(tools, tool.Must(fmt.Sprintf("tool_%04d", i), "A tool.", func(context.Context, struct{}) (string, error) { return "", nil }))
	}
	eng, err := policy.New(ctx, policy.Config{Rules: []policy.Rule{
		{Effect: toolkit.Deny, Principals: []string{"guest"}, Tools: []string{"tool_00*"}},
	}})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		opts []toolkit.Option
		want int
	}{
		{"no-policy", nil, 1000},
		{"policy", []toolkit.Option{toolkit.WithPolicy(eng)}, 900},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tk, err := toolkit.New(append(bc.opts, toolkit.WithTool(tools...))...)
			if err != nil {
				b.Fatal(err)
			}
			c := model.NewCatalog(tk)
			for b.Loop() {
				if defs, err := c.Definitions(ctx, model.Filter{}); err != nil || len(defs) != bc.want {
					b.Fatal(len(defs), err)
				}
			}
		})
	}
}

package model_test

import (
	"context"
	"fmt"
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

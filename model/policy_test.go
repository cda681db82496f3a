package model_test

import (
	"context"
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

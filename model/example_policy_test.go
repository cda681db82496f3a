package model_test

import (
	"context"
	"fmt"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/model"
	"github.com/llmkit/toolkit/policy"
)

// ExampleDispatcher_approval runs a model's tool calls under a policy that
// asks before any tool that is not read-only: the agent loop puts its
// approver (here a function; in an application, a question to the user)
// in the context of Dispatch, and a declined call comes back to the model
// as an error it can read.
func ExampleDispatcher_approval() {
	ctx := context.Background()
	readOnly := false
	eng, err := policy.New(ctx, policy.Config{Rules: []policy.Rule{
		{Name: "confirm-effects", Effect: toolkit.Ask, Annotations: policy.Annotations{ReadOnly: &readOnly}, Reason: "it acts on the world"},
	}})
	if err != nil {
		panic(err)
	}
	tk := newToolkit()
	gated, err := toolkit.New(toolkit.WithPolicy(eng))
	if err != nil {
		panic(err)
	}
	// The tools of newToolkit, under the policy.
	resp, _ := tk.List(ctx, toolkit.ListRequest{Type: toolkit.ListTypeTools})
	if err := gated.AddTool(resp.Tools...); err != nil {
		panic(err)
	}
	catalog := model.NewCatalog(gated)
	if err := catalog.Refresh(ctx); err != nil {
		panic(err)
	}
	askUser := toolkit.ApproverFunc(func(_ context.Context, req toolkit.ApprovalRequest) (bool, error) {
		ok := req.Tool.Name() != "send_email" || string(req.Arguments) == `{"to": "me@example.com"}`
		fmt.Printf("asked about %s %s: %v\n", req.Tool.Name(), req.Arguments, ok)
		return ok, nil
	})
	d := model.NewDispatcher(gated, catalog, model.WithConcurrency(1))
	ctx = toolkit.WithPrincipal(toolkit.ContextWithApprover(ctx, askUser), "user:42")
	for _, r := range d.Dispatch(ctx,
		model.ToolCall{ID: "1", Name: "get_weather", Arguments: `{"city": "Oslo"}`},
		model.ToolCall{ID: "2", Name: "send_email", Arguments: `{"to": "me@example.com"}`},
		model.ToolCall{ID: "3", Name: "send_email", Arguments: `{"to": "everyone@example.com"}`},
	) {
		fmt.Printf("%s error=%v: %s\n", r.ID, r.IsError, r.Content)
	}
	// Output:
	// asked about send_email {"to": "me@example.com"}: true
	// asked about send_email {"to": "everyone@example.com"}: false
	// 1 error=false: Sunny in Oslo
	// 2 error=false: sent to me@example.com
	// 3 error=true: denied by policy: tool "builtin.send_email": rule "confirm-effects": it acts on the world: approval was declined
}

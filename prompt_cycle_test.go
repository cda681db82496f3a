package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/resource"
)

const plannerMD = `---
name: planner
title: Plans a task by asking the helper tool
input:
  type: object
  properties:
    task: {type: string}
  required: [task]
tools: [ask_planner]
---
Plan this task: {{ .task }}
`

// agentDelegate plays a model that always calls the first allowed tool
// with the rendered user message.
type agentDelegate struct {
	*fakeDelegate
	tk *Toolkit
}

func (d *agentDelegate) Call(ctx context.Context, p Prompt, res ...Resource) (Resource, error) {
	agent := p.(*prompt.Agent)
	req, err := agent.Prepare(ctx, res...)
	if err != nil {
		return nil, err
	}
	tools, err := d.tk.PromptTools(ctx, p)
	if err != nil {
		return nil, err
	}
	args, _ := json.Marshal(map[string]string{"task": req.User})
	return d.tk.Call(ctx, tools[0], resource.Must("input", json.RawMessage(args)))
}

func TestRealPromptToolPromptCycleIsStopped(t *testing.T) {
	planner, err := prompt.Read(strings.NewReader(plannerMD))
	if err != nil {
		t.Fatal(err)
	}
	d := &agentDelegate{fakeDelegate: newDelegate()}
	var tk *Toolkit
	depths := []int{}
	ask := &testTool{name: "ask_planner", run: func(ctx context.Context, in json.RawMessage) (any, error) {
		depths = append(depths, CallDepth(ctx))
		return tk.Call(ctx, "planner", resource.Must("input", in))
	}}
	tk = mustNew(t, WithDelegate(d), WithTool(ask), WithPrompt(planner), WithMaxCallDepth(6))
	d.tk = tk
	_, err = tk.Call(t.Context(), "planner", resource.Must("input", json.RawMessage(`{"task":"ship it"}`)))
	if !errors.Is(err, ErrDepthExceeded) {
		t.Fatalf("err = %v, want ErrDepthExceeded", err)
	}
	// planner(1) -> ask(2) -> planner(3) -> ask(4) -> planner(5) -> ask(6) -> planner refused.
	if len(depths) != 3 || depths[0] != 2 || depths[2] != 6 {
		t.Fatalf("the tool ran at depths %v", depths)
	}
}

package anthropic_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/adapters/adapter"
	an "github.com/llmkit/toolkit/adapters/anthropic"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	"github.com/llmkit/toolkit/model"
	"github.com/llmkit/toolkit/tool"
)

// translate is the tool added to the toolkit in the middle of a run.
func translate() toolkit.Tool {
	return tool.Must("translate", "Translates text.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return "hola for " + in.Text, nil
	})
}

// runnerScript is the conversation the tool runner tests hold with the
// fake Claude: turn 1 calls a builtin, the remote tool, a failing tool
// and a tool that does not exist; meanwhile the test adds translate and
// removes render_chart, so turn 2 sees the results under their ids and
// the changed tools, and calls translate; turn 3 answers.
func runnerScript(t *testing.T) func(claudeTurn) (map[string]any, error) {
	turns := 0
	return func(ct claudeTurn) (map[string]any, error) {
		turns++
		names, remote := at.ByName(toolList(ct.Tools))
		last := ct.Messages[len(ct.Messages)-1]
		switch turns {
		case 1:
			if ct.Continued || names["get_weather"] == nil || remote == "" || names["render_chart"] == nil {
				return nil, fmt.Errorf("first turn: tools %v, continued %v", names, ct.Continued)
			}
			return message("", "tool_use",
				map[string]any{"type": "text", "text": "Let me look."},
				toolUse("t_w", "get_weather", map[string]any{"city": "Oslo"}),
				toolUse("t_kb", remote, map[string]any{"query": "adapters"}),
				toolUse("t_boom", "explode", map[string]any{}),
				toolUse("t_none", "nope", map[string]any{})), nil
		case 2:
			if !ct.Continued {
				return nil, fmt.Errorf("the second turn did not continue the thread")
			}
			if names["translate"] == nil || names["render_chart"] != nil || names["get_weather"] == nil {
				return nil, fmt.Errorf("tools after the change: %v", names)
			}
			if at.Get(names["translate"], "input_schema", "properties", "text") == nil {
				return nil, fmt.Errorf("translate definition %s", at.JSON(names["translate"]))
			}
			res := map[string]map[string]any{}
			for _, m := range ct.Messages {
				for _, b := range at.List(m, "content") {
					if at.Str(b, "type") == "tool_result" {
						res[at.Str(b, "tool_use_id")] = b.(map[string]any)
					}
				}
			}
			got := map[string]string{}
			for id, b := range res {
				got[id] = fmt.Sprint(b["is_error"] == true) + ":" + at.Str(b, "content", 0, "text")
			}
			if got["t_w"] != "false:Sunny in Oslo" || got["t_kb"] != "false:found: adapters" ||
				!strings.HasPrefix(got["t_boom"], "true:") || !strings.Contains(got["t_boom"], "boom") ||
				!strings.HasPrefix(got["t_none"], "true:") || len(got) != 4 {
				return nil, fmt.Errorf("tool results %v", got)
			}
			return message("", "tool_use", toolUse("t_tr", "translate", map[string]any{"text": "hello"})), nil
		case 3:
			if at.Str(last, "content", 0, "tool_use_id") != "t_tr" || at.Str(last, "content", 0, "content", 0, "text") != "hola for hello" {
				return nil, fmt.Errorf("translate result %s", at.JSON(last))
			}
			return message("", "end_turn", map[string]any{"type": "text", "text": "Sunny; hola."}), nil
		}
		return nil, fmt.Errorf("turn %d", turns)
	}
}

func toolList(m map[string]map[string]any) []any {
	var out []any
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func runnerParams() anthropic.BetaToolRunnerParams {
	return anthropic.BetaToolRunnerParams{BetaMessageNewParams: anthropic.BetaMessageNewParams{
		Model:     "claude-test",
		MaxTokens: 1024,
		Betas:     []anthropic.AnthropicBeta{anthropic.AnthropicBetaInlineTools2026_09_15},
		Messages:  []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Weather in Oslo? Search the docs."))},
	}}
}

// The SDK's tool runner runs the toolkit's tools through a whole loop on
// a message thread, and follows the toolkit: a tool added and one removed
// between turns reach the model as tool_addition and tool_removal, and
// the new tool runs.
func TestToolRunner(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	var mu sync.Mutex // the runner runs a turn's calls at once
	var seen []model.Result
	tools := an.New(tk, adapter.WithOnResult(func(_ context.Context, r model.Result) {
		mu.Lock()
		seen = append(seen, r)
		mu.Unlock()
	}))
	c := client(newClaude(t, runnerScript(t)))

	bt, err := tools.BetaTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	runner := c.Beta.Messages.NewToolRunner(bt, runnerParams())
	follow := tools.Follow(runner, bt)
	var answer string
	for turn := 0; ; turn++ {
		if turn == 1 {
			if err := tk.AddTool(translate()); err != nil {
				t.Fatal(err)
			}
			if err := tk.RemoveBuiltin("render_chart"); err != nil {
				t.Fatal(err)
			}
		}
		if err := follow.Update(ctx); err != nil {
			t.Fatal(err)
		}
		msg, err := runner.NextMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if msg == nil {
			break
		}
		if turn > 3 {
			t.Fatal("the runner does not stop")
		}
		if msg.StopReason == anthropic.BetaStopReasonEndTurn {
			answer = msg.Content[0].Text
		}
	}
	if answer != "Sunny; hola." || runner.IterationCount() != 3 {
		t.Errorf("answer %q after %d requests", answer, runner.IterationCount())
	}
	// Every call of a toolkit tool went through the toolkit's pipeline,
	// the failure too; the runner answers a call of a tool it was never
	// given by itself.
	var ok, failed int
	for _, r := range seen {
		if r.IsError {
			failed++
		} else {
			ok++
		}
	}
	if ok != 3 || failed != 1 {
		t.Errorf("results seen: %d ok, %d failed", ok, failed)
	}
}

// The streaming runner does the same loop, each turn's events accumulated
// by the SDK.
func TestToolRunnerStreaming(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	tools := an.New(tk)
	c := client(newClaude(t, runnerScript(t)))
	bt, err := tools.BetaTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	runner := c.Beta.Messages.NewToolRunnerStreaming(bt, runnerParams())
	follow := tools.Follow(runner, bt)
	var text strings.Builder
	for turn := 0; !runner.IsCompleted(); turn++ {
		if turn == 1 {
			if err := tk.AddTool(translate()); err != nil {
				t.Fatal(err)
			}
			if err := tk.RemoveBuiltin("render_chart"); err != nil {
				t.Fatal(err)
			}
		}
		if turn > 4 {
			t.Fatal("the runner does not stop")
		}
		if err := follow.Update(ctx); err != nil {
			t.Fatal(err)
		}
		for ev, err := range runner.NextStreaming(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			if d, ok := ev.AsAny().(anthropic.BetaRawContentBlockDeltaEvent); ok {
				if td, ok := d.Delta.AsAny().(anthropic.BetaTextDelta); ok {
					text.WriteString(td.Text)
				}
			}
		}
	}
	if got := text.String(); got != "Let me look.Sunny; hola." {
		t.Errorf("streamed text %q", got)
	}
}

// A runner's tool runs the toolkit's current tool of its name: one removed
// after the runner got it answers that it is gone, as an error result.
func TestBetaToolFollowsTheToolkit(t *testing.T) {
	ctx := context.Background()
	tk := at.Local(t)
	tools := an.New(tk)
	bt, err := tools.BetaTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]anthropic.BetaTool{}
	for _, b := range bt {
		byName[b.Name()] = b
	}
	w := byName["get_weather"]
	if w == nil || w.Description() != "Current weather for a city." || w.InputSchema().Properties == nil ||
		!reflect.DeepEqual(w.InputSchema().Required, []string{"city"}) {
		t.Fatalf("get_weather: %+v", w)
	}
	out, err := w.Execute(ctx, []byte(`{"city":"Rome"}`))
	if err != nil || len(out) != 1 || out[0].OfText == nil || out[0].OfText.Text != "Sunny in Rome" {
		t.Fatalf("execute: %+v, %v", out, err)
	}
	chart, err := byName["render_chart"].Execute(ctx, []byte(`{}`))
	if err != nil || len(chart) != 2 || chart[1].OfImage == nil {
		t.Errorf("image result: %+v, %v", chart, err)
	}
	if err := tk.RemoveBuiltin("get_weather"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Execute(ctx, []byte(`{"city":"Rome"}`)); err == nil || !errors.Is(err, toolkit.ErrNotFound) ||
		!strings.Contains(err.Error(), `"get_weather"`) {
		t.Errorf("removed tool: %v", err)
	}
	if _, err := byName["get_forecast"].Execute(ctx, []byte(`{"city":7}`)); !errors.Is(err, toolkit.ErrBadParameter) && !errors.Is(err, toolkit.ErrSchema) {
		t.Errorf("bad arguments: %v", err)
	}
}

package openai_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	oa "github.com/llmkit/toolkit/adapters/openai"
)

// In the Responses API a remote tool's text and structured content both
// reach the model, text first (the JSON once when the text is the JSON),
// and PDF outputs, a builtin's or embedded in a remote tool's content, go
// as input_file parts of the function call output.
func TestResponsesTextStructuredAndDocuments(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	if err := tk.AddTool(at.Report()); err != nil {
		t.Fatal(err)
	}
	tools := oa.New(tk)
	file := func(v any, name string) bool {
		return at.Str(v, "type") == "input_file" && at.Str(v, "filename") == name &&
			at.Str(v, "file_data") == "data:application/pdf;base64,"+base64.StdEncoding.EncodeToString(at.PDF())
	}
	call := func(id, name string) map[string]any {
		return map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": id, "name": name, "arguments": "{}", "status": "completed"}
	}
	response := func(id string, output ...any) map[string]any {
		return map[string]any{"id": id, "object": "response", "created_at": 1, "status": "completed", "model": "gpt-test",
			"output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}}
	}
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		if at.Get(r.Body, "previous_response_id") == nil {
			return response("resp_1", call("c_stats", at.RemoteStats), call("c_json", at.RemoteStatsJSON),
				call("c_manual", at.RemoteManual), call("c_report", "export_report")), nil
		}
		outs := map[string]any{}
		for _, in := range at.List(r.Body, "input") {
			outs[at.Str(in, "call_id")] = at.Get(in, "output")
		}
		var stats []string
		for _, p := range at.List(outs, "c_stats") {
			if at.Str(p, "type") == "input_text" {
				stats = append(stats, at.Str(p, "text"))
			}
		}
		if !reflect.DeepEqual(stats, []string{at.StatsText, at.StatsJSON}) {
			return nil, fmt.Errorf("text and structured content: %s", at.JSON(outs["c_stats"]))
		}
		if at.Str(outs, "c_json") != at.StatsJSON {
			return nil, fmt.Errorf("structured content and its JSON: %s", at.JSON(outs["c_json"]))
		}
		manual := at.List(outs, "c_manual")
		if len(manual) != 2 || at.Str(manual[0], "text") != "the manual:" || !file(manual[1], "manual.pdf") {
			return nil, fmt.Errorf("remote PDF: %s", at.JSON(outs["c_manual"]))
		}
		report := at.List(outs, "c_report")
		if len(report) != 2 || at.Str(report[0], "type") != "input_text" || !file(report[1], "report.pdf") {
			return nil, fmt.Errorf("builtin PDF: %s", at.JSON(outs["c_report"]))
		}
		return response("resp_2", map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "read", "annotations": []any{}}}}), nil
	})
	c := client(prov)
	params := responses.ResponseNewParams{Model: "gpt-test", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("go")}}
	at.Converse(t, "read", func() (string, bool) {
		var err error
		if params.Tools, err = tools.ResponseTools(ctx); err != nil {
			t.Fatal(err)
		}
		resp, err := c.Responses.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		out := tools.RunResponse(ctx, resp.Output)
		if out == nil {
			return resp.OutputText(), true
		}
		params.PreviousResponseID = openai.String(resp.ID)
		params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: out}
		return "", false
	})
}

// A Chat Completions tool message carries text only: text and structured
// content are both there, text first, and a PDF is described.
func TestChatTextStructuredAndDocuments(t *testing.T) {
	tk := at.Toolkit(t)
	if err := tk.AddTool(at.Report()); err != nil {
		t.Fatal(err)
	}
	tools := oa.New(tk)
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		msgs := at.List(r.Body, "messages")
		if at.Str(msgs[len(msgs)-1], "role") == "user" {
			return at.ChatCompletion(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
				at.FunctionCall("c_stats", at.RemoteStats, `{}`),
				at.FunctionCall("c_report", "export_report", `{}`),
			}}, "tool_calls"), nil
		}
		got := map[string]any{}
		for _, m := range msgs[len(msgs)-2:] {
			got[at.Str(m, "tool_call_id")] = at.Get(m, "content")
		}
		var stats []string
		for _, p := range at.List(got, "c_stats") {
			stats = append(stats, at.Str(p, "text"))
		}
		if !reflect.DeepEqual(stats, []string{at.StatsText, at.StatsJSON}) {
			return nil, fmt.Errorf("text and structured content: %s", at.JSON(got["c_stats"]))
		}
		if s := at.Str(got, "c_report"); !strings.Contains(s, "application/pdf") || !strings.Contains(s, "not shown") {
			return nil, fmt.Errorf("PDF in a tool message: %s", at.JSON(got["c_report"]))
		}
		return at.ChatCompletion(map[string]any{"role": "assistant", "content": "read"}, "stop"), nil
	})
	chatConverse(t, tools, prov, "go", "read", 2)
}

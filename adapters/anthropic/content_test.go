package anthropic_test

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	an "github.com/llmkit/toolkit/adapters/anthropic"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// A remote tool's text and structured content both reach Claude, text
// first (the JSON once when the text is the JSON), and PDF outputs, a
// builtin's or embedded in a remote tool's content, go as document blocks
// inside the tool_result.
func TestTextStructuredAndDocuments(t *testing.T) {
	tk := at.Toolkit(t)
	if err := tk.AddTool(at.Report()); err != nil {
		t.Fatal(err)
	}
	tools := an.New(tk)
	pdf := base64.StdEncoding.EncodeToString(at.PDF())
	document := func(b any, title string) bool {
		return at.Str(b, "type") == "document" && at.Str(b, "title") == title && at.Str(b, "source", "type") == "base64" &&
			at.Str(b, "source", "media_type") == "application/pdf" && at.Str(b, "source", "data") == pdf
	}
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		if len(at.List(r.Body, "messages")) == 1 {
			return message("msg_1", "tool_use",
				toolUse("t_stats", at.RemoteStats, map[string]any{}),
				toolUse("t_json", at.RemoteStatsJSON, map[string]any{}),
				toolUse("t_manual", at.RemoteManual, map[string]any{}),
				toolUse("t_report", "export_report", map[string]any{})), nil
		}
		res, err := resultsOf(r.Body)
		if err != nil {
			return nil, err
		}
		texts := func(id string) []string {
			var out []string
			for _, b := range at.List(res[id], "content") {
				out = append(out, at.Str(b, "text"))
			}
			return out
		}
		if got := texts("t_stats"); !reflect.DeepEqual(got, []string{at.StatsText, at.StatsJSON}) {
			return nil, fmt.Errorf("text and structured content: %s", at.JSON(res["t_stats"]))
		}
		if got := texts("t_json"); !reflect.DeepEqual(got, []string{at.StatsJSON}) {
			return nil, fmt.Errorf("structured content and its JSON: %s", at.JSON(res["t_json"]))
		}
		manual := at.List(res["t_manual"], "content")
		if len(manual) != 2 || at.Str(manual[0], "text") != "the manual:" || !document(manual[1], "manual.pdf") {
			return nil, fmt.Errorf("remote PDF: %s", at.JSON(res["t_manual"]))
		}
		report := at.List(res["t_report"], "content")
		if len(report) != 2 || at.Str(report[0], "type") != "text" || !document(report[1], "report.pdf") {
			return nil, fmt.Errorf("builtin PDF: %s", at.JSON(res["t_report"]))
		}
		return message("msg_2", "end_turn", map[string]any{"type": "text", "text": "read"}), nil
	})
	converse(t, tools, prov, anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("go"))}}, "read")
}

package genai_test

import (
	"encoding/base64"
	"fmt"
	"testing"

	gg "github.com/llmkit/toolkit/adapters/genai"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// A remote tool's text and structured content both reach Gemini, text
// first (a structured value alone stays JSON), and PDF outputs travel as
// inline data.
func TestTextStructuredAndDocuments(t *testing.T) {
	tk := at.Toolkit(t)
	if err := tk.AddTool(at.Report()); err != nil {
		t.Fatal(err)
	}
	tools := gg.New(tk)
	pdf := base64.StdEncoding.EncodeToString(at.PDF())
	prov := gemini(t, func(r at.Request) (any, error) {
		if len(at.List(r.Body, "contents")) == 1 {
			return candidate(call("c_stats", at.RemoteStats, nil), call("c_json", at.RemoteStatsJSON, nil),
				call("c_manual", at.RemoteManual, nil), call("c_report", "export_report", nil)), nil
		}
		res, err := responsesOf(r.Body)
		if err != nil {
			return nil, err
		}
		if got := at.Str(res["c_stats"], "response", "output"); got != at.StatsText+"\n"+at.StatsJSON {
			return nil, fmt.Errorf("text and structured content: %s", at.JSON(res["c_stats"]))
		}
		if at.Get(res["c_json"], "response", "output", "matches") != 3.0 {
			return nil, fmt.Errorf("structured content and its JSON: %s", at.JSON(res["c_json"]))
		}
		for _, id := range []string{"c_manual", "c_report"} {
			if at.Str(res[id], "parts", 0, "inlineData", "mimeType") != "application/pdf" || at.Str(res[id], "parts", 0, "inlineData", "data") != pdf {
				return nil, fmt.Errorf("%s PDF: %s", id, at.JSON(res[id]))
			}
		}
		return candidate(map[string]any{"text": "read"}), nil
	})
	converse(t, tools, prov, "go", "read")
}

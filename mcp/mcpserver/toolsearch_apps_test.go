package mcpserver

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// appMetaTool is a builtin tool that carries _meta.
type appMetaTool struct {
	*testTool
	meta map[string]any
}

func (t appMetaTool) MetaData() map[string]any { return t.meta }

// TestToolSearchKeepsAppOnlyToolsFromModels: with tool search, a tool an
// MCP App reserves for its view (`_meta.ui.visibility: ["app"]`) is listed
// directly, so that the host finds it for its app (and keeps it from its
// model), and is called directly; search_tools never finds it,
// describe_tools calls it unknown, and call_tool (a model's way to tools)
// refuses it as unknown. A tool visible to both stays searchable.
func TestToolSearchKeepsAppOnlyToolsFromModels(t *testing.T) {
	leakCheck(t)
	ran := func(name string) func(context.Context, json.RawMessage) (any, error) {
		return func(context.Context, json.RawMessage) (any, error) { return name + " ran", nil }
	}
	appOnly := appMetaTool{testTool: &testTool{name: "refresh_chart", desc: "Refresh the chart data of the sales view.", run: ran("refresh_chart")},
		meta: map[string]any{"ui": map[string]any{"visibility": []any{"app"}}}}
	both := appMetaTool{testTool: &testTool{name: "show_chart", desc: "Show the sales chart.", run: ran("show_chart")},
		meta: map[string]any{"ui": map[string]any{"resourceUri": "ui://sales/chart.html", "visibility": []any{"model", "app"}}}}
	f := newFixture(t, []toolkit.Option{toolkit.WithTool(appOnly, both)}, WithToolSearch(ToolSearch{}))
	cs := f.connect(t, nil)

	if got, want := listedNames(t, cs), []string{CallToolName, DescribeToolsName, "refresh_chart", SearchToolsName}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tools/list %v, want %v", got, want)
	}
	if got := searchTools(t, cs, "refresh the chart data of the sales view", 0); !reflect.DeepEqual(got, []string{"show_chart"}) {
		t.Errorf("search finds %v, want only show_chart", got)
	}
	var d struct {
		Tools   []json.RawMessage `json:"tools"`
		Unknown []string          `json:"unknown"`
	}
	callJSON(t, cs, DescribeToolsName, map[string]any{"names": []string{"refresh_chart", "show_chart"}}, &d)
	if len(d.Tools) != 1 || !reflect.DeepEqual(d.Unknown, []string{"refresh_chart"}) {
		t.Errorf("describe: %d tools, unknown %v", len(d.Tools), d.Unknown)
	}
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: CallToolName, Arguments: map[string]any{"name": "refresh_chart"}}); err == nil {
		t.Error("call_tool ran an app-only tool")
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "refresh_chart"})
	if err != nil || res.IsError || resultText(t, res) != "refresh_chart ran" {
		t.Errorf("the app's direct call: %+v, %v", res, err)
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestConfigToolSearch(t *testing.T) {
	cfg, err := parseConfig("gw.yaml", []byte("tool_search:\n  always: [local_whoami, 'calc.*']\n  limit: 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if ts := cfg.ToolSearch; ts == nil || !slices.Equal(ts.Always, []string{"local_whoami", "calc.*"}) || ts.Limit != 5 {
		t.Errorf("tool_search = %+v", cfg.ToolSearch)
	}
	if cfg, err := parseConfig("gw.yaml", []byte("tool_search: {}\n")); err != nil || cfg.ToolSearch == nil || cfg.ToolSearch.Limit != 0 {
		t.Errorf("empty tool_search: %+v, %v", cfg, err)
	}
	if cfg, err := parseConfig("gw.yaml", []byte("listen: 127.0.0.1:0\n")); err != nil || cfg.ToolSearch != nil {
		t.Errorf("no tool_search: %+v, %v", cfg, err)
	}
	for yaml, want := range map[string]string{
		"tool_search:\n  always: [ok, '[']\n": `gw.yaml:2: tool_search.always[1]: "[" is not a glob pattern`,
		"tool_search:\n  always: ['']\n":      `gw.yaml:2: tool_search.always[0]: "" is not a glob pattern`,
		"tool_search:\n  limit: 51\n":         "gw.yaml:2: tool_search.limit: 51 is out of range: use 1 to 50",
		"tool_search:\n  limit: -1\n":         "gw.yaml:2: tool_search.limit: -1 is out of range",
		"tool_search:\n  always: x\n":         `gw.yaml:2: tool_search.always: cannot use "x" as a list of strings`,
		"tool_search:\n  alwys: [x]\n":        "gw.yaml:2: tool_search.alwys: unknown field (known: always, limit)",
		"tool_search: yes\n":                  "gw.yaml:1: tool_search: cannot use",
	} {
		if _, err := parseConfig("gw.yaml", []byte(yaml)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", yaml, err, want)
		}
	}
	var none *ToolSearch
	if none.String() != "" || (&ToolSearch{Always: []string{"a"}}).String() == (&ToolSearch{Always: []string{"b"}}).String() {
		t.Error("String does not tell configurations apart")
	}
}

// TestGatewayToolSearch runs the gateway with tool_search in front of the
// example's stdio server and an HTTP server: the client lists the
// meta-tools and the always tool, finds a tool by what it does, reads its
// definition and calls it; a change of tool_search on reload is refused
// until a restart.
func TestGatewayToolSearch(t *testing.T) {
	calc := startCalc(t)
	dir := t.TempDir()
	text := fmt.Sprintf(`
listen: 127.0.0.1:0
qualified_names: true
tool_search:
  always: [local_whoami]
servers:
  - name: local
    command: [%q, mcp-server]
  - name: calc
    url: %s
`, exampleProgram(t), calc.URL)
	g := startGateway(t, writeConfig(t, dir, text))
	g.waitHealth(t, http.StatusOK)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "gateway-test", Version: "1"}, nil).
		Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: g.mcpURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	if got, want := toolNames(t, cs), []string{"call_tool", "describe_tools", "local_whoami", "search_tools"}; !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	var found struct {
		Tools []struct{ Name, Description string } `json:"tools"`
	}
	callJSON(t, cs, "search_tools", map[string]any{"query": "add two numbers", "limit": 3}, &found)
	if len(found.Tools) == 0 || found.Tools[0].Name != "calc_add" {
		t.Fatalf("search = %+v", found)
	}
	var described struct {
		Tools []sdk.Tool `json:"tools"`
	}
	callJSON(t, cs, "describe_tools", map[string]any{"names": []string{"calc_add"}}, &described)
	if len(described.Tools) != 1 || described.Tools[0].InputSchema == nil {
		t.Fatalf("describe = %+v", described)
	}
	var sum addOut
	callJSON(t, cs, "call_tool", map[string]any{"name": "calc_add", "arguments": map[string]int{"a": 2, "b": 3}}, &sum)
	if sum.Sum != 5 {
		t.Errorf("call_tool calc_add = %+v", sum)
	}
	var we *jsonrpc.Error
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "calc_nope"}}); !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown tool through call_tool: %v", err)
	}
	var who whoamiOut
	callJSON(t, cs, "local_whoami", nil, &who)

	// Changing tool_search needs a restart: the reload says so and keeps it.
	writeConfig(t, dir, strings.Replace(text, "[local_whoami]", "[calc_add]", 1))
	mark := g.mark()
	g.cmd.Process.Signal(syscall.SIGHUP)
	g.waitLog(t, mark, func(r map[string]any) bool {
		return r["msg"] == "configuration change needs a restart; ignored" && r["field"] == "tool_search"
	})
	if got := toolNames(t, cs); !slices.Contains(got, "local_whoami") {
		t.Errorf("tools after the reload = %v", got)
	}
	cs.Close()
	g.terminate(t, who.PID)
}

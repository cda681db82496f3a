package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/tool"
)

// corpusFile holds the tool definitions of 24 real MCP servers (see
// internal/testing/toolcorpus).
const corpusFile = "../../model/testdata/disclosure/tools.json"

// definedTool is a tool of the corpus: its definition as its server gave
// it.
type definedTool struct {
	tool.Base
	name, desc string
	title      string
	in, out    *jsonschema.Schema
	ann        sdk.ToolAnnotations
}

func (t *definedTool) Name() string                              { return t.name }
func (t *definedTool) Description() string                       { return t.desc }
func (t *definedTool) InputSchema() (*jsonschema.Schema, error)  { return t.in, nil }
func (t *definedTool) OutputSchema() (*jsonschema.Schema, error) { return t.out, nil }
func (t *definedTool) Meta() tool.Meta {
	title := t.title
	if title == "" {
		title = t.ann.Title
	}
	return tool.Meta{Title: title, ReadOnlyHint: t.ann.ReadOnlyHint, DestructiveHint: t.ann.DestructiveHint,
		IdempotentHint: t.ann.IdempotentHint, OpenWorldHint: t.ann.OpenWorldHint}
}
func (t *definedTool) Run(context.Context, json.RawMessage) (any, error) { return t.name, nil }

// corpusToolkit serves the corpus's servers as connectors of a toolkit,
// one namespace each, as a gateway would.
func corpusToolkit(t *testing.T) (*toolkit.Toolkit, int) {
	t.Helper()
	data, err := os.ReadFile(corpusFile)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Servers []struct {
			Namespace string `json:"namespace"`
			Tools     []struct {
				Name         string              `json:"name"`
				Title        string              `json:"title"`
				Description  string              `json:"description"`
				InputSchema  *jsonschema.Schema  `json:"inputSchema"`
				OutputSchema *jsonschema.Schema  `json:"outputSchema"`
				Annotations  sdk.ToolAnnotations `json:"annotations"`
			} `json:"tools"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	conns := map[string][]toolkit.Tool{}
	var order []string
	n := 0
	for _, s := range c.Servers {
		order = append(order, s.Namespace)
		for _, ct := range s.Tools {
			conns[s.Namespace] = append(conns[s.Namespace], &definedTool{name: ct.Name, desc: ct.Description, title: ct.Title,
				in: ct.InputSchema, out: ct.OutputSchema, ann: ct.Annotations})
			n++
		}
	}
	tk, _ := mutableToolkit(t, nil, conns, order)
	return tk, n
}

// listBytes returns the tools a client receives from tools/list (every
// page) and their size as JSON.
func listBytes(t *testing.T, cs *sdk.ClientSession) ([]*sdk.Tool, int) {
	t.Helper()
	var tools []*sdk.Tool
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tl)
	}
	data, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	return tools, len(data)
}

// TestDisclosureFiguresTokens measures what a client puts in its model's
// context for the corpus served by a gateway (24 real servers, 343
// tools): the tools/list it receives without tool search, and with it
// (the meta-tools), plus what a search and a description add. Tokens are
// approximated as bytes/4.
//
//	go test -run TestDisclosureFigures -v ./mcp/mcpserver/
func TestDisclosureFiguresTokens(t *testing.T) {
	leakCheck(t)
	tk, n := corpusToolkit(t)
	full, err := New(tk, nil, WithQualifiedNames())
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	searched, err := New(tk, nil, WithQualifiedNames(), WithToolSearch(ToolSearch{}))
	if err != nil {
		t.Fatal(err)
	}
	defer searched.Close()
	fullTools, fullBytes := listBytes(t, (&fixture{tk: tk, srv: full}).connect(t, nil))
	cs := (&fixture{tk: tk, srv: searched}).connect(t, nil)
	metaTools, metaBytes := listBytes(t, cs)
	if len(fullTools) != n || len(metaTools) != 3 {
		t.Fatalf("%d tools listed of %d; %d meta-tools", len(fullTools), n, len(metaTools))
	}

	// What one step of discovery adds: a search (default limit, 10) and the
	// description of the first tool found, averaged over queries.
	queries := []string{"read a file", "open a pull request", "take a screenshot of the page", "list pods",
		"search the web", "create an index on a collection", "post a message to a channel", "commit my changes"}
	var searchBytes, describeBytes int
	for _, q := range queries {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: SearchToolsName, Arguments: map[string]any{"query": q}})
		if err != nil || res.IsError {
			t.Fatalf("search %q: %v %v", q, res, err)
		}
		text := resultText(t, res)
		searchBytes += len(text)
		var a searchAnswer
		json.Unmarshal([]byte(text), &a)
		if len(a.Tools) == 0 {
			t.Fatalf("search %q found nothing", q)
		}
		res, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: DescribeToolsName, Arguments: map[string]any{"names": []string{a.Tools[0].Name}}})
		if err != nil || res.IsError {
			t.Fatalf("describe %s: %v %v", a.Tools[0].Name, res, err)
		}
		describeBytes += len(resultText(t, res))
	}
	searchBytes /= len(queries)
	describeBytes /= len(queries)

	tok := func(b int) int { return (b + 3) / 4 }
	saved := 1 - float64(metaBytes)/float64(fullBytes)
	step := metaBytes + searchBytes + describeBytes
	fmt.Printf("Tokens: %d tools of 24 servers served by one gateway (qualified names)\n", n)
	fmt.Printf("  tools/list, full          %8d bytes  ~%6d tokens\n", fullBytes, tok(fullBytes))
	fmt.Printf("  tools/list, tool_search   %8d bytes  ~%6d tokens  (%.1f%% fewer)\n", metaBytes, tok(metaBytes), 100*saved)
	fmt.Printf("  + one search_tools answer %8d bytes  ~%6d tokens  (mean of %d queries, 10 hits)\n", searchBytes, tok(searchBytes), len(queries))
	fmt.Printf("  + one describe_tools      %8d bytes  ~%6d tokens  (the first hit)\n", describeBytes, tok(describeBytes))
	fmt.Printf("  list + search + describe  %8d bytes  ~%6d tokens  (%.1f%% fewer than the full list)\n", step, tok(step), 100*(1-float64(step)/float64(fullBytes)))
	names := make([]string, len(metaTools))
	for i, m := range metaTools {
		names[i] = m.Name
	}
	slices.Sort(names)
	if saved < 0.85 {
		t.Errorf("tool_search lists %.1f%% fewer bytes, want >= 85%%", 100*saved)
	}
	if want := fmt.Sprint([]string{CallToolName, DescribeToolsName, SearchToolsName}); fmt.Sprint(names) != want {
		t.Errorf("meta-tools %v", names)
	}
}

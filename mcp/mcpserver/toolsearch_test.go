package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// searchToolkit is a toolkit of two sources with a tool name in common,
// and builtins: get_time, a tool that fails and one that answers with a
// JSON-RPC error.
func searchToolkit(t *testing.T) (*toolkit.Toolkit, map[string]*mutableConn) {
	t.Helper()
	path := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"path": {Type: "string", Description: "The file's path."}}, Required: []string{"path"}}
	echo := func(name, source string) *testTool {
		tl := funcTool(name, func(_ context.Context, in json.RawMessage) (any, error) { return source + ":" + string(in), nil })
		tl.in = path
		return tl
	}
	fs := []toolkit.Tool{echo("read_file", "fs"), echo("delete_file", "fs"), echo("write_file", "fs")}
	fs[1].(*testTool).desc = "Delete a file from the disk."
	fs[0].(*testTool).desc = "Read the contents of a file."
	gh := []toolkit.Tool{
		&testTool{name: "create_issue", desc: "Open a new issue in a repository.", run: func(context.Context, json.RawMessage) (any, error) { return map[string]any{"number": 7}, nil },
			out: &jsonschema.Schema{Type: "object"}},
		namedTool("list_issues", "gh"),
		echo("read_file", "gh"),
	}
	gh[1].(*testTool).desc = "List the issues of a repository."
	gh[2].(*testTool).desc = "Read a file of a repository."
	fail := funcTool("flaky", func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("the disk is on fire") })
	rpc := funcTool("upstreamish", func(context.Context, json.RawMessage) (any, error) {
		return nil, &jsonrpc.Error{Code: -32042, Message: "upstream says no", Data: json.RawMessage(`{"why":"quota"}`)}
	})
	clock := namedTool("get_time", "builtin")
	clock.desc = "Current time in a time zone."
	return mutableToolkit(t, []toolkit.Tool{clock, fail, rpc}, map[string][]toolkit.Tool{"fs": fs, "gh": gh}, []string{"fs", "gh"})
}

func listedNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// callJSON calls a meta-tool and decodes its structured content.
func callJSON(t *testing.T, cs *sdk.ClientSession, name string, args any, out any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if out != nil && !res.IsError {
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var fromText, fromStructured any
		json.Unmarshal([]byte(resultText(t, res)), &fromText)
		json.Unmarshal(data, &fromStructured)
		if !reflect.DeepEqual(fromText, fromStructured) {
			t.Errorf("%s: text %s differs from the structured content %s", name, resultText(t, res), data)
		}
	}
	return res
}

type searchAnswer struct {
	Tools []struct{ Name, Title, Description string } `json:"tools"`
}

func (a searchAnswer) names() []string {
	var out []string
	for _, t := range a.Tools {
		out = append(out, t.Name)
	}
	return out
}

func searchTools(t *testing.T, cs *sdk.ClientSession, query string, limit int) []string {
	t.Helper()
	args := map[string]any{"query": query}
	if limit > 0 {
		args["limit"] = limit
	}
	var a searchAnswer
	if res := callJSON(t, cs, SearchToolsName, args, &a); res.IsError {
		t.Fatalf("search %q: %s", query, resultText(t, res))
	}
	return a.names()
}

// TestToolSearchEndToEnd: tools/list holds the three meta-tools and the
// Always tools; search, describe and call work through them and answer
// what the tools themselves answer, errors included, under the names the
// server exposes.
func TestToolSearchEndToEnd(t *testing.T) {
	leakCheck(t)
	tk, _ := searchToolkit(t)
	srv, err := New(tk, nil, WithToolSearch(ToolSearch{Always: []string{"get_time", "fs.write_*"}}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	plain, err := New(tk, nil) // the same toolkit served without tool search
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	cs := (&fixture{tk: tk, srv: srv}).connect(t, nil)
	direct := (&fixture{tk: tk, srv: plain}).connect(t, nil)

	if got, want := listedNames(t, cs), []string{CallToolName, DescribeToolsName, "get_time", SearchToolsName, "write_file"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tools/list %v, want %v", got, want)
	}

	// Search: best first, exposed names (gh's read_file is qualified).
	if got := searchTools(t, cs, "remove a file from disk", 1); !reflect.DeepEqual(got, []string{"delete_file"}) {
		t.Errorf("search: %v", got)
	}
	got := searchTools(t, cs, "read a file", 0)
	if len(got) < 2 || !slices.Contains(got[:2], "read_file") || !slices.Contains(got[:2], "gh_read_file") {
		t.Errorf("search for a name two sources share: %v", got)
	}
	var a searchAnswer
	callJSON(t, cs, SearchToolsName, map[string]any{"query": "open a ticket"}, &a)
	if len(a.Tools) == 0 || a.Tools[0].Name != "create_issue" || a.Tools[0].Description != "Open a new issue in a repository." {
		t.Errorf("search answer: %+v", a)
	}

	// Describe: the definitions tools/list would give.
	var d struct {
		Tools   []json.RawMessage `json:"tools"`
		Unknown []string          `json:"unknown"`
	}
	callJSON(t, cs, DescribeToolsName, map[string]any{"names": []string{"gh_read_file", "nope", "create_issue"}}, &d)
	plainTools, err := direct.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, tl := range plainTools.Tools {
		b, _ := json.Marshal(tl)
		want[tl.Name] = string(b)
	}
	if len(d.Tools) != 2 || !reflect.DeepEqual(d.Unknown, []string{"nope"}) {
		t.Fatalf("describe: %d tools, unknown %v", len(d.Tools), d.Unknown)
	}
	for _, raw := range d.Tools {
		var tl sdk.Tool
		json.Unmarshal(raw, &tl)
		b, _ := json.Marshal(&tl)
		if want[tl.Name] != string(b) {
			t.Errorf("describe %s:\n%s\nwant\n%s", tl.Name, b, want[tl.Name])
		}
	}

	// Call: the tool's own answer, as a direct call gets it.
	for _, c := range []struct {
		name string
		args any
	}{
		{"gh_read_file", map[string]any{"path": "a"}},
		{"create_issue", map[string]any{}}, // structured output
		{"flaky", nil},                     // a tool failure: isError
		{"read_file", map[string]any{}},    // arguments the schema refuses: isError
		{"upstreamish", nil},               // a JSON-RPC error: passed on
		{"get_time", nil},                  // an Always tool is callable both ways
		{"no_such_tool", nil},              // unknown: -32602
	} {
		viaMeta, errMeta := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: CallToolName, Arguments: map[string]any{"name": c.name, "arguments": c.args}})
		viaDirect, errDirect := direct.CallTool(context.Background(), &sdk.CallToolParams{Name: c.name, Arguments: c.args})
		if !sameAnswer(viaMeta, errMeta, viaDirect, errDirect) {
			t.Errorf("call_tool %s: %+v, %v; a direct call: %+v, %v", c.name, viaMeta, errMeta, viaDirect, errDirect)
		}
	}
	var we *jsonrpc.Error
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: CallToolName, Arguments: map[string]any{"name": "upstreamish"}}); !errors.As(err, &we) || we.Code != -32042 {
		t.Errorf("a JSON-RPC error through call_tool: %v", err)
	}
	// A non-object "arguments" is refused as a direct call's would be.
	_, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: CallToolName, Arguments: json.RawMessage(`{"name":"read_file","arguments":[1]}`)})
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("array arguments: %v", err)
	}

	// Bad arguments of the meta-tools are tool errors the model reads.
	for _, c := range []struct {
		tool string
		args any
	}{
		{SearchToolsName, map[string]any{}},
		{SearchToolsName, map[string]any{"query": "x", "limit": 0}},
		{SearchToolsName, map[string]any{"query": "x", "limit": MaxSearchLimit + 1}},
		{SearchToolsName, map[string]any{"query": 7}},
		{DescribeToolsName, map[string]any{"names": []string{}}},
		{DescribeToolsName, map[string]any{"names": make([]string, MaxDescribeTools+1)}},
		{CallToolName, map[string]any{"arguments": map[string]any{}}},
	} {
		res := callJSON(t, cs, c.tool, c.args, nil)
		if !res.IsError || !strings.Contains(resultText(t, res), "bad arguments") {
			t.Errorf("%s %v: %+v", c.tool, c.args, res)
		}
	}
}

// sameAnswer reports whether two tools/call outcomes are the same: the
// same result, or the same JSON-RPC error.
func sameAnswer(a *sdk.CallToolResult, aErr error, b *sdk.CallToolResult, bErr error) bool {
	if (aErr == nil) != (bErr == nil) {
		return false
	}
	if aErr != nil {
		var x, y *jsonrpc.Error
		return errors.As(aErr, &x) && errors.As(bErr, &y) && x.Code == y.Code && x.Message == y.Message && string(x.Data) == string(y.Data)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// TestToolSearchFollowsChanges: the index follows the toolkit's changes;
// a change of a searchable tool sends no tools/list_changed (the list did
// not change), a change of an Always tool does.
func TestToolSearchFollowsChanges(t *testing.T) {
	leakCheck(t)
	tk, byNS := searchToolkit(t)
	srv, err := New(tk, nil, WithToolSearch(ToolSearch{Always: []string{"gh.list_*"}}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	toolChanges := make(chan struct{}, 16)
	promptChanges := make(chan struct{}, 16)
	cs := (&fixture{tk: tk, srv: srv}).connect(t, &sdk.ClientOptions{
		ToolListChangedHandler:   func(context.Context, *sdk.ToolListChangedRequest) { toolChanges <- struct{}{} },
		PromptListChangedHandler: func(context.Context, *sdk.PromptListChangedRequest) { promptChanges <- struct{}{} },
	})
	before := listedNames(t, cs)
	if !slices.Contains(before, "list_issues") {
		t.Fatalf("tools/list %v", before)
	}
	if got := searchTools(t, cs, "rename a file", 5); slices.Contains(got, "move_file") {
		t.Fatalf("found before it exists: %v", got)
	}

	// A searchable tool arrives: search finds it and calls reach it.
	fs := byNS["fs"]
	tools, _ := fs.ListTools(context.Background())
	mv := namedTool("move_file", "fs")
	mv.desc = "Move or rename a file."
	fs.set(append(slices.Clone(tools), mv))
	tk.WaitEvents() // the server has applied the change
	if got := searchTools(t, cs, "rename a file", 5); len(got) == 0 || got[0] != "move_file" {
		t.Errorf("after the change: %v", got)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: CallToolName, Arguments: map[string]any{"name": "move_file"}})
	if err != nil || resultText(t, res) != "fs" {
		t.Errorf("call of the new tool: %v, %v", res, err)
	}
	if got := listedNames(t, cs); !reflect.DeepEqual(got, before) {
		t.Errorf("tools/list changed: %v", got)
	}
	// A prompt change is announced after the tool change: had the tool
	// change been announced, its notification (due earlier) would come
	// first.
	if err := tk.AddPrompt(&testPrompt{name: "marker"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-promptChanges:
	case <-time.After(waitLimit):
		t.Fatal("no prompts/list_changed")
	}
	select {
	case <-toolChanges:
		t.Error("a change of searchable tools sent tools/list_changed")
	default:
	}

	// It goes: search and call no longer reach it.
	fs.set(tools)
	tk.WaitEvents()
	if got := searchTools(t, cs, "rename a file", 5); slices.Contains(got, "move_file") {
		t.Errorf("found after its removal: %v", got)
	}
	var we *jsonrpc.Error
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: CallToolName, Arguments: map[string]any{"name": "move_file"}}); !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("call of a removed tool: %v", err)
	}

	// An Always tool changes: clients are told, and see it.
	gh := byNS["gh"]
	ghTools, _ := gh.ListTools(context.Background())
	gh.set(append(slices.Clone(ghTools), namedTool("list_pulls", "gh")))
	tk.WaitEvents()
	select {
	case <-toolChanges:
	case <-time.After(waitLimit):
		t.Fatal("no tools/list_changed for an Always tool")
	}
	if got := listedNames(t, cs); !slices.Contains(got, "list_pulls") || len(got) != len(before)+1 {
		t.Errorf("tools/list after an Always tool arrived: %v", got)
	}
	gh.set(ghTools)
	tk.WaitEvents()
	if got := listedNames(t, cs); !reflect.DeepEqual(got, before) {
		t.Errorf("tools/list after it went: %v", got)
	}
}

// TestToolSearchFilter: the filter sees each request's principal and
// hides what it refuses from search, describe and call alike.
func TestToolSearchFilter(t *testing.T) {
	leakCheck(t)
	tk, _ := searchToolkit(t)
	var mu sync.Mutex
	seen := map[string]bool{}
	filter := func(_ context.Context, principal string, tl *SearchableTool) bool {
		mu.Lock()
		seen[principal] = true
		mu.Unlock()
		if tl.Tool == nil || tl.Name == "" || !strings.HasPrefix(tl.Key, tl.Namespace+".") {
			t.Errorf("filter given %+v", tl)
		}
		return principal == "admin" || tl.Namespace != "gh"
	}
	srv, err := New(tk, nil, WithToolSearch(ToolSearch{Filter: filter}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	verifier := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: token, Expiration: time.Now().Add(time.Hour)}, nil
	}
	ts := (&fixture{tk: tk, srv: srv}).serveHTTP(t, WithBearerAuth(verifier, nil))
	connect := func(token string) *sdk.ClientSession {
		cs, err := connectHTTP(t, ts.URL, http.Header{"Authorization": {"Bearer " + token}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	admin, user := connect("admin"), connect("someone")

	if got := searchTools(t, user, "issue", 10); slices.ContainsFunc(got, func(n string) bool { return strings.Contains(n, "issue") }) {
		t.Errorf("a refused tool found: %v", got)
	}
	if got := searchTools(t, admin, "issue", 10); !slices.Contains(got, "create_issue") {
		t.Errorf("admin search: %v", got)
	}
	var d struct{ Unknown []string }
	callJSON(t, user, DescribeToolsName, map[string]any{"names": []string{"create_issue", "read_file"}}, &d)
	if !reflect.DeepEqual(d.Unknown, []string{"create_issue"}) {
		t.Errorf("describe refused: %v", d.Unknown)
	}
	var we *jsonrpc.Error
	_, err = user.CallTool(context.Background(), &sdk.CallToolParams{Name: CallToolName, Arguments: map[string]any{"name": "create_issue"}})
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, "unknown tool") {
		t.Errorf("refused call: %v", err)
	}
	if res, err := admin.CallTool(context.Background(), &sdk.CallToolParams{Name: CallToolName, Arguments: map[string]any{"name": "create_issue"}}); err != nil || res.IsError {
		t.Errorf("admin call: %+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !seen["admin"] || !seen["someone"] {
		t.Errorf("principals seen: %v", seen)
	}
}

// TestToolSearchOptions: bad patterns and limits are refused; a toolkit
// tool named like a meta-tool is reachable through call_tool only.
func TestToolSearchOptions(t *testing.T) {
	leakCheck(t)
	tk, err := toolkit.New(toolkit.WithTool(namedTool("search_tools", "builtin"), namedTool("other", "builtin")))
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range []ToolSearch{{Always: []string{"[bad"}}, {Limit: -1}, {Limit: MaxSearchLimit + 1}} {
		if _, err := New(tk, nil, WithToolSearch(ts)); !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "WithToolSearch") {
			t.Errorf("%+v: %v", ts, err)
		}
	}
	srv, err := New(tk, nil, WithToolSearch(ToolSearch{Always: []string{"*"}, Limit: 1}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cs := (&fixture{tk: tk, srv: srv}).connect(t, nil)
	if got := listedNames(t, cs); !reflect.DeepEqual(got, []string{CallToolName, DescribeToolsName, "other", SearchToolsName}) {
		t.Errorf("tools/list %v", got)
	}
	var a searchAnswer
	callJSON(t, cs, SearchToolsName, map[string]any{"query": "search tools"}, &a)
	if len(a.Tools) != 1 || a.Tools[0].Name != "search_tools" {
		t.Errorf("the toolkit's search_tools: %+v", a)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: CallToolName, Arguments: map[string]any{"name": "search_tools"}})
	if err != nil || resultText(t, res) != "builtin" {
		t.Errorf("call_tool of the toolkit's search_tools: %+v, %v", res, err)
	}
}

package model

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	toolkit "github.com/llmkit/toolkit"
)

// definitionNames lists the names of defs.
func definitionNames(defs []Definition) []string {
	var out []string
	for _, d := range defs {
		out = append(out, d.Name)
	}
	return out
}

// searchCall is a call of the search tool.
func searchCall(id, query string, limit int) ToolCall {
	args, _ := json.Marshal(map[string]any{"query": query, "limit": limit})
	return ToolCall{ID: id, Name: DefaultSearchToolName, Arguments: string(args)}
}

// TestDisclosureTurns: a request offers the search tool and the
// always-offered tools; what a search finds joins the next requests, and
// calls of found tools run.
func TestDisclosureTurns(t *testing.T) {
	ctx := context.Background()
	cat := NewCatalog(&staticLister{items: searchItems()})
	d := NewDisclosure(cat, WithAlways(Filter{Names: []string{"get_time"}}))
	var l Loaded

	defs, err := d.Definitions(ctx, &l)
	if err != nil || !reflect.DeepEqual(definitionNames(defs), []string{"search_tools", "get_time"}) {
		t.Fatalf("first request: %v, %v", definitionNames(defs), err)
	}
	if !json.Valid(defs[0].Parameters) || !strings.Contains(string(defs[0].Parameters), `"required":["query"]`) {
		t.Errorf("search tool schema: %s", defs[0].Parameters)
	}

	// The model searches; the answer names the tools, best first.
	res := d.Dispatch(ctx, NewDispatcher(directCaller{}, cat), &l, searchCall("c1", "remove a file from disk", 2))
	if len(res) != 1 || res[0].IsError || !res[0].JSON {
		t.Fatalf("search result: %+v", res)
	}
	var ans struct {
		Tools []FoundTool `json:"tools"`
		Note  string      `json:"note"`
	}
	if err := json.Unmarshal([]byte(res[0].Content), &ans); err != nil {
		t.Fatal(err)
	}
	if len(ans.Tools) != 2 || ans.Tools[0].Name != "delete_file" || ans.Tools[0].Description != "Delete a file from disk." {
		t.Errorf("found %+v", ans.Tools)
	}
	if !reflect.DeepEqual(l.Names(), []string{"delete_file", "read_file"}) {
		t.Errorf("loaded %v", l.Names())
	}

	// The next request offers them; a call of one runs, alongside another
	// search, results in call order.
	defs, _ = d.Definitions(ctx, &l)
	if !reflect.DeepEqual(definitionNames(defs), []string{"search_tools", "get_time", "delete_file", "read_file"}) {
		t.Errorf("second request: %v", definitionNames(defs))
	}
	res = d.Dispatch(ctx, NewDispatcher(directCaller{}, cat), &l,
		ToolCall{ID: "c2", Name: "delete_file", Arguments: `{"path":"x"}`},
		searchCall("c3", "weather in Paris", 0))
	if len(res) != 2 || res[0].ID != "c2" || res[0].IsError || res[0].Content != `{"path":"x"}` || res[1].ID != "c3" || res[1].IsError {
		t.Errorf("mixed turn: %+v", res)
	}
	if got := l.Names(); !reflect.DeepEqual(got, []string{"delete_file", "read_file", "get_weather"}) {
		t.Errorf("loaded after the second search: %v", got)
	}
}

// TestDisclosureSearchAnswers: always-offered tools are not returned,
// nothing found says so, bad arguments are an error the model reads.
func TestDisclosureSearchAnswers(t *testing.T) {
	ctx := context.Background()
	cat := NewCatalog(&staticLister{items: searchItems()})
	d := NewDisclosure(cat, WithAlways(Filter{Names: []string{"read_file"}}), WithSearchLimit(3))
	var l Loaded
	r := d.Search(ctx, &l, searchCall("1", "file", 0))
	if r.IsError || strings.Contains(r.Content, "read_file") || !strings.Contains(r.Content, "delete_file") {
		t.Errorf("always tool returned, or none found: %s", r.Content)
	}
	r = d.Search(ctx, &l, searchCall("2", "zebra", 0))
	if r.IsError || !strings.Contains(r.Content, `"tools":[]`) || !strings.Contains(r.Content, "No tool matches") {
		t.Errorf("nothing found: %s", r.Content)
	}
	for _, args := range []string{`{"limit":3}`, `not json`, `{"query":""}`, `{"query":7}`} {
		r = d.Search(ctx, &l, ToolCall{ID: "3", Name: DefaultSearchToolName, Arguments: args})
		if !r.IsError || !errors.Is(r.Err, toolkit.ErrBadParameter) || !strings.Contains(r.Content, "query") {
			t.Errorf("%s: %+v", args, r)
		}
	}
	if got := l.Names(); !reflect.DeepEqual(got, []string{"delete_file"}) {
		t.Errorf("loaded %v", got)
	}
}

// TestDisclosureLimits: a conversation keeps at most WithMaxLoaded found
// tools, the least recently found dropped first; a limit past the maximum
// is cut.
func TestDisclosureLimits(t *testing.T) {
	ctx := context.Background()
	items := benchItems(300)
	cat := NewCatalog(&staticLister{items: items})
	d := NewDisclosure(cat, WithMaxLoaded(4), WithSearchToolName("find_tools"))
	var l Loaded
	r := d.Search(ctx, &l, ToolCall{Name: "find_tools", Arguments: `{"query":"delete invoice","limit":1000}`})
	var ans struct{ Tools []FoundTool }
	json.Unmarshal([]byte(r.Content), &ans)
	if len(ans.Tools) != MaxSearchLimit {
		t.Errorf("%d tools for a limit of 1000", len(ans.Tools))
	}
	if n := len(l.Names()); n != 4 {
		t.Errorf("%d loaded, want 4", n)
	}
	last := l.Names()[3]
	if last != ans.Tools[len(ans.Tools)-1].Name {
		t.Errorf("the most recently found is not kept: %v", l.Names())
	}
	l.Load(4, "x")
	if got := l.Names(); len(got) != 4 || got[3] != "x" || got[2] != last {
		t.Errorf("after Load: %v", got)
	}
	defs, _ := d.Definitions(ctx, &l)
	if len(defs) != 4 || defs[0].Name != "find_tools" { // "x" is no tool
		t.Errorf("definitions: %v", definitionNames(defs))
	}
	if d.IsSearch(ToolCall{Name: DefaultSearchToolName}) || !d.IsSearch(ToolCall{Name: "find_tools"}) {
		t.Error("IsSearch ignores the name given")
	}
}

func TestDisclosureSplit(t *testing.T) {
	cat := NewCatalog(&staticLister{items: searchItems()})
	d := NewDisclosure(cat, WithAlways(Filter{Namespaces: []string{"builtin"}}))
	always, deferred, err := d.Split(context.Background())
	if err != nil || !reflect.DeepEqual(definitionNames(always), []string{"get_weather", "get_time"}) || len(deferred) != 5 {
		t.Errorf("split: %v / %v, %v", definitionNames(always), definitionNames(deferred), err)
	}
	for _, def := range always {
		if def.Deferred {
			t.Errorf("%s is always offered, and deferred", def.Name)
		}
	}
	for _, def := range deferred {
		if !def.Deferred {
			t.Errorf("%s is not marked deferred", def.Name)
		}
	}
	// Split marks its copies: the catalogue's definitions are unchanged.
	if defs, _ := cat.Definitions(context.Background(), Filter{}); slices.ContainsFunc(defs, func(d Definition) bool { return d.Deferred }) {
		t.Error("Split changed the catalogue's definitions")
	}
}

// TestEncodeDeferred checks that a deferred definition carries
// defer_loading in the Anthropic format, and in no other.
func TestEncodeDeferred(t *testing.T) {
	d := Definition{Name: "f", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`), Deferred: true}
	b, err := EncodeTool(Anthropic, d)
	if err != nil || !strings.Contains(string(b), `"defer_loading":true`) {
		t.Errorf("anthropic: %s, %v", b, err)
	}
	for _, f := range []Format{OpenAIChat, OpenAIResponses, Gemini} {
		b, err := EncodeTool(f, d)
		if err != nil || strings.Contains(string(b), "defer") {
			t.Errorf("%s: %s, %v", f, b, err)
		}
	}
	d.Deferred = false
	if b, _ := EncodeTool(Anthropic, d); strings.Contains(string(b), "defer") {
		t.Errorf("anthropic, not deferred: %s", b)
	}
}

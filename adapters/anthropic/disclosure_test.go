package anthropic_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	an "github.com/llmkit/toolkit/adapters/anthropic"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	"github.com/llmkit/toolkit/model"
)

// A Disclosed view with the real SDK: the first request offers the search
// tool and the always-offered tool only; Claude searches; the tool found
// is offered by the next request, and its call runs in the toolkit.
func TestDisclosed(t *testing.T) {
	tk := at.Toolkit(t)
	var found model.Loaded
	conv := an.New(tk, at.DisclosureOption()).Disclosed(&found)

	prov := at.NewProvider(t, func(r at.Request) (any, error) { return messagesTurn(r, at.DisclosureTurn) })
	converseTurns(t, conv, prov, searchDocs(), at.DisclosureAnswer, 3)
	if names := found.Names(); len(names) != 1 || !at.IsRemote(names[0]) {
		t.Errorf("found %v", names)
	}
}

// Claude's own tool search: the request carries the tool search tool,
// the always-offered tool as usual and every other tool with
// defer_loading; Claude searches on the server (server_tool_use and a
// tool_search_tool_result holding a tool_reference), calls the tool it
// found with an ordinary tool_use, which runs in the toolkit, and the
// search blocks go back with the thread.
func TestDeferredToolParams(t *testing.T) {
	tk := at.Toolkit(t)
	tools := an.New(tk, at.DisclosureOption())
	turn := 0
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		turn++
		list := at.List(r.Body, "tools")
		if len(list) < 3 || at.Str(list[0], "type") != "tool_search_tool_bm25_20251119" || at.Str(list[0], "name") != "tool_search_tool_bm25" {
			return nil, fmt.Errorf("the first tool is not the tool search tool: %s", at.JSON(list))
		}
		if at.Get(list[0], "defer_loading") != nil {
			return nil, fmt.Errorf("the tool search tool is deferred: %s", at.JSON(list[0]))
		}
		remote := ""
		for _, tl := range list[1:] {
			name := at.Str(tl, "name")
			if at.IsRemote(name) {
				remote = name
			}
			deferred := at.Get(tl, "defer_loading") == true
			if deferred == (name == at.Always) {
				return nil, fmt.Errorf("tool %s: defer_loading %v", name, at.Get(tl, "defer_loading"))
			}
			if at.Str(tl, "input_schema", "type") != "object" {
				return nil, fmt.Errorf("tool %s: %s", name, at.JSON(tl))
			}
		}
		if remote == "" {
			return nil, fmt.Errorf("no remote tool among %s", at.JSON(list))
		}
		msgs := at.List(r.Body, "messages")
		switch turn {
		case 1:
			return message("msg_1", "tool_use",
				map[string]any{"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25",
					"input": map[string]any{"query": "search documentation"}},
				map[string]any{"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": map[string]any{
					"type":            "tool_search_tool_search_result",
					"tool_references": []any{map[string]any{"type": "tool_reference", "tool_name": remote}},
				}},
				toolUse("toolu_1", remote, map[string]any{"query": "adapters"})), nil
		case 2:
			asst := msgs[len(msgs)-2]
			if at.Str(asst, "content", 1, "type") != "tool_search_tool_result" ||
				at.Str(asst, "content", 1, "content", "tool_references", 0, "tool_name") != remote {
				return nil, fmt.Errorf("the search was not sent back: %s", at.JSON(asst))
			}
			res, err := resultsOf(r.Body)
			if err != nil {
				return nil, err
			}
			if len(res) != 1 || at.Str(res["toolu_1"], "content", 0, "text") != "found: adapters" {
				return nil, fmt.Errorf("tool results %s", at.JSON(res))
			}
			return message("msg_2", "end_turn", map[string]any{"type": "text", "text": at.DisclosureAnswer}), nil
		}
		return nil, fmt.Errorf("turn %d", turn)
	})
	ctx := context.Background()
	params := searchDocs()
	c := client(prov)
	at.Converse(t, at.DisclosureAnswer, func() (string, bool) {
		var err error
		if params.Tools, err = tools.DeferredToolParams(ctx); err != nil {
			t.Fatal(err)
		}
		msg, err := c.Messages.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		params.Messages = append(params.Messages, msg.ToParam())
		reply, ok := tools.Run(ctx, msg)
		if !ok {
			return msg.Content[0].Text, true
		}
		params.Messages = append(params.Messages, reply)
		return "", false
	})
	// The ordinary list is unchanged: nothing deferred, no search tool.
	plain, err := tools.ToolParams(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plain {
		if p.OfTool == nil || p.OfTool.DeferLoading.Valid() {
			t.Errorf("ToolParams holds %s", at.JSON(p))
		}
	}
}

// A Disclosed view WithToolReferences: every request carries the same
// tools (the toolkit's search tool, the always-offered tool, the others
// deferred); the search's tool_result names the tool found with a
// tool_reference, which loads it, and Claude's call of it runs in the
// toolkit.
func TestDisclosedToolReferences(t *testing.T) {
	tk := at.Toolkit(t)
	conv := an.New(tk, at.DisclosureOption(), an.WithToolReferences(true)).Disclosed(nil)
	var first string
	turn := 0
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		turn++
		list := at.List(r.Body, "tools")
		if turn == 1 {
			first = at.JSON(list)
		} else if at.JSON(list) != first {
			return nil, fmt.Errorf("the tools changed on request %d: %s", turn, at.JSON(list))
		}
		remote := ""
		for i, tl := range list {
			name := at.Str(tl, "name")
			if at.IsRemote(name) {
				remote = name
			}
			offered := i == 0 && name == model.DefaultSearchToolName || i == 1 && name == at.Always
			if deferred := at.Get(tl, "defer_loading") == true; deferred == offered {
				return nil, fmt.Errorf("tool %d %s: defer_loading %v", i, name, at.Get(tl, "defer_loading"))
			}
		}
		msgs := at.List(r.Body, "messages")
		last := msgs[len(msgs)-1]
		switch turn {
		case 1:
			return message("msg_1", "tool_use", toolUse(at.SearchID, model.DefaultSearchToolName, map[string]any{"query": "search the documentation", "limit": 1})), nil
		case 2:
			content := at.List(last, "content", 0, "content")
			if at.Str(last, "content", 0, "tool_use_id") != at.SearchID || len(content) != 2 ||
				at.Str(content[0], "type") != "text" || !strings.Contains(at.Str(content[0], "text"), remote) ||
				at.Str(content[1], "type") != "tool_reference" || at.Str(content[1], "tool_name") != remote {
				return nil, fmt.Errorf("the search's result: %s", at.JSON(last))
			}
			return message("msg_2", "tool_use", toolUse(at.CallID, remote, map[string]any{"query": "adapters"})), nil
		case 3:
			if at.Str(last, "content", 0, "tool_use_id") != at.CallID || at.Str(last, "content", 0, "content", 0, "text") != "found: adapters" {
				return nil, fmt.Errorf("the found tool's result: %s", at.JSON(last))
			}
			return message("msg_3", "end_turn", map[string]any{"type": "text", "text": at.DisclosureAnswer}), nil
		}
		return nil, fmt.Errorf("turn %d", turn)
	})
	converseTurns(t, conv, prov, searchDocs(), at.DisclosureAnswer, 3)
}

// searchDocs is the request the disclosure conversation starts from.
func searchDocs() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Search the docs for adapters."))}}
}

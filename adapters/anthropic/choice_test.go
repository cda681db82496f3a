package anthropic_test

import (
	"context"
	"errors"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/adapters/adapter"
	an "github.com/llmkit/toolkit/adapters/anthropic"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	"github.com/llmkit/toolkit/model"
)

// A toolkit key gives the tool choice that names the tool as it is
// offered: the remote tool under its hashed model name.
func TestToolChoice(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	tools := an.New(tk)
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		return message("msg_1", "end_turn", map[string]any{"type": "text", "text": "ok"}), nil
	})
	choice, err := tools.ToolChoice(ctx, at.RemoteNS+"."+at.RemoteTool)
	if err != nil {
		t.Fatal(err)
	}
	params, err := tools.ToolParams(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := client(prov)
	if _, err := c.Messages.New(ctx, anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 100, Tools: params, ToolChoice: choice,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("search"))}}); err != nil {
		t.Fatal(err)
	}
	body := prov.Requests()[0].Body
	_, remote := at.ByName(at.List(body, "tools"))
	if got := at.Get(body, "tool_choice"); remote == "" || at.Str(got, "type") != "tool" || at.Str(got, "name") != remote {
		t.Errorf("tool_choice %s, remote tool %q", at.JSON(got), remote)
	}

	filtered := an.New(tk, adapter.WithFilter(model.Filter{Namespaces: []string{toolkit.BuiltinNamespace}}))
	for _, tc := range []struct {
		tools *an.Tools
		key   string
	}{{tools, "no_such_tool"}, {filtered, at.RemoteNS + "." + at.RemoteTool}} {
		if _, err := tc.tools.ToolChoice(ctx, tc.key); !errors.Is(err, toolkit.ErrNotFound) {
			t.Errorf("ToolChoice(%q): %v", tc.key, err)
		}
	}
}

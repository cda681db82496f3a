package langchaingo_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	toolkit "github.com/llmkit/toolkit"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	lc "github.com/llmkit/toolkit/adapters/langchaingo"
)

// A toolkit key gives the tool choice that names the tool as it is
// offered, which LangChainGo's OpenAI model sends as tool_choice.
func TestToolChoice(t *testing.T) {
	ctx := context.Background()
	tk := at.Toolkit(t)
	tools := lc.New(tk)
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		if r.Path != "/chat/completions" {
			return nil, fmt.Errorf("unexpected path %s", r.Path)
		}
		return at.ChatCompletion(map[string]any{"role": "assistant", "content": "ok"}, "stop"), nil
	})
	llm, err := openai.New(openai.WithBaseURL(prov.URL), openai.WithToken("test-key"), openai.WithModel("gpt-test"))
	if err != nil {
		t.Fatal(err)
	}
	choice, err := tools.ToolChoice(ctx, at.RemoteNS+"."+at.RemoteTool)
	if err != nil {
		t.Fatal(err)
	}
	lt, err := tools.LLMTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llm.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "search")},
		llms.WithTools(lt), llms.WithToolChoice(choice)); err != nil {
		t.Fatal(err)
	}
	body := prov.Requests()[0].Body
	var fns []any
	for _, tl := range at.List(body, "tools") {
		fns = append(fns, at.Get(tl, "function"))
	}
	_, remote := at.ByName(fns)
	if got := at.Get(body, "tool_choice"); remote == "" || at.Str(got, "function", "name") != remote {
		t.Errorf("tool_choice %s, remote tool %q", at.JSON(got), remote)
	}
	if _, err := tools.ToolChoice(ctx, "no_such_tool"); !errors.Is(err, toolkit.ErrNotFound) {
		t.Errorf("unknown key: %v", err)
	}
}

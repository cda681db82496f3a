package openai_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/openai/openai-go/v3"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	oa "github.com/llmkit/toolkit/adapters/openai"
)

// The Chat Completions loop with a skill: the model reads the skills'
// names and descriptions in load_skill's description, loads the one that
// matches, and follows its instructions.
func TestChatSkill(t *testing.T) {
	ctx := context.Background()
	tools := oa.New(at.SkillToolkit(t))
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		if r.Path != "/v1/chat/completions" {
			return nil, fmt.Errorf("unexpected path %s", r.Path)
		}
		offered := map[string]string{}
		for _, tl := range at.List(r.Body, "tools") {
			offered[at.Str(tl, "function", "name")] = at.Str(tl, "function", "description")
		}
		results := map[string]string{}
		msgs := at.List(r.Body, "messages")
		for i := len(msgs) - 1; i >= 0 && at.Str(msgs[i], "role") == "tool"; i-- {
			results[at.Str(msgs[i], "tool_call_id")] = at.Str(msgs[i], "content")
		}
		call, answer, err := at.SkillTurn(offered, results)
		if err != nil {
			return nil, err
		}
		if call == nil {
			return at.ChatCompletion(map[string]any{"role": "assistant", "content": answer}, "stop"), nil
		}
		return at.ChatCompletion(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
			at.FunctionCall(call.ID, call.Name, call.Args),
		}}, "tool_calls"), nil
	})
	c := client(prov)
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Give me a pirate answer: how is the weather?")},
	}
	at.ConverseTurns(t, at.SkillAnswer, 2, func() (string, bool) {
		var err error
		if params.Tools, err = tools.ChatTools(ctx); err != nil {
			t.Fatal(err)
		}
		comp, err := c.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		msg := comp.Choices[0].Message
		params.Messages = append(params.Messages, msg.ToParam())
		out := tools.RunChat(ctx, msg)
		if out == nil {
			return msg.Content, true
		}
		params.Messages = append(params.Messages, out...)
		return "", false
	})
}

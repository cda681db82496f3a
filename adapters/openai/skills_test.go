package openai_test

import (
	"context"
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
	prov := at.NewProvider(t, func(r at.Request) (any, error) { return at.ChatTurn(r, "/v1/chat/completions", at.SkillTurn) })
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

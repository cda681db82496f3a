package langchaingo_test

import (
	"context"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	lc "github.com/llmkit/toolkit/adapters/langchaingo"
)

// The loop with LangChainGo's OpenAI model and a skill: the model reads
// the skills' names and descriptions in load_skill's description, loads
// the one that matches, and follows its instructions.
func TestSkill(t *testing.T) {
	ctx := context.Background()
	tools := lc.New(at.SkillToolkit(t))
	prov := at.NewProvider(t, func(r at.Request) (any, error) { return at.ChatTurn(r, "/chat/completions", at.SkillTurn) })
	llm, err := openai.New(openai.WithBaseURL(prov.URL), openai.WithToken("test-key"), openai.WithModel("gpt-test"))
	if err != nil {
		t.Fatal(err)
	}
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Give me a pirate answer: how is the weather?")}
	at.ConverseTurns(t, at.SkillAnswer, 2, func() (string, bool) {
		fns, err := tools.LLMTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := llm.GenerateContent(ctx, msgs, llms.WithTools(fns))
		if err != nil {
			t.Fatal(err)
		}
		choice := resp.Choices[0]
		next := tools.Run(ctx, choice)
		if next == nil {
			return choice.Content, true
		}
		msgs = append(msgs, next...)
		return "", false
	})
}

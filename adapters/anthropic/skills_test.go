package anthropic_test

import (
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	an "github.com/llmkit/toolkit/adapters/anthropic"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// The Messages loop with a skill: Claude reads the skills' names and
// descriptions in load_skill's description, loads the one that matches,
// and follows its instructions.
func TestSkill(t *testing.T) {
	tools := an.New(at.SkillToolkit(t))
	prov := at.NewProvider(t, func(r at.Request) (any, error) { return messagesTurn(r, at.SkillTurn) })
	converse(t, tools, prov, anthropic.MessageNewParams{
		Model:     "claude-test",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Give me a pirate answer: how is the weather?"))},
	}, at.SkillAnswer)
}

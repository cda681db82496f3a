package openai_test

import (
	"testing"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	oa "github.com/llmkit/toolkit/adapters/openai"
)

// The Chat Completions loop with a skill: the model reads the skills'
// names and descriptions in load_skill's description, loads the one that
// matches, and follows its instructions.
func TestChatSkill(t *testing.T) {
	tools := oa.New(at.SkillToolkit(t))
	chatTurns(t, tools, at.SkillTurn, "Give me a pirate answer: how is the weather?", at.SkillAnswer, 2)
}

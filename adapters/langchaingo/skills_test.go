package langchaingo_test

import (
	"testing"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	lc "github.com/llmkit/toolkit/adapters/langchaingo"
)

// The loop with LangChainGo's OpenAI model and a skill: the model reads
// the skills' names and descriptions in load_skill's description, loads
// the one that matches, and follows its instructions.
func TestSkill(t *testing.T) {
	tools := lc.New(at.SkillToolkit(t))
	converseTurns(t, tools, at.SkillTurn, "Give me a pirate answer: how is the weather?", at.SkillAnswer, 2)
}

package genai_test

import (
	"testing"

	gg "github.com/llmkit/toolkit/adapters/genai"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// The generateContent loop with a skill: Gemini reads the skills' names
// and descriptions in load_skill's description, loads the one that
// matches, and follows its instructions.
func TestSkill(t *testing.T) {
	tools := gg.New(at.SkillToolkit(t))
	prov := gemini(t, func(r at.Request) (any, error) { return generateTurn(r, at.SkillTurn) })
	converse(t, tools, prov, "Give me a pirate answer: how is the weather?", at.SkillAnswer)
}

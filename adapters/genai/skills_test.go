package genai_test

import (
	"encoding/json"
	"testing"

	gg "github.com/llmkit/toolkit/adapters/genai"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// The generateContent loop with a skill: Gemini reads the skills' names
// and descriptions in load_skill's description, loads the one that
// matches, and follows its instructions.
func TestSkill(t *testing.T) {
	tools := gg.New(at.SkillToolkit(t))
	prov := gemini(t, func(r at.Request) (any, error) {
		offered := map[string]string{}
		for _, tl := range at.List(r.Body, "tools") {
			for _, d := range at.List(tl, "functionDeclarations") {
				offered[at.Str(d, "name")] = at.Str(d, "description")
			}
		}
		results := map[string]string{}
		contents := at.List(r.Body, "contents")
		if last := contents[len(contents)-1]; at.Str(last, "role") == "user" {
			for _, p := range at.List(last, "parts") {
				if fr, ok := at.Get(p, "functionResponse").(map[string]any); ok {
					results[at.Str(fr, "id")] = at.Str(fr, "response", "output")
				}
			}
		}
		next, answer, err := at.SkillTurn(offered, results)
		if err != nil {
			return nil, err
		}
		if next == nil {
			return candidate(map[string]any{"text": answer}), nil
		}
		var args map[string]any
		if err := json.Unmarshal([]byte(next.Args), &args); err != nil {
			return nil, err
		}
		return candidate(call(next.ID, next.Name, args)), nil
	})
	converse(t, tools, prov, "Give me a pirate answer: how is the weather?", at.SkillAnswer)
}

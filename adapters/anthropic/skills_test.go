package anthropic_test

import (
	"encoding/json"
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
	prov := at.NewProvider(t, func(r at.Request) (any, error) {
		offered := map[string]string{}
		for _, tl := range at.List(r.Body, "tools") {
			offered[at.Str(tl, "name")] = at.Str(tl, "description")
		}
		results := map[string]string{}
		msgs := at.List(r.Body, "messages")
		if last := msgs[len(msgs)-1]; at.Str(last, "role") == "user" {
			for _, b := range at.List(last, "content") {
				if at.Str(b, "type") == "tool_result" {
					results[at.Str(b, "tool_use_id")] = at.Str(b, "content", 0, "text")
				}
			}
		}
		call, answer, err := at.SkillTurn(offered, results)
		if err != nil {
			return nil, err
		}
		if call == nil {
			return message("msg_end", "end_turn", map[string]any{"type": "text", "text": answer}), nil
		}
		var input map[string]any
		if err := json.Unmarshal([]byte(call.Args), &input); err != nil {
			return nil, err
		}
		return message("msg_"+call.ID, "tool_use", toolUse(call.ID, call.Name, input)), nil
	})
	converse(t, tools, prov, anthropic.MessageNewParams{
		Model:     "claude-test",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Give me a pirate answer: how is the weather?"))},
	}, at.SkillAnswer)
}

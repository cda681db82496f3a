package eino_test

import (
	"context"
	"testing"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"

	ei "github.com/llmkit/toolkit/adapters/eino"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// A ReAct agent with a skill: the model reads the skills' names and
// descriptions in load_skill's description, loads the one that matches,
// and follows its instructions.
func TestAgentSkill(t *testing.T) {
	ctx := context.Background()
	tools := ei.New(at.SkillToolkit(t))
	fm := &fakeModel{turn: func(msgs []*schema.Message, infos []*schema.ToolInfo) (*schema.Message, error) {
		offered := map[string]string{}
		for _, in := range infos {
			offered[in.Name] = in.Desc
		}
		results := map[string]string{}
		for i := len(msgs) - 1; i >= 0 && msgs[i].Role == schema.Tool; i-- {
			results[msgs[i].ToolCallID] = msgs[i].Content
		}
		call, answer, err := at.SkillTurn(offered, results)
		if err != nil {
			return nil, err
		}
		if call == nil {
			return schema.AssistantMessage(answer, nil), nil
		}
		return schema.AssistantMessage("", []schema.ToolCall{toolCall(call.ID, call.Name, call.Args)}), nil
	}}
	list, err := tools.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: fm,
		ToolsConfig:      compose.ToolsNodeConfig{Tools: list},
		MaxStep:          6,
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := agent.Generate(ctx, []*schema.Message{schema.UserMessage("Give me a pirate answer: how is the weather?")})
	if err != nil {
		t.Fatal(err)
	}
	if out.Content != at.SkillAnswer {
		t.Fatalf("answer = %q", out.Content)
	}
}

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
	fm := &fakeModel{turn: modelTurn(t, at.SkillTurn)}
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

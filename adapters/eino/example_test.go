package eino_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"

	toolkit "github.com/llmkit/toolkit"
	ei "github.com/llmkit/toolkit/adapters/eino"
	"github.com/llmkit/toolkit/tool"
)

func Example() {
	ctx := context.Background()
	tk, err := toolkit.New(toolkit.WithTool(tool.Must("get_weather", "Current weather for a city.",
		func(_ context.Context, in struct {
			City string `json:"city"`
		}) (string, error) {
			return "Sunny in " + in.City, nil
		})))
	if err != nil {
		log.Fatal(err)
	}

	// A stand-in for a real chat model: it asks for get_weather, then
	// answers with the tool's result.
	chat := &fakeModel{turn: func(msgs []*schema.Message, _ []*schema.ToolInfo) (*schema.Message, error) {
		last := msgs[len(msgs)-1]
		if last.Role == schema.Tool {
			return schema.AssistantMessage("The tool says: "+last.Content, nil), nil
		}
		return schema.AssistantMessage("", []schema.ToolCall{toolCall("call_1", "get_weather", `{"city":"Oslo"}`)}), nil
	}}

	// The toolkit's current tools, when the agent is built.
	tools, err := ei.New(tk).Tools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: chat,
		ToolsConfig:      compose.ToolsNodeConfig{Tools: tools},
	})
	if err != nil {
		log.Fatal(err)
	}
	out, err := agent.Generate(ctx, []*schema.Message{schema.UserMessage("How is the weather in Oslo?")})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Content)
	// Output:
	// The tool says: Sunny in Oslo
}

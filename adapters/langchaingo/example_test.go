package langchaingo_test

import (
	"context"
	"fmt"
	"log"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	toolkit "github.com/llmkit/toolkit"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	lc "github.com/llmkit/toolkit/adapters/langchaingo"
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
	srv := at.WeatherChat() // a stand-in for the Chat Completions API
	defer srv.Close()
	llm, err := openai.New(openai.WithBaseURL(srv.URL), openai.WithToken("key"), openai.WithModel("gpt-4o"))
	if err != nil {
		log.Fatal(err)
	}

	tools := lc.New(tk)
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "How is the weather in Oslo?")}
	for {
		// The toolkit's current tools, for every request.
		fns, err := tools.LLMTools(ctx)
		if err != nil {
			log.Fatal(err)
		}
		resp, err := llm.GenerateContent(ctx, msgs, llms.WithTools(fns))
		if err != nil {
			log.Fatal(err)
		}
		choice := resp.Choices[0]
		next := tools.Run(ctx, choice)
		if next == nil {
			fmt.Println(choice.Content)
			return
		}
		for _, tc := range choice.ToolCalls {
			fmt.Printf("calling %s(%s)\n", tc.FunctionCall.Name, tc.FunctionCall.Arguments)
		}
		msgs = append(msgs, next...)
	}
	// Output:
	// calling get_weather({"city":"Oslo"})
	// The tool says: Sunny in Oslo
}

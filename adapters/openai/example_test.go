package openai_test

import (
	"context"
	"fmt"
	"log"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	toolkit "github.com/llmkit/toolkit"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	oa "github.com/llmkit/toolkit/adapters/openai"
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
	client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("key"))

	tools := oa.New(tk)
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT4o,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("How is the weather in Oslo?")},
	}
	for {
		// The toolkit's current tools, for every request.
		if params.Tools, err = tools.ChatTools(ctx); err != nil {
			log.Fatal(err)
		}
		comp, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			log.Fatal(err)
		}
		msg := comp.Choices[0].Message
		results := tools.RunChat(ctx, msg)
		if results == nil {
			fmt.Println(msg.Content)
			return
		}
		for _, tc := range msg.ToolCalls {
			fmt.Printf("calling %s(%s)\n", tc.Function.Name, tc.Function.Arguments)
		}
		params.Messages = append(params.Messages, msg.ToParam())
		params.Messages = append(params.Messages, results...)
	}
	// Output:
	// calling get_weather({"city":"Oslo"})
	// The tool says: Sunny in Oslo
}

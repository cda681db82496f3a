package openai_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/adapters/adapter"
	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
	oa "github.com/llmkit/toolkit/adapters/openai"
	"github.com/llmkit/toolkit/model"
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

// ExampleTools_Disclosed offers a conversation's model a search tool
// instead of the whole catalogue: the tools it finds join the next
// requests.
func ExampleTools_Disclosed() {
	ctx := context.Background()
	weather := func(_ context.Context, in struct {
		City string `json:"city"`
	}) (string, error) {
		return "Sunny in " + in.City, nil
	}
	tk, err := toolkit.New(toolkit.WithTool(
		tool.Must("get_time", "The current time.", func(context.Context, struct{}) (string, error) { return "noon", nil }),
		tool.Must("get_weather", "Current weather for a city.", weather),
		tool.Must("get_forecast", "Weather forecast for a city, for the days ahead.", weather),
		// ... and a thousand more
	))
	if err != nil {
		log.Fatal(err)
	}
	srv := at.SearchingChat() // a stand-in for the Chat Completions API
	defer srv.Close()
	client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("key"))

	tools := oa.New(tk, adapter.WithDisclosure(model.WithAlways(model.Filter{Names: []string{"get_time"}})))
	var found model.Loaded // one per conversation
	conv := tools.Disclosed(&found)
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT4o,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Current weather in a city")},
	}
	for {
		// The search tool, get_time, and the tools found so far.
		if params.Tools, err = conv.ChatTools(ctx); err != nil {
			log.Fatal(err)
		}
		var offered []string
		for _, t := range params.Tools {
			offered = append(offered, t.GetFunction().Name)
		}
		fmt.Println("offered:", strings.Join(offered, ", "))
		comp, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			log.Fatal(err)
		}
		msg := comp.Choices[0].Message
		results := conv.RunChat(ctx, msg)
		if results == nil {
			fmt.Println(msg.Content)
			return
		}
		params.Messages = append(params.Messages, msg.ToParam())
		params.Messages = append(params.Messages, results...)
	}
	// Output:
	// offered: search_tools, get_time
	// offered: search_tools, get_time, get_weather
	// offered: search_tools, get_time, get_weather
	// The tool says: Sunny in Oslo
}

package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/adapters/adapter"
	an "github.com/llmkit/toolkit/adapters/anthropic"
	"github.com/llmkit/toolkit/model"
	"github.com/llmkit/toolkit/tool"
)

// fakeClaude is a stand-in for the Messages API: it asks for get_weather,
// then answers with the tool's result.
func fakeClaude() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Content []struct {
					Type    string `json:"type"`
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"content"`
			} `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		last := req.Messages[len(req.Messages)-1].Content[0]
		content := []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": map[string]any{"city": "Oslo"}}}
		if last.Type == "tool_result" {
			content = []any{map[string]any{"type": "text", "text": "The tool says: " + last.Content[0].Text}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": content,
			"stop_reason": "end_turn", "usage": map[string]any{"input_tokens": 1, "output_tokens": 1},
		})
	}))
}

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
	srv := fakeClaude()
	defer srv.Close()
	client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("key"))

	tools := an.New(tk)
	params := anthropic.MessageNewParams{
		Model:     anthropic.ModelClaudeSonnet4_5,
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("How is the weather in Oslo?"))},
	}
	for {
		// The toolkit's current tools, for every request.
		if params.Tools, err = tools.ToolParams(ctx); err != nil {
			log.Fatal(err)
		}
		msg, err := client.Messages.New(ctx, params)
		if err != nil {
			log.Fatal(err)
		}
		reply, ok := tools.Run(ctx, msg)
		if !ok {
			fmt.Println(msg.Content[0].Text)
			return
		}
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				fmt.Printf("calling %s(%s)\n", b.Name, b.Input)
			}
		}
		params.Messages = append(params.Messages, msg.ToParam(), reply)
	}
	// Output:
	// calling get_weather({"city":"Oslo"})
	// The tool says: Sunny in Oslo
}

// ExampleTools_DeferredToolParams lets Claude search the toolkit's tools
// on the server: the request holds Anthropic's tool search tool, the
// tools always offered, and every other tool deferred.
func ExampleTools_DeferredToolParams() {
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
	))
	if err != nil {
		log.Fatal(err)
	}
	tools := an.New(tk, adapter.WithDisclosure(model.WithAlways(model.Filter{Names: []string{"get_time"}})))
	params, err := tools.DeferredToolParams(ctx) // for MessageNewParams.Tools
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range params {
		b, err := json.Marshal(p)
		if err != nil {
			log.Fatal(err)
		}
		var t struct {
			Type, Name   string
			DeferLoading bool `json:"defer_loading"`
		}
		if err := json.Unmarshal(b, &t); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s type=%q defer_loading=%v\n", t.Name, t.Type, t.DeferLoading)
	}
	// Output:
	// tool_search_tool_bm25 type="tool_search_tool_bm25_20251119" defer_loading=false
	// get_time type="" defer_loading=false
	// get_forecast type="" defer_loading=true
	// get_weather type="" defer_loading=true
}

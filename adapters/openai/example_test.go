package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	toolkit "github.com/llmkit/toolkit"
	oa "github.com/llmkit/toolkit/adapters/openai"
	"github.com/llmkit/toolkit/tool"
)

// fakeOpenAI is a stand-in for the Chat Completions API: it asks for
// get_weather, then answers with the tool's result.
func fakeOpenAI() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		last := req.Messages[len(req.Messages)-1]
		msg := map[string]any{"role": "assistant", "content": "The tool says: " + last.Content}
		if last.Role == "user" {
			msg = map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
				"id": "call_1", "type": "function",
				"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Oslo"}`},
			}}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": msg}},
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
	srv := fakeOpenAI()
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

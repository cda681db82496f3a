package langchaingo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	toolkit "github.com/llmkit/toolkit"
	lc "github.com/llmkit/toolkit/adapters/langchaingo"
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

package genai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"google.golang.org/genai"

	toolkit "github.com/llmkit/toolkit"
	gg "github.com/llmkit/toolkit/adapters/genai"
	"github.com/llmkit/toolkit/tool"
)

// fakeGemini is a stand-in for the Gemini API: it asks for get_weather,
// then answers with the function's response.
func fakeGemini() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Contents []struct {
				Parts []struct {
					FunctionResponse *struct {
						Response struct {
							Output string `json:"output"`
						} `json:"response"`
					} `json:"functionResponse"`
				} `json:"parts"`
			} `json:"contents"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		last := req.Contents[len(req.Contents)-1].Parts[0]
		part := map[string]any{"functionCall": map[string]any{"id": "fc_1", "name": "get_weather", "args": map[string]any{"city": "Oslo"}}}
		if last.FunctionResponse != nil {
			part = map[string]any{"text": "The tool says: " + last.FunctionResponse.Response.Output}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"candidates": []any{map[string]any{
			"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP",
		}}})
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
	srv := fakeGemini()
	defer srv.Close()
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey: "key", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL},
	})
	if err != nil {
		log.Fatal(err)
	}

	tools := gg.New(tk)
	contents := []*genai.Content{genai.NewContentFromText("How is the weather in Oslo?", genai.RoleUser)}
	for {
		// The toolkit's current tools, for every request.
		fns, err := tools.Tools(ctx)
		if err != nil {
			log.Fatal(err)
		}
		resp, err := client.Models.GenerateContent(ctx, "gemini-2.5-flash", contents, &genai.GenerateContentConfig{Tools: fns})
		if err != nil {
			log.Fatal(err)
		}
		reply, ok := tools.Run(ctx, resp)
		if !ok {
			fmt.Println(resp.Text())
			return
		}
		for _, fc := range resp.FunctionCalls() {
			fmt.Printf("calling %s(%v)\n", fc.Name, fc.Args)
		}
		contents = append(contents, resp.Candidates[0].Content, reply)
	}
	// Output:
	// calling get_weather(map[city:Oslo])
	// The tool says: Sunny in Oslo
}

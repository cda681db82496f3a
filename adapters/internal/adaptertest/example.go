package adaptertest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
)

// WeatherChat returns a stand-in for the Chat Completions API, for the
// examples: to a user message it answers with a call of get_weather for
// Oslo, to a tool message with "The tool says: " and the tool's result.
func WeatherChat() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, "no messages", http.StatusBadRequest)
			return
		}
		last := req.Messages[len(req.Messages)-1]
		msg := map[string]any{"role": "assistant", "content": "The tool says: " + last.Content}
		if last.Role == "user" {
			msg = map[string]any{"role": "assistant", "tool_calls": []any{FunctionCall("call_1", "get_weather", `{"city":"Oslo"}`)}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(ChatCompletion(msg, "stop"))
	}))
}

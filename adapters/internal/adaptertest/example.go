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

// SearchingChat returns a stand-in for the Chat Completions API, for the
// examples of progressive disclosure: to a user message it answers with a
// call of search_tools for the message's text; to the search's result
// with a call of the first tool found, for Oslo; to any other tool
// message with "The tool says: " and the tool's result.
func SearchingChat() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role       string `json:"role"`
				Content    string `json:"content"`
				ToolCallID string `json:"tool_call_id"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, "no messages", http.StatusBadRequest)
			return
		}
		last := req.Messages[len(req.Messages)-1]
		var found struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		var msg map[string]any
		switch {
		case last.Role == "user":
			args, _ := json.Marshal(map[string]any{"query": last.Content, "limit": 1})
			msg = map[string]any{"role": "assistant", "tool_calls": []any{FunctionCall("call_search", "search_tools", string(args))}}
		case last.ToolCallID == "call_search" && json.Unmarshal([]byte(last.Content), &found) == nil && len(found.Tools) > 0:
			msg = map[string]any{"role": "assistant", "tool_calls": []any{FunctionCall("call_1", found.Tools[0].Name, `{"city":"Oslo"}`)}}
		default:
			msg = map[string]any{"role": "assistant", "content": "The tool says: " + last.Content}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(ChatCompletion(msg, "stop"))
	}))
}

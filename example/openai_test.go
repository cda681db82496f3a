package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/resource"
)

// scriptedModel is an OpenAI-compatible endpoint for tests: it answers each
// request with the next reply of its script and records the requests.
type scriptedModel struct {
	t       *testing.T
	mu      sync.Mutex
	replies []string // JSON of choices[0].message
	reqs    []chatRequest
	auth    []string
}

func (s *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	if len(s.replies) == 0 {
		http.Error(w, `{"error":{"message":"script exhausted"}}`, http.StatusTooManyRequests)
		return
	}
	reply := s.replies[0]
	if len(s.replies) > 1 {
		s.replies = s.replies[1:]
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"choices":[{"index":0,"message":` + reply + `,"finish_reason":"stop"}]}`))
}

// modelToolkit returns a toolkit with the demo's builtins whose delegate
// runs prompts on the endpoint at url; opts are added to toolkit.New's.
func modelToolkit(t *testing.T, url string, opts ...toolkit.Option) *toolkit.Toolkit {
	t.Helper()
	prompts, err := builtinPrompts()
	if err != nil {
		t.Fatal(err)
	}
	o := openAIFromEnv(func(k string) string {
		return map[string]string{envBaseURL: url + "/v1/", envAPIKey: "sk-test", envModel: "test-model"}[k]
	})
	d := &delegate{logger: testLogger(t), model: o}
	opts = append([]toolkit.Option{toolkit.WithDelegate(d), toolkit.WithTool(builtinTools()...), toolkit.WithPrompt(prompts...)}, opts...)
	tk, err := toolkit.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	d.tk = tk
	return tk
}

// TestOpenAILogsRepairs: arguments the dispatcher had to mend are logged,
// with what was done to them.
func TestOpenAILogsRepairs(t *testing.T) {
	m := &scriptedModel{t: t, replies: []string{
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"word_count","arguments":"{'text': 'a b c',}"}},{"id":"call_2","type":"function","function":{"name":"word_count","arguments":"{\"text\":\"ok\"}"}}]}`,
		`{"role":"assistant","content":"Three words."}`,
	}}
	srv := httptest.NewServer(m)
	defer srv.Close()
	var logs syncBuffer
	tk := modelToolkit(t, srv.URL, toolkit.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	if _, err := tk.Call(context.Background(), "summarize", resource.Must("input", json.RawMessage(`{"text":"a b c"}`))); err != nil {
		t.Fatal(err)
	}
	var repaired []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == "repaired the arguments of a tool call" {
			repaired = append(repaired, rec)
		}
	}
	if len(repaired) != 1 {
		t.Fatalf("repair records: %v\nlog:\n%s", repaired, logs.String())
	}
	rec := repaired[0]
	repairs, _ := rec["repairs"].([]any)
	if rec["level"] != "INFO" || rec["prompt"] != "summarize" || rec["tool"] != "word_count" || rec["call_id"] != "call_1" ||
		!slices.Contains(repairs, any("converted single-quoted string")) || !slices.Contains(repairs, any("removed trailing comma")) {
		t.Errorf("repair record = %v", rec)
	}
	// The mended call ran.
	if got := *m.reqs[1].Messages[3].Content; got != `{"words":3,"lines":1,"runes":5}` {
		t.Errorf("repaired call result = %q", got)
	}
}

func TestOpenAIToolLoop(t *testing.T) {
	m := &scriptedModel{t: t, replies: []string{
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"word_count","arguments":"{\"text\":\"a b c\"}"}},{"id":"call_2","type":"function","function":{"name":"no_such_tool","arguments":"{}"}}]}`,
		`{"role":"assistant","content":"Three words."}`,
	}}
	srv := httptest.NewServer(m)
	defer srv.Close()
	tk := modelToolkit(t, srv.URL)

	res, err := tk.Call(context.Background(), "summarize", resource.Must("input", json.RawMessage(`{"text":"a b c"}`)))
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(context.Background(), res); got != "Three words." {
		t.Errorf("answer = %q", got)
	}

	if len(m.reqs) != 2 {
		t.Fatalf("%d requests", len(m.reqs))
	}
	first := m.reqs[0]
	if first.Model != "test-model" || m.auth[0] != "Bearer sk-test" {
		t.Errorf("model %q, auth %q", first.Model, m.auth[0])
	}
	if len(first.Messages) != 2 || first.Messages[0].Role != "system" || first.Messages[1].Role != "user" ||
		!strings.Contains(*first.Messages[1].Content, "a b c") {
		t.Errorf("opening messages = %+v", first.Messages)
	}
	var tools []struct {
		Type     string
		Function struct {
			Name       string
			Parameters map[string]any
		}
	}
	if err := json.Unmarshal(first.Tools, &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Type != "function" || tools[0].Function.Name != "word_count" || tools[0].Function.Parameters["type"] != "object" {
		t.Errorf("tools = %s", first.Tools)
	}

	// The second request carries the tool results, failures included.
	second := m.reqs[1].Messages
	if len(second) != 5 {
		t.Fatalf("second request has %d messages", len(second))
	}
	if second[2].Role != "assistant" || len(second[2].ToolCalls) != 2 {
		t.Errorf("assistant turn = %+v", second[2])
	}
	if second[3].Role != "tool" || second[3].ToolCallID != "call_1" || *second[3].Content != `{"words":3,"lines":1,"runes":5}` {
		t.Errorf("tool result = %+v %q", second[3], *second[3].Content)
	}
	if second[4].ToolCallID != "call_2" || !strings.Contains(*second[4].Content, "no_such_tool") {
		t.Errorf("unknown tool result = %q", *second[4].Content)
	}
}

func TestOpenAIErrors(t *testing.T) {
	ctx := context.Background()
	input := resource.Must("input", json.RawMessage(`{"text":"x"}`))

	// An endpoint that refuses.
	m := &scriptedModel{t: t}
	srv := httptest.NewServer(m)
	defer srv.Close()
	_, err := modelToolkit(t, srv.URL).Call(ctx, "summarize", input)
	if !errors.Is(err, toolkit.ErrUnavailable) || !strings.Contains(err.Error(), "429") || !strings.Contains(err.Error(), "script exhausted") {
		t.Errorf("refusal: err = %v", err)
	}

	// A model that never stops calling tools.
	loop := &scriptedModel{t: t, replies: []string{
		`{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"word_count","arguments":"{\"text\":\"x\"}"}}]}`,
	}}
	srv2 := httptest.NewServer(loop)
	defer srv2.Close()
	_, err = modelToolkit(t, srv2.URL).Call(ctx, "summarize", input)
	if !errors.Is(err, toolkit.ErrToolFailed) || len(loop.reqs) != maxModelTurns {
		t.Errorf("endless loop: err = %v after %d requests", err, len(loop.reqs))
	}

	// Input that does not fit the prompt never reaches the model.
	_, err = modelToolkit(t, srv2.URL).Call(ctx, "summarize", resource.Must("input", json.RawMessage(`{"points":2}`)))
	if !errors.Is(err, toolkit.ErrSchema) {
		t.Errorf("bad input: err = %v", err)
	}
}

func TestOpenAIFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if o := openAIFromEnv(env(nil)); o != nil {
		t.Errorf("no variables: %v", o)
	}
	o := openAIFromEnv(env(map[string]string{envAPIKey: "k"}))
	if o == nil || o.baseURL != defaultOpenAIBaseURL || o.apiKey != "k" || o.model != "" {
		t.Errorf("key only: %+v", o)
	}
	o = openAIFromEnv(env(map[string]string{envBaseURL: "http://localhost:11434/v1/", envModel: "llama3.2"}))
	if o == nil || o.baseURL != "http://localhost:11434/v1" || o.model != "llama3.2" || o.apiKey != "" {
		t.Errorf("local endpoint: %+v", o)
	}
}

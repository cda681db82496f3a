package adaptertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Stream is a response a fake provider sends as server-sent events
// (text/event-stream), one event at a time, each flushed at once.
type Stream struct {
	Events []Event
	// Done ends the stream with "data: [DONE]", as OpenAI's APIs do.
	Done bool
}

// Event is one server-sent event: "event: NAME" (left out when Name is
// empty) and "data: " Data encoded as JSON.
type Event struct {
	Name string
	Data any
}

func (s Stream) write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	f, _ := w.(http.Flusher)
	for _, ev := range s.Events {
		b, err := json.Marshal(ev.Data)
		if err != nil {
			panic(err)
		}
		if ev.Name != "" {
			fmt.Fprintf(w, "event: %s\n", ev.Name)
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
		if f != nil {
			f.Flush()
		}
	}
	if s.Done {
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

// Halves splits s in two (the second half empty for a one-byte string),
// so that streams deliver every text and argument in more than one delta.
func Halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	return []string{s[:len(s)/2], s[len(s)/2:]}
}

// ChatStream returns a Chat Completions response (see [ChatCompletion]) as
// the chunks the API streams: the role, the content in two deltas, each
// tool call's id, type and name, then its arguments in two deltas (under
// the call's index), and a last chunk with the finish reason and usage.
func ChatStream(completion map[string]any) Stream {
	choice := List(completion, "choices")[0]
	msg, _ := Get(choice, "message").(map[string]any)
	chunk := func(delta map[string]any, finish any) Event {
		return Event{Data: map[string]any{"id": completion["id"], "object": "chat.completion.chunk", "created": completion["created"],
			"model": completion["model"], "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}}
	}
	events := []Event{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	if text, ok := msg["content"].(string); ok {
		for _, part := range Halves(text) {
			events = append(events, chunk(map[string]any{"content": part}, nil))
		}
	}
	for i, tc := range List(msg, "tool_calls") {
		events = append(events, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": Get(tc, "id"), "type": "function",
			"function": map[string]any{"name": Get(tc, "function", "name"), "arguments": ""}}}}, nil))
		for _, part := range Halves(Str(tc, "function", "arguments")) {
			events = append(events, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": part}}}}, nil))
		}
	}
	last := chunk(map[string]any{}, Get(choice, "finish_reason"))
	last.Data.(map[string]any)["usage"] = completion["usage"]
	return Stream{Events: append(events, last), Done: true}
}

// MessageStream returns an Anthropic Messages response (an assistant
// message) as the events the API streams: message_start, then for each
// content block its content_block_start, its text or its input's JSON in
// two deltas, and content_block_stop, then message_delta with the stop
// reason and message_stop.
func MessageStream(message map[string]any) Stream {
	start := map[string]any{}
	for k, v := range message {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	events := []Event{{Name: "message_start", Data: map[string]any{"type": "message_start", "message": start}}}
	for i, b := range List(message, "content") {
		block, _ := b.(map[string]any)
		first := map[string]any{}
		for k, v := range block {
			first[k] = v
		}
		var deltas []map[string]any
		switch Str(block, "type") {
		case "text":
			first["text"] = ""
			for _, part := range Halves(Str(block, "text")) {
				deltas = append(deltas, map[string]any{"type": "text_delta", "text": part})
			}
		case "tool_use":
			first["input"] = map[string]any{}
			in, err := json.Marshal(block["input"])
			if err != nil {
				panic(err)
			}
			for _, part := range Halves(string(in)) {
				deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": part})
			}
		}
		events = append(events, Event{Name: "content_block_start", Data: map[string]any{"type": "content_block_start", "index": i, "content_block": first}})
		for _, d := range deltas {
			events = append(events, Event{Name: "content_block_delta", Data: map[string]any{"type": "content_block_delta", "index": i, "delta": d}})
		}
		events = append(events, Event{Name: "content_block_stop", Data: map[string]any{"type": "content_block_stop", "index": i}})
	}
	events = append(events,
		Event{Name: "message_delta", Data: map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": message["stop_reason"], "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 1}}},
		Event{Name: "message_stop", Data: map[string]any{"type": "message_stop"}})
	return Stream{Events: events}
}

// ResponseStream returns a Responses API response as the events the API
// streams: response.created (in progress, no output), for each output
// item its response.output_item.added, for a function call its arguments
// in two response.function_call_arguments.delta events, and its
// response.output_item.done, then response.completed with the whole
// response.
func ResponseStream(response map[string]any) Stream {
	seq := 0
	ev := func(typ string, data map[string]any) Event {
		data["type"], data["sequence_number"] = typ, seq
		seq++
		return Event{Name: typ, Data: data}
	}
	created := map[string]any{}
	for k, v := range response {
		created[k] = v
	}
	created["status"], created["output"] = "in_progress", []any{}
	events := []Event{ev("response.created", map[string]any{"response": created})}
	for i, it := range List(response, "output") {
		item, _ := it.(map[string]any)
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		if Str(item, "type") == "function_call" {
			added["arguments"], added["status"] = "", "in_progress"
		}
		events = append(events, ev("response.output_item.added", map[string]any{"output_index": i, "item": added}))
		if Str(item, "type") == "function_call" {
			for _, part := range Halves(Str(item, "arguments")) {
				events = append(events, ev("response.function_call_arguments.delta", map[string]any{"output_index": i, "item_id": item["id"], "delta": part}))
			}
		}
		events = append(events, ev("response.output_item.done", map[string]any{"output_index": i, "item": item}))
	}
	return Stream{Events: append(events, ev("response.completed", map[string]any{"response": response}))}
}

// GeminiStream returns Gemini GenerateContent responses as the chunks
// streamGenerateContent sends with alt=sse: one chunk per part of each
// response's first candidate, text parts in two chunks; the last chunk
// carries the finish reason and the usage.
func GeminiStream(responses ...map[string]any) Stream {
	var events []Event
	for _, resp := range responses {
		cand := List(resp, "candidates")[0]
		parts := List(cand, "content", "parts")
		var chunks []any
		for _, p := range parts {
			if text, ok := Get(p, "text").(string); ok && !strings.Contains(JSON(p), "thoughtSignature") {
				for _, h := range Halves(text) {
					chunks = append(chunks, map[string]any{"text": h})
				}
				continue
			}
			chunks = append(chunks, p)
		}
		for i, part := range chunks {
			c := map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "index": 0}
			chunk := map[string]any{"candidates": []any{c}, "modelVersion": resp["modelVersion"]}
			if i == len(chunks)-1 {
				c["finishReason"] = Get(cand, "finishReason")
				chunk["usageMetadata"] = resp["usageMetadata"]
			}
			events = append(events, Event{Data: chunk})
		}
	}
	return Stream{Events: events}
}

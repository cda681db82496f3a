package openai_test

import at "github.com/llmkit/toolkit/adapters/internal/adaptertest"

// responsesTurn plays a scripted model's turn over a Responses API
// request: the tools offered and the function_call_output items in, a
// response with the model's function_call or message out.
func responsesTurn(r at.Request, play at.Turn) (any, error) {
	var offered []at.Tool
	for _, tl := range at.List(r.Body, "tools") {
		offered = append(offered, at.Tool{Name: at.Str(tl, "name"), Description: at.Str(tl, "description")})
	}
	results := map[string]string{}
	for _, in := range at.List(r.Body, "input") {
		if at.Str(in, "type") == "function_call_output" {
			results[at.Str(in, "call_id")] = at.Str(in, "output")
		}
	}
	call, answer, err := play(offered, results)
	if err != nil {
		return nil, err
	}
	response := func(id string, output ...any) map[string]any {
		return map[string]any{"id": id, "object": "response", "created_at": 1, "status": "completed", "model": "gpt-test",
			"output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}}
	}
	if call == nil {
		return response("resp_end", map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": answer, "annotations": []any{}}}}), nil
	}
	return response("resp_"+call.ID, map[string]any{"type": "function_call", "id": "fc_" + call.ID, "call_id": call.ID,
		"name": call.Name, "arguments": call.Args, "status": "completed"}), nil
}

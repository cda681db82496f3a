package anthropic_test

import (
	"encoding/json"
	"fmt"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// messagesTurn plays a scripted model's turn over a Messages request: the
// tools offered and the tool_result blocks of the last user message in
// (each of its text only), a message with the model's tool_use or text
// out.
func messagesTurn(r at.Request, play at.Turn) (any, error) {
	var offered []at.Tool
	for _, tl := range at.List(r.Body, "tools") {
		offered = append(offered, at.Tool{Name: at.Str(tl, "name"), Description: at.Str(tl, "description")})
	}
	msgs := at.List(r.Body, "messages")
	results := map[string]string{}
	if last := msgs[len(msgs)-1]; at.Str(last, "role") == "user" {
		for _, b := range at.List(last, "content") {
			if at.Str(b, "type") == "tool_result" {
				results[at.Str(b, "tool_use_id")] = at.Str(b, "content", 0, "text")
				if len(at.List(b, "content")) != 1 {
					return nil, fmt.Errorf("a tool_result of more than its text: %s", at.JSON(b))
				}
			}
		}
	}
	call, answer, err := play(offered, results)
	if err != nil {
		return nil, err
	}
	if call == nil {
		return message("msg_end", "end_turn", map[string]any{"type": "text", "text": answer}), nil
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(call.Args), &input); err != nil {
		return nil, err
	}
	return message("msg_"+call.ID, "tool_use", toolUse(call.ID, call.Name, input)), nil
}

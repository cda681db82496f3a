package genai_test

import (
	"encoding/json"

	at "github.com/llmkit/toolkit/adapters/internal/adaptertest"
)

// generateTurn plays a scripted model's turn over a GenerateContent
// request: the function declarations offered and the function responses
// of the last content in (an output that is not a string as its JSON), a
// candidate with the model's function call or text out.
func generateTurn(r at.Request, play at.Turn) (any, error) {
	var offered []at.Tool
	for _, tl := range at.List(r.Body, "tools") {
		for _, d := range at.List(tl, "functionDeclarations") {
			offered = append(offered, at.Tool{Name: at.Str(d, "name"), Description: at.Str(d, "description")})
		}
	}
	results := map[string]string{}
	if len(at.List(r.Body, "contents")) > 1 {
		res, err := responsesOf(r.Body)
		if err != nil {
			return nil, err
		}
		for id, fr := range res {
			out := at.Get(fr, "response", "output")
			if s, ok := out.(string); ok {
				results[id] = s
			} else {
				results[id] = at.JSON(out)
			}
		}
	}
	c, answer, err := play(offered, results)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return candidate(map[string]any{"text": answer}), nil
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(c.Args), &args); err != nil {
		return nil, err
	}
	return candidate(call(c.ID, c.Name, args)), nil
}

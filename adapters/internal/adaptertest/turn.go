package adaptertest

import "fmt"

// Tool is a tool a request offers the model.
type Tool struct {
	Name, Description string
}

// Turn is one turn of a scripted model: DisclosureTurn, CodeModeTurn or
// SkillTurn. offered are the tools of the request, in order; results are
// the tool results the request ends with (call id → the result's text,
// empty on a user's turn). It returns the call the model makes, or its
// answer, or an error saying what the request got wrong. A test's fake
// provider turns a request into offered and results, and the call or
// answer into its response, once for every Turn.
type Turn func(offered []Tool, results map[string]string) (call *Call, answer string, err error)

// names are the names of tools, in order.
func names(tools []Tool) []string {
	var n []string
	for _, t := range tools {
		n = append(n, t.Name)
	}
	return n
}

// ChatTurn plays a scripted model's turn over a Chat Completions request
// at path: the tools offered and the tool results the messages end with
// in, a completion with the model's call or answer out.
func ChatTurn(r Request, path string, play Turn) (any, error) {
	if r.Path != path {
		return nil, fmt.Errorf("unexpected path %s", r.Path)
	}
	var offered []Tool
	for _, tl := range List(r.Body, "tools") {
		offered = append(offered, Tool{Name: Str(tl, "function", "name"), Description: Str(tl, "function", "description")})
	}
	results := map[string]string{}
	msgs := List(r.Body, "messages")
	for i := len(msgs) - 1; i >= 0 && Str(msgs[i], "role") == "tool"; i-- {
		results[Str(msgs[i], "tool_call_id")] = Str(msgs[i], "content")
	}
	call, answer, err := play(offered, results)
	if err != nil {
		return nil, err
	}
	if call == nil {
		return ChatCompletion(map[string]any{"role": "assistant", "content": answer}, "stop"), nil
	}
	return ChatCompletion(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
		FunctionCall(call.ID, call.Name, call.Args),
	}}, "tool_calls"), nil
}

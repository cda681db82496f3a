package mcp

import (
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The go-sdk decodes a tools/list answer whole: one tool with a wrongly
// typed field ("name": 5) fails the page, and the connector, which cannot
// list the server's tools, would reconnect again and again. So when the
// SDK fails to decode a page whose answer the connection saw (taskSlot
// keeps it), the connector decodes the page itself, tool by tool: a tool
// that does not decode is skipped like one with an invalid name (the
// page's warning names it and why), and the server's other tools are
// kept. A page that is not even a list of tools fails as before.

// rawResult returns the result of the tools/list answer the slot saw, nil
// when it saw none.
func (s *taskSlot) rawResult() []byte {
	s.mu.Lock()
	result, msg := s.result, s.msg
	s.mu.Unlock()
	if result != nil || msg == nil {
		return result
	}
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(msg, &r) != nil {
		return nil
	}
	return r.Result
}

// maxUndecodedReason bounds the decoding error a skipped tool's warning
// quotes.
const maxUndecodedReason = 200

// decodeToolsPage decodes a tools/list result tool by tool: the tools that
// decode, with their task support, and, for each that does not, an entry
// that says why. It fails when result is not an object with a list of
// tools.
func decodeToolsPage(result []byte) ([]*listedTool, string, error) {
	var page struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor string            `json:"nextCursor"`
	}
	if result == nil {
		return nil, "", fmt.Errorf("no answer")
	}
	if err := json.Unmarshal(result, &page); err != nil {
		return nil, "", err
	}
	out := make([]*listedTool, 0, len(page.Tools))
	for i, raw := range page.Tools {
		t := new(sdk.Tool)
		if err := json.Unmarshal(raw, t); err != nil {
			out = append(out, &listedTool{undecoded: fmt.Sprintf("tool %d of the page does not decode: %.*s", i, maxUndecodedReason, err.Error())})
			continue
		}
		var ex struct {
			Execution *struct {
				TaskSupport TaskSupport `json:"taskSupport"`
			} `json:"execution"`
		}
		task := TaskForbidden
		if json.Unmarshal(raw, &ex) == nil && ex.Execution != nil {
			switch ts := ex.Execution.TaskSupport; ts {
			case TaskOptional, TaskRequired:
				task = ts
			}
		}
		out = append(out, &listedTool{def: t, task: task})
	}
	return out, page.NextCursor, nil
}

package mcp

import (
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The connector decodes the tools of a tools/list page itself, one at a
// time (tools_page.go): a tool with a wrongly typed field ("name": 5),
// which would fail the whole page in the go-sdk, is skipped like one with
// an invalid name (the page's warning names it and why), and the server's
// other tools are kept. A page that is not even a list of tools fails.

// maxUndecodedReason bounds the decoding error a skipped tool's warning
// quotes.
const maxUndecodedReason = 200

// decode decodes the tool's JSON (raw) into its definition and task
// support, or, when it does not decode, records why; raw is let go.
func (t *listedTool) decode() {
	raw := t.raw
	t.raw = nil
	if len(raw) > maxToolBytes {
		t.undecoded = fmt.Sprintf("tool %d of the page is larger than %d bytes", t.index, maxToolBytes)
		return
	}
	def := new(sdk.Tool)
	if err := json.Unmarshal(raw, def); err != nil {
		t.undecoded = fmt.Sprintf("tool %d of the page does not decode: %.*s", t.index, maxUndecodedReason, err.Error())
		return
	}
	var ex struct {
		Execution *struct {
			TaskSupport TaskSupport `json:"taskSupport"`
		} `json:"execution"`
	}
	t.def, t.task = def, TaskForbidden
	if json.Unmarshal(raw, &ex) == nil && ex.Execution != nil {
		switch ts := ex.Execution.TaskSupport; ts {
		case TaskOptional, TaskRequired:
			t.task = ts
		}
	}
}

// decodeToolsPage decodes a tools/list result tool by tool: the tools that
// decode, with their task support, and, for each that does not, an entry
// that says why. It fails when result is not an object with a list of
// tools.
func decodeToolsPage(result []byte) ([]*listedTool, string, error) {
	tools, next, err := splitToolsPage(result)
	if err != nil {
		return nil, "", err
	}
	for _, t := range tools {
		t.decode()
	}
	return tools, next, nil
}

package adapt

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/tool"
)

// outTool returns a fixed resource.
type outTool struct {
	tool.Base
	res toolkit.Resource
}

func (t *outTool) Name() string        { return "out" }
func (t *outTool) Description() string { return "returns a fixed output" }
func (t *outTool) InputSchema() (*jsonschema.Schema, error) {
	return &jsonschema.Schema{Type: "object"}, nil
}
func (t *outTool) Meta() tool.Meta                                   { return tool.Meta{} }
func (t *outTool) Run(context.Context, json.RawMessage) (any, error) { return t.res, nil }

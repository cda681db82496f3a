package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit/internal/errs"
)

// OutputToolName is the name of the structured-output tool. No other
// builtin may take it.
const OutputToolName = "submit_output"

// OutputToolInstruction is an addition to a system prompt for models that
// return structured output through the output tool rather than through a
// native response schema.
const OutputToolInstruction = "When your work is finished, deliver the final answer by calling the " +
	OutputToolName + " tool exactly once, with the answer itself as the tool's arguments " +
	"shaped by its input schema. Do not write the final answer as plain text, " +
	"and do not call " + OutputToolName + " before the answer is complete."

// OutputTool is a tool through which a model submits its final, structured
// answer. Its input schema is the schema of the answer, and Run returns the
// validated answer as a json.RawMessage.
//
// It is the only tool that may take the reserved name OutputToolName.
type OutputTool struct {
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
}

var _ Tool = (*OutputTool)(nil)

// NewOutputTool returns the output tool for answers described by s, which
// must be an object schema. s is copied and resolved here; a schema that
// does not resolve is an error.
func NewOutputTool(s *jsonschema.Schema) (*OutputTool, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: tool %q: nil schema", errs.ErrBadParameter, OutputToolName)
	}
	if !isObject(s) {
		return nil, fmt.Errorf("%w: tool %q: schema must describe an object (\"type\": \"object\")", errs.ErrBadParameter, OutputToolName)
	}
	s = s.CloneSchemas()
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("%w: tool %q: schema: %v", errs.ErrBadParameter, OutputToolName, err)
	}
	return &OutputTool{schema: s, resolved: rs}, nil
}

// Name returns OutputToolName.
func (*OutputTool) Name() string { return OutputToolName }

// Description tells the model what the tool is for.
func (*OutputTool) Description() string {
	return "Submit the final answer. Call once, when the answer is complete, passing the answer as the arguments."
}

// InputSchema returns the schema of the answer. It is shared: do not modify
// it.
func (t *OutputTool) InputSchema() (*jsonschema.Schema, error) { return t.schema, nil }

// OutputSchema returns the schema of the answer too: Run returns its input.
func (t *OutputTool) OutputSchema() (*jsonschema.Schema, error) { return t.schema, nil }

// Meta marks the tool read-only and idempotent: submitting an answer
// changes nothing.
func (*OutputTool) Meta() Meta {
	return Meta{Title: "Submit output", ReadOnlyHint: true, IdempotentHint: true}
}

// Run validates input against the schema and returns a compact copy of it
// as a json.RawMessage. An empty input counts as {}.
func (t *OutputTool) Run(ctx context.Context, input json.RawMessage) (any, error) {
	input = bytes.TrimSpace(input)
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(input, &v); err != nil {
		return nil, fmt.Errorf("%w: tool %q: input: %v", errs.ErrBadParameter, OutputToolName, err)
	}
	if err := t.resolved.Validate(v); err != nil {
		return nil, fmt.Errorf("%w: tool %q: %v", errs.ErrSchema, OutputToolName, err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, input); err != nil {
		return nil, fmt.Errorf("%w: tool %q: input: %v", errs.ErrBadParameter, OutputToolName, err)
	}
	return json.RawMessage(buf.Bytes()), nil
}

// isObject reports whether s says its instances are objects.
func isObject(s *jsonschema.Schema) bool {
	return s.Type == "object" || len(s.Types) == 1 && s.Types[0] == "object"
}

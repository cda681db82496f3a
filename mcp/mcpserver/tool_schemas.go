package mcpserver

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/schemaguard"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// toolSchemas returns the input and output schemas to register for tool t
// under the exposed name: its decoded schemas, or the JSON text of a
// bridge.SchemaTexter (a connector's tool), registered as it is so that a
// gateway holds no decoded copy of each upstream schema. Either way the
// schemas are checked as untrusted input (schemaguard: one the guard
// refuses is never encoded, jsonschema-go's encoding costing the square
// of a schema's depth, nor offered to clients), and the input schema must
// be of type "object". out is nil when the tool has no output schema.
func toolSchemas(name string, t toolkit.Tool) (in, out any, err error) {
	if tx, ok := t.(bridge.SchemaTexter); ok {
		if inText, outText := tx.SchemaJSON(); inText != "" {
			return textSchemas(name, inText, outText)
		}
	}
	s, err := t.InputSchema()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: tool %q: input schema: %v", toolkit.ErrSchema, name, err)
	}
	if s == nil {
		s = &jsonschema.Schema{Type: "object"}
	}
	if s.Type != "object" {
		return nil, nil, fmt.Errorf("%w: tool %q: input schema is not an object schema (type %q)", toolkit.ErrSchema, name, s.Type)
	}
	if _, err := schemaguard.Check(s); err != nil {
		return nil, nil, fmt.Errorf("%w: tool %q: input schema: %w", toolkit.ErrSchema, name, err)
	}
	o, err := t.OutputSchema()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: tool %q: output schema: %v", toolkit.ErrSchema, name, err)
	}
	if _, err := schemaguard.Check(o); err != nil {
		return nil, nil, fmt.Errorf("%w: tool %q: output schema: %w", toolkit.ErrSchema, name, err)
	}
	if o != nil {
		out = o
	}
	return s, out, nil
}

// schemaText is a schema's JSON text, registered with the SDK server as it
// is: a string, so that it shares the memory of the text its tool holds.
type schemaText string

// MarshalJSON returns the text.
func (s schemaText) MarshalJSON() ([]byte, error) { return []byte(s), nil }

// textSchemas checks schemas given as JSON text (schemaguard.CheckJSON,
// whose decoded schema is dropped) and returns them as schemaText.
func textSchemas(name, inText, outText string) (in, out any, err error) {
	if err := checkedInputs.CheckString(inText, func() error { return checkInputText(inText) }); err != nil {
		return nil, nil, fmt.Errorf("%w: tool %q: %w", toolkit.ErrSchema, name, err)
	}
	if outText != "" {
		check := func() error { _, _, err := schemaguard.CheckJSON([]byte(outText)); return err }
		if err := checkedOutputs.CheckString(outText, check); err != nil {
			return nil, nil, fmt.Errorf("%w: tool %q: output schema: %w", toolkit.ErrSchema, name, err)
		}
		out = schemaText(outText)
	}
	return schemaText(inText), out, nil
}

// checkedInputs and checkedOutputs remember the verdicts on the schema
// texts registered: tools that share a schema have it checked once.
var checkedInputs, checkedOutputs schemaguard.Memo

// checkInputText checks an input schema's text: the guard's checks, and
// type "object".
func checkInputText(text string) error {
	s, _, err := schemaguard.CheckJSON([]byte(text))
	if err != nil {
		return fmt.Errorf("input schema: %w", err)
	}
	if s.Type != "object" {
		return fmt.Errorf("input schema is not an object schema (type %q)", s.Type)
	}
	return nil
}

// inputSchemaDecoded returns a registered tool's input schema decoded:
// itself when it is a *jsonschema.Schema, decoded afresh when it is JSON
// text (textSchemas); nil otherwise.
func inputSchemaDecoded(st *sdk.Tool) *jsonschema.Schema {
	switch in := st.InputSchema.(type) {
	case *jsonschema.Schema:
		return in
	case schemaText:
		s := new(jsonschema.Schema)
		if json.Unmarshal([]byte(in), s) != nil {
			return nil
		}
		return s
	}
	return nil
}

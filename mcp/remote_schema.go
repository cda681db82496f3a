package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unique"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit/internal/schemaguard"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/mcp/internal/wire"
)

// A connector keeps its tools' schemas as the compact JSON its server
// sent, not decoded: a decoded jsonschema.Schema costs hundreds of bytes
// for each subschema, two bytes ("{}") on the wire, so a hostile listing
// would cost a hundred times what it sent. The text is interned
// (package unique): tools with the same schema, of one server or of
// many, share one copy. A schema is decoded when someone asks for it
// (InputSchema, OutputSchema); the toolkit resolves a tool's schemas on
// its first call and keeps them with the tool, and a server face
// registers the text as it is (bridge.SchemaTexter).

// schemaText is a schema's compact JSON, shared by every holder of the
// same text. The zero value is no schema.
type schemaText struct{ h unique.Handle[string] }

// emptyObjectSchema is the input schema of a tool whose server gave none.
const emptyObjectSchema = `{"type":"object"}`

// makeSchemaText interns b.
func makeSchemaText(b []byte) schemaText { return schemaText{unique.Make(string(b))} }

// String returns the text, "" for no schema.
func (s schemaText) String() string {
	if s == (schemaText{}) {
		return ""
	}
	return s.h.Value()
}

// decode returns the schema decoded afresh (the caller may keep or change
// it), nil for no schema. The text was checked when the tool was listed.
func (s schemaText) decode() (*jsonschema.Schema, error) {
	if s == (schemaText{}) {
		return nil, nil
	}
	out := new(jsonschema.Schema)
	if err := json.Unmarshal([]byte(s.h.Value()), out); err != nil {
		return nil, schemaguard.Errorf("%v", err)
	}
	return out, nil
}

// objectSchema checks a schema as decoded by the SDK (a map, or raw JSON)
// as untrusted input (schemaguard.CheckJSON): it must describe an object
// and resolve. It returns the schema's compact JSON, interned. A missing
// input schema (allowNil) stands for an object with any properties; a
// missing output schema is no schema. Errors wrap toolkit.ErrBadParameter
// (schemaguard.Error).
func objectSchema(v any, allowNil bool) (schemaText, error) {
	if v == nil {
		if allowNil {
			return makeSchemaText([]byte(emptyObjectSchema)), nil
		}
		return schemaText{}, nil
	}
	b, err := compactJSON(v)
	if err != nil {
		return schemaText{}, schemaguard.Errorf("%v", err)
	}
	if bytes.Contains(b, wire.TooDeepJSON) {
		return schemaText{}, schemaguard.Errorf("the schema nests more than %d levels deep", wire.MaxDepth)
	}
	if len(b) == 0 || b[0] != '{' {
		return schemaText{}, schemaguard.Errorf("want a schema of type \"object\", got %.20s", b)
	}
	if err := checkedSchemas.Check(b, func() error { return checkObjectSchema(b) }); err != nil {
		return schemaText{}, err
	}
	return makeSchemaText(b), nil
}

// checkedSchemas remembers the verdicts of checkObjectSchema: tools that
// share a schema, in one server or many, have it checked once.
var checkedSchemas schemaguard.Memo

// checkObjectSchema checks a schema's JSON as untrusted input
// (schemaguard.CheckJSON); the schema must describe an object and
// resolve.
func checkObjectSchema(b []byte) error {
	s, _, err := schemaguard.CheckJSON(b)
	if err != nil {
		return err
	}
	if s.Type != "object" {
		t := s.Type
		if t == "" && len(s.Types) > 0 {
			t = fmt.Sprint(s.Types)
		}
		return schemaguard.Errorf("want a schema of type \"object\", got type %q", t)
	}
	if _, err := s.Resolve(nil); err != nil {
		return schemaguard.Errorf("invalid schema: %v", err)
	}
	return nil
}

// compactJSON returns v's JSON without insignificant space: raw JSON is
// compacted, anything else encoded (encoding/json writes compact JSON).
func compactJSON(v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	return json.Marshal(v)
}

var _ bridge.SchemaTexter = (*remoteTool)(nil)

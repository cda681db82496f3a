package toolkit

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// flatSchemas are flat input schemas (see flatSchema), as JSON.
var flatSchemas = []string{
	`{"type":"object"}`,
	`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
	`{"type":"object","title":"t","description":"d","properties":{"a":{"type":"number","description":"x"},"b":{"type":"integer"},"c":{"type":"boolean","default":true}},"required":["a","b"]}`,
	`{"type":"object","properties":{"a":{"type":"integer"},"s":{"type":"string"}},"additionalProperties":false}`,
	`{"type":["object"],"properties":{"a":{"type":"string","examples":["x"]}},"required":["a","z"]}`,
}

// notFlatSchemas have a keyword that a flatSchema does not check.
var notFlatSchemas = []string{
	`{"type":"object","properties":{"a":{"type":"string","minLength":2}}}`,
	`{"type":"object","properties":{"a":{"type":"string","enum":["x"]}}}`,
	`{"type":"object","properties":{"a":{}}}`,
	`{"type":"object","properties":{"a":{"type":["string","null"]}}}`,
	`{"type":"object","properties":{"a":{"type":"array"}}}`,
	`{"type":"object","properties":{"a":{"type":"object"}}}`,
	`{"type":"object","minProperties":1}`,
	`{"type":"object","additionalProperties":{"type":"string"}}`,
	`{"type":"object","additionalProperties":true}`,
	`{"type":"object","patternProperties":{"^a":{"type":"string"}}}`,
	`{"type":"object","$schema":"https://json-schema.org/draft/2020-12/schema"}`,
	`{"type":"object","properties":{"a":{"type":"string","format":"email"}}}`,
	`{"type":"object","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}}`,
	`{"type":"object","allOf":[{"required":["a"]}]}`,
	`{"type":"object","properties":{"a":{"type":"string","not":{}}}}`,
}

// flatInputs are inputs to check against flatSchemas.
var flatInputs = []string{
	`{}`, `{"text":"x"}`, `{"text":1}`, `{"text":null}`, `{"text":"x","more":1}`,
	`{"a":1,"b":2}`, `{"a":1.5,"b":2}`, `{"a":1,"b":2.5}`, `{"a":1,"b":2.0}`, `{"a":1e3,"b":-0}`,
	`{"a":"1","b":2}`, `{"a":1,"b":2,"c":false}`, `{"a":1,"b":2,"c":"true"}`, `{"a":true}`,
	`{"a":3,"s":"x"}`, `{"a":3,"s":"x","t":1}`, `{"a":[1]}`, `{"a":{}}`, `{"z":1,"a":"x"}`,
	`[]`, `"x"`, `1`, `null`, `true`,
}

func mustSchema(t testing.TB, text string) *jsonschema.Schema {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return &s
}

// TestFlatSchemaAgrees checks that a flat schema accepts an input exactly
// when the validator does.
func TestFlatSchemaAgrees(t *testing.T) {
	for _, st := range flatSchemas {
		s := mustSchema(t, st)
		f := newFlatSchema(s)
		if f == nil {
			t.Fatalf("%s: not flat", st)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range flatInputs {
			v, err := decodeJSON([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			verr := rs.Validate(v)
			if got := f.valid(v); got != (verr == nil) {
				t.Errorf("schema %s, input %s: flat says %v, validator %v", st, in, got, verr)
			}
		}
	}
}

func TestFlatSchemaOnlyFlat(t *testing.T) {
	for _, st := range notFlatSchemas {
		if newFlatSchema(mustSchema(t, st)) != nil {
			t.Errorf("%s: taken as flat", st)
		}
	}
}

// FuzzFlatSchema checks that a flat schema accepts an input exactly when
// the validator does, for any input.
func FuzzFlatSchema(f *testing.F) {
	for i := range flatSchemas {
		for _, in := range flatInputs {
			f.Add(uint8(i), in)
		}
	}
	schemas := make([]*flatSchema, len(flatSchemas))
	resolved := make([]*jsonschema.Resolved, len(flatSchemas))
	for i, st := range flatSchemas {
		s := mustSchema(f, st)
		schemas[i] = newFlatSchema(s)
		rs, err := s.Resolve(nil)
		if err != nil {
			f.Fatal(err)
		}
		resolved[i] = rs
	}
	f.Fuzz(func(t *testing.T, i uint8, in string) {
		k := int(i) % len(flatSchemas)
		v, err := decodeJSON([]byte(in))
		if err != nil {
			return
		}
		verr := resolved[k].Validate(v)
		if got := schemas[k].valid(v); got != (verr == nil) {
			t.Errorf("schema %s, input %s: flat says %v, validator %v", flatSchemas[k], in, got, verr)
		}
	})
}

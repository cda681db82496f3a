package schemaguard

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/llmkit/toolkit/internal/errs"
)

// Hostile schemas and values: whatever the guard accepts, jsonschema-go
// resolves and validates without a panic, a stack overflow or a hang.
func FuzzCheckJSON(f *testing.F) {
	values := []string{`{}`, `{"a":{"a":{"a":{}}}}`, deepValue("a", 40), deepValue("next", 300), `[[[[1]]]]`, `{"x":[1,"a",{"y":null}]}`}
	for _, tc := range refused {
		if len(tc.schema) > 256<<10 {
			continue // the fuzzer mutates large inputs slowly; TestRefused has them
		}
		f.Add([]byte(tc.schema), []byte(values[len(tc.name)%len(values)]))
	}
	for _, s := range []string{
		`{"type":"object","properties":{"next":{"$ref":"#"}}}`,
		`{"type":"object","allOf":[{"properties":{"a":{"$ref":"#"}}},{"properties":{"a":{"$ref":"#"}}}]}`,
		`{"$ref":"#/$defs/v","$defs":{"v":{"anyOf":[{"type":"string"},{"type":"array","items":{"$ref":"#/$defs/v"}},{"type":"object","additionalProperties":{"$ref":"#/$defs/v"}}]}}}`,
		`{"$dynamicAnchor":"n","properties":{"a":{"$dynamicRef":"#n"}}}`,
		`{"properties":{"x":{"$ref":"#/$defs/d20"}},"$defs":{"d0":{"type":"string"},` + laughDefs(20) + `}}`,
		`{"enum":[` + strings.Repeat(`"v",`, 5000) + `"w"]}`,
		`{"patternProperties":{"^a":{"$ref":"#"},"a$":{"$ref":"#"}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"$ref":"#"}],"additionalItems":{"$ref":"#"}}`,
	} {
		for _, v := range values {
			f.Add([]byte(s), []byte(v))
		}
	}
	f.Fuzz(func(t *testing.T, schema, value []byte) {
		start := time.Now()
		s, p, err := CheckJSON(schema)
		if err != nil {
			if !errors.Is(err, errs.ErrBadParameter) {
				t.Fatalf("error %v does not wrap ErrBadParameter", err)
			}
			return
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("Check took %v", d)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			return
		}
		var v any
		if json.Unmarshal(value, &v) != nil {
			return
		}
		if err := p.Check(v); err != nil {
			if !errors.Is(err, errs.ErrBadParameter) {
				t.Fatalf("plan error %v does not wrap ErrBadParameter", err)
			}
			return
		}
		_ = rs.Validate(v)
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("validation took %v", d)
		}
	})
}

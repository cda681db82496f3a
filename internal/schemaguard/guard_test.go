package schemaguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit/internal/errs"
)

// nested returns a schema whose subschemas nest n levels under kw ("not",
// "items", "properties").
func nested(kw string, n int) string {
	s := `{"type":"string"}`
	for range n {
		switch kw {
		case "properties":
			s = `{"type":"object","properties":{"a":` + s + `}}`
		default:
			s = `{"` + kw + `":` + s + `}`
		}
	}
	return s
}

// laughs returns a schema whose definitions each check a value twice
// against the one before, n times over: 2^n checks of one value.
func laughs(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"x":{"$ref":"#/$defs/d` + fmt.Sprint(n) + `"}},"$defs":{"d0":{"type":"string"}`)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `,"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i-1, i-1)
	}
	b.WriteString(`}}`)
	return b.String()
}

// Hostile schemas: each is refused, and the error says why.
var refused = []struct {
	name, schema, want string
}{
	{"self ref", `{"$ref":"#"}`, "$ref cycle"},
	{"self ref object", `{"type":"object","$ref":"#"}`, "$ref cycle"},
	{"mutual defs", `{"type":"object","$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}}}`, "$ref cycle"},
	{"mutual definitions", `{"type":"object","properties":{"x":{"$ref":"#/definitions/a"}},"definitions":{"a":{"anyOf":[{"$ref":"#/definitions/b"}]},"b":{"oneOf":[{"$ref":"#/definitions/a"}]}}}`, "$ref cycle"},
	{"not into itself", `{"type":"object","properties":{"x":{"$ref":"#/$defs/a"}},"$defs":{"a":{"not":{"$ref":"#/$defs/a"}}}}`, "$ref cycle"},
	{"if into itself", `{"if":{"$ref":"#"}}`, "$ref cycle"},
	{"ref into a subschema of itself", `{"type":"object","allOf":[{"$ref":"#/allOf/0"}]}`, "$ref cycle"},
	{"anchor", `{"$anchor":"top","allOf":[{"$ref":"#top"}]}`, "$ref cycle"},
	{"id", `{"$id":"http://example.com/root","$ref":"sub","$defs":{"s":{"$id":"sub","$ref":"root"}}}`, "$ref cycle"},
	{"unreached cycle", `{"type":"object","$defs":{"a":{"$ref":"#/$defs/a"}}}`, "$ref cycle"},
	{"dynamic ref", `{"$dynamicAnchor":"n","anyOf":[{"$dynamicRef":"#n"}]}`, "$ref cycle"},
	{"draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"$ref":"#/definitions/a"}},"$ref":"#/definitions/a"}`, "$ref cycle"},
	{"deep not", nested("not", 5000), "levels deep"},
	{"deep items", nested("items", MaxDepth+1), fmt.Sprintf("more than %d levels", MaxDepth)},
	{"deep properties", nested("properties", 200), "levels deep"},
	{"billion laughs", laughs(20), "costs more than"},
	{"remote ref", `{"$ref":"https://example.com/s.json"}`, "outside the schema"},
	{"missing def", `{"$ref":"#/$defs/nope"}`, "$ref"},
	{"missing anchor", `{"$ref":"#nope"}`, "anchor"},
	{"huge enum", `{"enum":[` + strings.Repeat(`1,`, MaxEnum) + `1]}`, "enum has"},
	{"fan-out", `{"properties":{` + strings.Repeat(`"p":{},`, 0) + props(MaxFanOut+1) + `}}`, "properties has"},
	{"deep const", `{"const":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, fmt.Sprintf("nests more than %d", MaxValueDepth)},
	{"deep default", `{"default":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, fmt.Sprintf("nests more than %d", MaxValueDepth)},
	{"deep extra keyword", `{"x-deep":` + strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat("}", 70) + `}`, fmt.Sprintf("nests more than %d", MaxValueDepth)},
	{"long chain", chain(MaxDepth + 1), "in a chain"},
	{"large and deep", strings.Repeat(`{"not":`, 30) + `{"description":"` + strings.Repeat("x", MaxBytes-1000) + `"}` + strings.Repeat(`}`, 30), "too large for how deeply"},
	{"too large", `{"description":"` + strings.Repeat("x", MaxBytes) + `"}`, "larger than"},
	{"bad pattern", `{"patternProperties":{"(":{}}}`, "does not compile"},
}

func props(n int) string {
	p := make([]string, n)
	for i := range p {
		p[i] = fmt.Sprintf(`"p%d":{}`, i)
	}
	return strings.Join(p, ",")
}

// chain returns a schema whose definitions form an allOf chain n long.
func chain(n int) string {
	var b strings.Builder
	b.WriteString(`{"$ref":"#/$defs/c0","$defs":{`)
	for i := range n {
		fmt.Fprintf(&b, `"c%d":{"allOf":[{"$ref":"#/$defs/c%d"}]},`, i, i+1)
	}
	fmt.Fprintf(&b, `"c%d":{}}}`, n)
	return b.String()
}

func TestRefused(t *testing.T) {
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := CheckJSON([]byte(tc.schema))
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want one wrapping ErrBadParameter saying %q", err, tc.want)
			}
			if len(err.Error()) > 1200 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
		})
	}
}

// Ordinary and recursive schemas are accepted; only those whose cost
// depends on the value get a Plan.
func TestAccepted(t *testing.T) {
	cases := []struct {
		name, schema string
		plan         bool
	}{
		{"empty", `{}`, false},
		{"true", `true`, false},
		{"object", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"array","items":{"type":"integer"}}},"required":["a"]}`, false},
		{"shared definitions", `{"type":"object","properties":{"from":{"$ref":"#/$defs/addr"},"to":{"$ref":"#/$defs/addr"}},"$defs":{"addr":{"type":"object","properties":{"city":{"type":"string"}}}}}`, false},
		{"draft-07 definitions", `{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$ref":"#/definitions/x"}},"definitions":{"x":{"items":[{"type":"string"}],"additionalItems":{"$ref":"#/definitions/y"}},"y":{}}}`, false},
		{"anchor", `{"properties":{"a":{"$ref":"#leaf"}},"$defs":{"l":{"$anchor":"leaf","type":"string"}}}`, false},
		{"id", `{"$id":"http://example.com/root","properties":{"a":{"$ref":"leaf"}},"$defs":{"l":{"$id":"leaf","type":"string"}}}`, false},
		{"tree", `{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}}}`, true},
		{"json value", `{"$ref":"#/$defs/v","$defs":{"v":{"anyOf":[{"type":["string","number","boolean","null"]},{"type":"array","items":{"$ref":"#/$defs/v"}},{"type":"object","additionalProperties":{"$ref":"#/$defs/v"}}]}}}`, true},
		{"linked list", `{"type":"object","properties":{"next":{"$ref":"#"}}}`, true},
		{"expression", `{"$ref":"#/$defs/e","$defs":{"e":{"anyOf":[{"type":"number"},{"type":"object","properties":{"add":{"type":"array","items":{"$ref":"#/$defs/e"}}}},{"type":"object","properties":{"mul":{"type":"array","items":{"$ref":"#/$defs/e"}}}}]}}}`, true},
		{"shared many times", `{"properties":{"x":{"$ref":"#/$defs/d16"}},"$defs":{"d0":{"type":"string"},` + laughDefs(16) + `}}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, p, err := CheckJSON([]byte(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			if (p != nil) != tc.plan {
				t.Errorf("plan %v, want %v", p != nil, tc.plan)
			}
			if _, err := s.Resolve(nil); err != nil {
				t.Errorf("the schema does not resolve: %v", err)
			}
		})
	}
}

// laughDefs are the definitions of laughs: d1 ... dn.
func laughDefs(n int) string {
	var l []string
	for i := 1; i <= n; i++ {
		l = append(l, fmt.Sprintf(`"d%d":{"properties":{"a":{"$ref":"#/$defs/d%d"}},"allOf":[{"properties":{"a":{"$ref":"#/$defs/d%d"}}}]}`, i, i-1, i-1))
	}
	return strings.Join(l, ",")
}

// Schemas built in Go may share or loop back to subschemas, which no
// walker may follow for ever.
func TestNotATree(t *testing.T) {
	loop := &jsonschema.Schema{Type: "object"}
	loop.Properties = map[string]*jsonschema.Schema{"self": loop}
	shared := &jsonschema.Schema{Type: "string"}
	twice := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"a": shared, "b": shared}}
	null := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"a": nil}}
	for name, s := range map[string]*jsonschema.Schema{"loop": loop, "shared": twice} {
		if _, err := Check(s); err == nil || !strings.Contains(err.Error(), "not a tree") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Check(null); err == nil || !strings.Contains(err.Error(), "null") {
		t.Errorf("null: %v", err)
	}
	if p, err := Check(nil); p != nil || err != nil {
		t.Errorf("nil: %v, %v", p, err)
	}
}

// decode decodes JSON as Call does.
func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// deepValue returns {"key":{"key":...}} n levels deep.
func deepValue(key string, n int) string {
	return strings.Repeat(`{"`+key+`":`, n) + `{}` + strings.Repeat("}", n)
}

// The Plan of a recursive schema bounds each value: its depth, and the
// work of a schema that checks the same part of the value along two
// paths at each level (2^depth checks without the plan).
func TestPlanBoundsValues(t *testing.T) {
	tree := `{"type":"object","properties":{"next":{"$ref":"#"}}}`
	double := `{"type":"object","allOf":[{"properties":{"a":{"$ref":"#"}}},{"properties":{"a":{"$ref":"#"}}}]}`
	cases := []struct {
		name, schema, value, want string
	}{
		{"tree", tree, deepValue("next", 200), ""},
		{"tree too deep", tree, deepValue("next", MaxInstanceDepth+1), "nests more than"},
		{"unrelated depth", tree, `{"other":` + deepValue("x", 1000) + `}`, ""},
		{"double shallow", double, deepValue("a", 5), ""},
		{"double deep", double, deepValue("a", 30), "costs more than"},
		{"not reached", double, `{"b":` + deepValue("a", 30) + `}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, p, err := CheckJSON([]byte(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			if p == nil {
				t.Fatal("no plan")
			}
			v := decode(t, tc.value)
			err = p.Check(v)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				rs, err := s.Resolve(nil)
				if err != nil {
					t.Fatal(err)
				}
				_ = rs.Validate(v) // returns
				return
			}
			if err == nil || !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// The error of a Plan says where in the value the limit was passed.
func TestPlanErrorPlace(t *testing.T) {
	_, p, err := CheckJSON([]byte(`{"type":"object","properties":{"list":{"type":"array","items":{"$ref":"#"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	v := decode(t, `{"list":[{},`+strings.Repeat(`{"list":[`, 200)+strings.Repeat(`]}`, 200)+`]}`)
	err = p.Check(v)
	if err == nil || !strings.Contains(err.Error(), "(at #/list/1/list/0/list/0/") {
		t.Errorf("error %v", err)
	}
}

// A schema without recursion whose worst case passes the bounds gets a
// Plan too, and only the values that reach the worst case are refused.
func TestPlanWithoutRecursion(t *testing.T) {
	s := `{"properties":{"x":{"$ref":"#/$defs/d20"}},"$defs":{"d0":{"type":"string"},` + laughDefs(20) + `}}`
	_, p, err := CheckJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	if p == nil {
		t.Fatal("no plan")
	}
	if err := p.Check(decode(t, `{"x":`+deepValue("a", 3)+`}`)); err != nil {
		t.Errorf("shallow value: %v", err)
	}
	if err := p.Check(decode(t, `{"x":`+deepValue("a", 20)+`}`)); err == nil {
		t.Error("a value checked 2^20 times was accepted")
	}
}

// Check of the largest schemas allowed stays fast: it is linear in the
// schema, whatever its $refs.
func BenchmarkCheck(b *testing.B) {
	s := `{"type":"object","properties":{` + props(MaxFanOut) + `}}`
	var schema jsonschema.Schema
	if err := json.Unmarshal([]byte(s), &schema); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Check(&schema); err != nil {
			b.Fatal(err)
		}
	}
}

// Check of a typical tool schema.
func BenchmarkCheckSmall(b *testing.B) {
	var schema jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"path":{"type":"string","description":"a path"},"limit":{"type":"integer","minimum":1},"tags":{"type":"array","items":{"type":"string"}},"mode":{"enum":["a","b","c"]}},"required":["path"]}`), &schema); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Check(&schema); err != nil {
			b.Fatal(err)
		}
	}
}

// A schema of more than MaxSubschemas subschemas is refused, however they
// are spread.
func TestTooManySubschemas(t *testing.T) {
	root := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	for i := range MaxSubschemas/MaxFanOut + 1 {
		inner := &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{}}
		for j := range MaxFanOut {
			inner.Properties[fmt.Sprint(j)] = &jsonschema.Schema{}
		}
		root.Properties[fmt.Sprint(i)] = inner
	}
	if _, err := Check(root); err == nil || !strings.Contains(err.Error(), "more than 10000 subschemas") {
		t.Errorf("error %v", err)
	}
}

package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/geminicheck"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// loadDefinitions reads the schema corpus under testdata/schemas.
func loadDefinitions(t testing.TB) []Definition {
	t.Helper()
	files, err := filepath.Glob("testdata/schemas/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas: %v", err)
	}
	var defs []Definition
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Name, Description string
			Strict            bool
			Schema            json.RawMessage
		}
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		p, err := normalizeParameters(c.Schema)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		defs = append(defs, Definition{Name: c.Name, Description: c.Description, Parameters: p, Strict: c.Strict && IsStrictSchema(p)})
	}
	return defs
}

func TestEncodeGolden(t *testing.T) {
	defs := loadDefinitions(t)
	for _, f := range []Format{OpenAIChat, OpenAIResponses, Anthropic, Gemini} {
		t.Run(string(f), func(t *testing.T) {
			raw, err := Encode(f, defs)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := json.Indent(&buf, raw, "", "  "); err != nil {
				t.Fatal(err)
			}
			buf.WriteByte('\n')
			path := filepath.Join("testdata", "golden", string(f)+".json")
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestEncodeGolden -update)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s differs from the golden file; got:\n%s", path, buf.String())
			}
		})
	}
}

// TestEncodeShapes checks the envelope of every format.
func TestEncodeShapes(t *testing.T) {
	d := Definition{Name: "f", Description: "d", Parameters: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`), Strict: true}
	cases := map[Format]string{
		OpenAIChat:      `[{"type":"function","function":{"name":"f","description":"d","parameters":{"properties":{"x":{"type":"string"}},"type":"object"},"strict":true}}]`,
		OpenAIResponses: `[{"type":"function","name":"f","description":"d","parameters":{"properties":{"x":{"type":"string"}},"type":"object"},"strict":true}]`,
		Anthropic:       `[{"name":"f","description":"d","input_schema":{"properties":{"x":{"type":"string"}},"type":"object"}}]`,
		Gemini:          `[{"functionDeclarations":[{"name":"f","description":"d","parameters":{"properties":{"x":{"type":"STRING"}},"type":"OBJECT"}}]}]`,
	}
	for f, want := range cases {
		got, err := Encode(f, []Definition{d})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !jsonEqual(t, got, []byte(want)) {
			t.Errorf("%s:\n got %s\nwant %s", f, got, want)
		}
	}
	// "strict" is always written for OpenAI, false included: the Responses
	// API takes a missing "strict" as true.
	loose := Definition{Name: "g", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
	loosely := map[Format]string{
		OpenAIChat:      `{"type":"function","function":{"name":"g","parameters":{"properties":{},"type":"object"},"strict":false}}`,
		OpenAIResponses: `{"type":"function","name":"g","parameters":{"properties":{},"type":"object"},"strict":false}`,
		Anthropic:       `{"name":"g","input_schema":{"properties":{},"type":"object"}}`,
		Gemini:          `{"name":"g"}`,
	}
	for f, want := range loosely {
		got, err := EncodeTool(f, loose)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !jsonEqual(t, got, []byte(want)) {
			t.Errorf("%s, not strict:\n got %s\nwant %s", f, got, want)
		}
	}
	for _, f := range []Format{OpenAIChat, OpenAIResponses, Anthropic, Gemini} {
		got, err := Encode(f, nil)
		if err != nil || string(got) != "[]" {
			t.Errorf("%s with no definitions: %s, %v", f, got, err)
		}
	}
	if _, err := Encode("cohere", nil); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("unknown format: %v", err)
	}
	// A bad definition is reported and the others still encoded.
	got, err := Encode(OpenAIChat, []Definition{{Name: "bad.name"}, d})
	if !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), "bad.name") {
		t.Errorf("bad name error: %v", err)
	}
	var arr []any
	if json.Unmarshal(got, &arr) != nil || len(arr) != 1 {
		t.Errorf("good definition lost: %s", got)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

func TestNormalizeParameters(t *testing.T) {
	empty := `{"type":"object","properties":{}}`
	for _, c := range []struct{ in, want string }{
		{"", empty},
		{"null", empty},
		{"true", empty},
		{"{}", empty},
		{`{"properties":{"a":{}}}`, `{"type":"object","properties":{"a":{}}}`},
		{`{"type":["object","null"]}`, `{"type":"object"}`},
		{`{"type":"object","properties":{"n":{"type":"integer","maximum":12345678901234567890}}}`, `{"type":"object","properties":{"n":{"type":"integer","maximum":12345678901234567890}}}`},
	} {
		got, err := normalizeParameters(json.RawMessage(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if !jsonEqual(t, got, []byte(c.want)) {
			t.Errorf("%s: got %s, want %s", c.in, got, c.want)
		}
	}
	for _, in := range []string{`{"type":"string"}`, `[1]`, `"x"`, `{`, `{"type":5}`, `{} {}`} {
		if _, err := normalizeParameters(json.RawMessage(in)); !errors.Is(err, toolkit.ErrSchema) {
			t.Errorf("%s: err = %v, want ErrSchema", in, err)
		}
	}
}

// adapt runs one provider's adaptation on a schema and decodes the result.
func adapt(t *testing.T, f func(json.RawMessage) (json.RawMessage, error), schema string) map[string]any {
	t.Helper()
	p, err := normalizeParameters(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	out, err := f(p)
	if err != nil {
		t.Fatal(err)
	}
	if out == nil {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAdaptRoot(t *testing.T) {
	for name, f := range map[string]func(json.RawMessage) (json.RawMessage, error){"openai": adaptOpenAI, "anthropic": adaptAnthropic} {
		t.Run(name, func(t *testing.T) {
			// Missing properties are added.
			m := adapt(t, f, `{"type":"object"}`)
			if _, ok := m["properties"].(map[string]any); !ok || m["type"] != "object" {
				t.Errorf("bare object: %v", m)
			}
			// Root oneOf: properties merged, only commonly required kept.
			m = adapt(t, f, `{"type":"object","oneOf":[{"properties":{"id":{"type":"integer"},"v":{}},"required":["id","v"]},{"properties":{"email":{"type":"string"},"v":{}},"required":["email","v"]}]}`)
			if _, ok := m["oneOf"]; ok {
				t.Errorf("oneOf kept: %v", m)
			}
			if p := m["properties"].(map[string]any); len(p) != 3 {
				t.Errorf("properties: %v", p)
			}
			if r := m["required"]; !reflect.DeepEqual(r, []any{"v"}) {
				t.Errorf("required: %v", r)
			}
			// Root allOf with a $ref: merged, all required kept.
			m = adapt(t, f, `{"allOf":[{"$ref":"#/$defs/a"},{"properties":{"b":{}},"required":["b"]}],"$defs":{"a":{"properties":{"a":{}},"required":["a"]}}}`)
			if _, ok := m["allOf"]; ok {
				t.Errorf("allOf kept: %v", m)
			}
			if r := m["required"]; !reflect.DeepEqual(r, []any{"a", "b"}) {
				t.Errorf("required: %v", r)
			}
			// Root anyOf, enum and not are gone; nested ones stay.
			m = adapt(t, f, `{"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}],"not":{"required":["c"]},"properties":{"x":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`)
			for _, kw := range []string{"anyOf", "not"} {
				if _, ok := m[kw]; ok {
					t.Errorf("%s kept at the root: %v", kw, m)
				}
			}
			if _, ok := m["properties"].(map[string]any)["x"].(map[string]any)["anyOf"]; !ok {
				t.Errorf("nested anyOf lost: %v", m)
			}
			// A schema that needs nothing is passed through byte for byte.
			in := `{"type":"object","properties":{"a":{"type":"string","format":"uri"}},"$schema":"x"}`
			out, err := f(json.RawMessage(in))
			if err != nil || string(out) != in {
				t.Errorf("pass-through: %s, %v", out, err)
			}
		})
	}
}

// walkGemini checks every node of a converted schema.
// walkGemini checks a converted schema against Gemini's documented schema
// subset (see package geminicheck).
func walkGemini(t *testing.T, path string, v any) {
	t.Helper()
	if err := geminicheck.Schema(v); err != nil {
		t.Errorf("%s: %v", path, err)
	}
}

func TestAdaptGemini(t *testing.T) {
	for _, d := range loadDefinitions(t) {
		out, err := adaptGemini(d.Parameters)
		if err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		if out == nil {
			continue
		}
		var m any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatal(err)
		}
		walkGemini(t, d.Name, m)
	}

	prop := func(m map[string]any, names ...string) map[string]any {
		for _, n := range names {
			m = m["properties"].(map[string]any)[n].(map[string]any)
		}
		return m
	}
	const schema = `{"$schema":"x","type":"object","additionalProperties":false,
	 "$defs":{"p":{"type":"object","properties":{"e":{"type":"string"}},"required":["e"]}},
	 "properties":{
	  "c":{"const":"fixed"},
	  "n":{"type":["string","null"]},
	  "u":{"type":["string","integer"]},
	  "o":{"oneOf":[{"type":"string"},{"type":"integer"}]},
	  "a":{"anyOf":[{"type":"integer"},{"type":"null"}],"description":"maybe"},
	  "all":{"allOf":[{"type":"string"},{"maxLength":3}]},
	  "ref":{"$ref":"#/$defs/p"},
	  "ie":{"type":"integer","enum":[1,2]},
	  "f1":{"type":"string","format":"email"},
	  "f2":{"type":"string","format":"date-time"},
	  "t":{"type":"string","title":"Titled"}
	 },"required":["c","nope"]}`
	m := adapt(t, adaptGemini, schema)
	for _, kw := range []string{"$schema", "additionalProperties", "$defs"} {
		if _, ok := m[kw]; ok {
			t.Errorf("%s kept", kw)
		}
	}
	checks := []struct {
		name string
		got  any
		want any
	}{
		{"const -> enum", prop(m, "c")["enum"], []any{"fixed"}},
		{"const type", prop(m, "c")["type"], "STRING"},
		{"nullable type array", prop(m, "n"), map[string]any{"type": "STRING", "nullable": true}},
		{"type array -> anyOf", prop(m, "u")["anyOf"], []any{map[string]any{"type": "STRING"}, map[string]any{"type": "INTEGER"}}},
		{"oneOf -> anyOf", prop(m, "o")["anyOf"], []any{map[string]any{"type": "STRING"}, map[string]any{"type": "INTEGER"}}},
		{"anyOf null -> nullable", prop(m, "a"), map[string]any{"type": "INTEGER", "nullable": true, "description": "maybe"}},
		{"allOf merged", prop(m, "all"), map[string]any{"type": "STRING", "maxLength": float64(3)}},
		{"ref inlined", prop(m, "ref"), map[string]any{"type": "OBJECT", "properties": map[string]any{"e": map[string]any{"type": "STRING"}}, "required": []any{"e"}}},
		{"integer enum dropped", prop(m, "ie"), map[string]any{"type": "INTEGER", "description": "Allowed values: 1, 2."}},
		{"unknown format dropped", prop(m, "f1"), map[string]any{"type": "STRING"}},
		{"known format kept", prop(m, "f2"), map[string]any{"type": "STRING", "format": "date-time"}},
		{"title as description", prop(m, "t"), map[string]any{"type": "STRING", "description": "Titled"}},
		{"required filtered", m["required"], []any{"c"}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}

	// Recursive refs are unrolled MaxRefDepth times, then cut.
	m = adapt(t, adaptGemini, `{"type":"object","$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}}}},"properties":{"root":{"$ref":"#/$defs/n"}}}`)
	depth := 0
	node := prop(m, "root")
	for {
		p, ok := node["properties"].(map[string]any)
		if !ok {
			break
		}
		depth++
		node = p["kids"].(map[string]any)["items"].(map[string]any)
	}
	if depth != MaxRefDepth || node["type"] != "OBJECT" {
		t.Errorf("recursion unrolled %d levels (want %d), leaf %v", depth, MaxRefDepth, node)
	}

	// No parameters: left out.
	if m := adapt(t, adaptGemini, `{}`); m != nil {
		t.Errorf("empty parameters kept: %v", m)
	}
	// Unknown refs do not break the conversion; what they leave says
	// nothing of its type, so it is a STRING (Gemini wants a type).
	m = adapt(t, adaptGemini, `{"properties":{"x":{"$ref":"https://example.com/s","description":"d"}}}`)
	if !reflect.DeepEqual(prop(m, "x"), map[string]any{"type": "STRING", "description": "d"}) {
		t.Errorf("remote ref: %v", m)
	}
}

// TestAdaptGeminiNodes checks each adaptation of a single node directly.
func TestAdaptGeminiNodes(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"examples -> example", `{"type":"string","examples":["a","b"]}`, `{"type":"STRING","example":"a"}`},
		{"own example kept", `{"type":"string","example":"x","examples":["a"]}`, `{"type":"STRING","example":"x"}`},
		{"tuple items -> first", `{"type":"array","items":[{"type":"string"},{"type":"integer"}]}`,
			`{"type":"ARRAY","items":{"type":"STRING"}}`},
		{"prefixItems -> items", `{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}]}`,
			`{"type":"ARRAY","items":{"type":"INTEGER"}}`},
		{"prefixItems, closed", `{"type":"array","prefixItems":[{"type":"integer"}],"items":false}`,
			`{"type":"ARRAY","items":{"type":"INTEGER"}}`},
		{"prefixItems, untyped", `{"prefixItems":[{"type":"boolean"}]}`, `{"type":"ARRAY","items":{"type":"BOOLEAN"}}`},
		{"items schema wins over prefixItems", `{"type":"array","prefixItems":[{"type":"integer"}],"items":{"type":"string"}}`,
			`{"type":"ARRAY","items":{"type":"STRING"}}`},
		{"array without items", `{"type":"array","minItems":1}`, `{"type":"ARRAY","items":{"type":"STRING"},"minItems":1}`},
		{"free-form object", `{"type":"object"}`, `{"type":"OBJECT"}`},
		{"empty properties", `{"type":"object","properties":{},"required":["x"],"propertyOrdering":[]}`, `{"type":"OBJECT"}`},
		{"map of strings", `{"type":"object","additionalProperties":{"type":"string"},"description":"Headers"}`,
			`{"type":"OBJECT","description":"Headers. Any keys; each value is of type string."}`},
		{"closed empty object", `{"type":"object","additionalProperties":false}`, `{"type":"OBJECT"}`},
		{"properties on a string", `{"type":"string","properties":{"a":{"type":"string"}},"required":["a"],"minProperties":1}`,
			`{"type":"STRING"}`},
		{"items on a string", `{"type":"string","items":{"type":"string"},"minItems":1,"maxItems":2}`, `{"type":"STRING"}`},
		{"properties on an integer enum", `{"type":"integer","enum":[1],"properties":{"a":{}}}`,
			`{"type":"INTEGER","description":"Allowed values: 1."}`},
		{"nullable object keeps its properties", `{"type":["object","null"],"properties":{"a":{"type":"string"}},"required":["a"]}`,
			`{"type":"OBJECT","nullable":true,"properties":{"a":{"type":"STRING"}},"required":["a"]}`},
		{"type array: keywords folded into the branches",
			`{"type":["object","array"],"properties":{"a":{"type":"string"}},"required":["a"],"items":{"type":"integer"},"minItems":1}`,
			`{"anyOf":[{"type":"OBJECT","properties":{"a":{"type":"STRING"}},"required":["a"]},{"type":"ARRAY","items":{"type":"INTEGER"},"minItems":1}]}`},
		{"anyOf: properties folded into the object branch",
			`{"anyOf":[{"type":"object"},{"type":"string"}],"properties":{"a":{"type":"string"}}}`,
			`{"anyOf":[{"type":"OBJECT","properties":{"a":{"type":"STRING"}}},{"type":"STRING"}]}`},
		{"anyOf: properties joined with a branch's own",
			`{"anyOf":[{"type":"object","properties":{"b":{"type":"number"}},"maxProperties":3},{"type":"null"},{"type":"boolean"}],"properties":{"a":{"type":"string"}},"maxProperties":1}`,
			`{"anyOf":[{"type":"OBJECT","properties":{"a":{"type":"STRING"},"b":{"type":"NUMBER"}},"maxProperties":3},{"type":"BOOLEAN"}],"nullable":true}`},
		{"integer enum typed", `{"enum":[1,2,3]}`, `{"type":"INTEGER","description":"Allowed values: 1, 2, 3."}`},
		{"whole and fractional numbers", `{"enum":[1.5,2,3e2]}`, `{"type":"NUMBER","description":"Allowed values: 1.5, 2, 3e2."}`},
		{"boolean enum typed", `{"description":"Mode.","enum":[true,false]}`, `{"type":"BOOLEAN","description":"Mode. Allowed values: true, false."}`},
		{"string enum with null", `{"enum":["a",null]}`, `{"type":"STRING","enum":["a"],"nullable":true}`},
		{"mixed enum: a branch per type", `{"enum":[1,"a",true,"b"]}`,
			`{"anyOf":[{"type":"STRING","enum":["a","b"]},{"type":"INTEGER"},{"type":"BOOLEAN"}],"description":"Allowed values: 1, \"a\", true, \"b\"."}`},
		{"integer const", `{"const":3}`, `{"type":"INTEGER","description":"Allowed values: 3."}`},
		{"enum of arrays", `{"enum":[[1,2],[3]]}`, `{"type":"ARRAY","items":{"type":"INTEGER"},"description":"Allowed values: [1,2], [3]."}`},
		{"enum of objects", `{"enum":[{"a":1}]}`, `{"type":"OBJECT","description":"Allowed values: {\"a\":1}."}`},
		{"string enum on an integer", `{"type":"integer","enum":["1"]}`, `{"type":"INTEGER","description":"Allowed values: \"1\"."}`},
		{"empty enum", `{"enum":[]}`, `{"type":"STRING"}`},
		{"null enum", `{"enum":[null]}`, `{"type":"STRING","nullable":true}`},
		{"unconstrained", `{}`, `{"type":"STRING"}`},
		{"true", `true`, `{"type":"STRING"}`},
		{"description only", `{"description":"Width"}`, `{"type":"STRING","description":"Width"}`},
		{"string keywords", `{"minLength":1}`, `{"type":"STRING","minLength":1}`},
		{"number keywords", `{"maximum":5}`, `{"type":"NUMBER","maximum":5}`},
		{"format tells the type", `{"format":"int64"}`, `{"type":"INTEGER","format":"int64"}`},
		{"default tells the type", `{"default":true}`, `{"type":"BOOLEAN","default":true}`},
		{"array of anything", `{"type":"array","items":true}`, `{"type":"ARRAY","items":{"type":"STRING"}}`},
		{"keywords of another type dropped", `{"type":"integer","minLength":3,"pattern":"x","format":"date-time","minimum":1}`,
			`{"type":"INTEGER","minimum":1}`},
		{"keyword values of the wrong type dropped", `{"type":"string","minLength":"x","pattern":1}`, `{"type":"STRING"}`},
		{"propertyOrdering names properties only", `{"type":"object","properties":{"a":{"type":"string"}},"propertyOrdering":["b","a","a"]}`,
			`{"type":"OBJECT","properties":{"a":{"type":"STRING"}},"propertyOrdering":["a"]}`},
		{"single branch merged with the node's properties",
			`{"anyOf":[{"type":"object","properties":{"b":{"type":"number"}},"required":["b"]},{"type":"null"}],"properties":{"a":{"type":"string"}},"required":["a","zz"]}`,
			`{"type":"OBJECT","nullable":true,"properties":{"a":{"type":"STRING"},"b":{"type":"NUMBER"}},"required":["b","a"]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := adapt(t, adaptGemini, `{"type":"object","properties":{"x":`+c.in+`}}`)
			got, err := json.Marshal(m["properties"].(map[string]any)["x"])
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, got, []byte(c.want)) {
				t.Errorf("\n got %s\nwant %s", got, c.want)
			}
			walkGemini(t, c.name, m)
		})
	}
}

func TestIsStrictSchema(t *testing.T) {
	for s, want := range map[string]bool{
		`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`:                 true,
		`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`:                                              false,
		`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`:                                  false,
		`{"type":"object","properties":{"a":{"type":"object","properties":{}}},"required":["a"],"additionalProperties":false}`: false,
		`{"type":"object","properties":{},"additionalProperties":false,"allOf":[]}`:                                            false,
		`not json`: false,
		// Keywords strict mode refuses.
		`{"type":"object","properties":{"a":{"type":"string","default":"x"}},"required":["a"],"additionalProperties":false}`:  false,
		`{"type":"object","properties":{"a":{"const":"x"}},"required":["a"],"additionalProperties":false}`:                    false,
		`{"type":"object","properties":{"a":{"type":"string","minLength":1}},"required":["a"],"additionalProperties":false}`:  false,
		`{"type":"object","properties":{"a":{"type":"string","format":"uri"}},"required":["a"],"additionalProperties":false}`: false,
		`{"type":"object","properties":{"a":{}},"required":["a"],"additionalProperties":false}`:                               false,
		`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false,"$schema":"x"}`:  false,
		`{"type":"object","properties":{"a":{"$ref":"https://x/s"}},"required":["a"],"additionalProperties":false}`:           false,
		`{"type":"object","properties":{"a":{"type":"text"}},"required":["a"],"additionalProperties":false}`:                  false,
		`{"type":"object","anyOf":[{"type":"object"}],"properties":{},"additionalProperties":false}`:                          false,
		// What it accepts.
		`{"type":"object","properties":{"a":{"type":"string","format":"date-time","pattern":"^2"},"n":{"type":["integer","null"],"minimum":1},"l":{"type":"array","items":{"type":"string","enum":["x","y"]},"maxItems":3},"r":{"$ref":"#/$defs/p"},"u":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["a","n","l","r","u"],"additionalProperties":false,"$defs":{"p":{"type":"object","properties":{"q":{"type":"boolean"}},"required":["q"],"additionalProperties":false}}}`: true,
	} {
		if got := IsStrictSchema(json.RawMessage(s)); got != want {
			t.Errorf("IsStrictSchema(%s) = %v, want %v", s, got, want)
		}
	}
	// Objects nest at most 10 deep.
	nest := func(n int) string {
		s := `{"type":"string"}`
		for range n {
			s = `{"type":"object","properties":{"p":` + s + `},"required":["p"],"additionalProperties":false}`
		}
		return s
	}
	if !IsStrictSchema(json.RawMessage(nest(10))) || IsStrictSchema(json.RawMessage(nest(11))) {
		t.Error("nesting limit")
	}
}

func TestAdaptBlowUp(t *testing.T) {
	// Each definition refers to the next one twice: inlining everything
	// would make 2^30 nodes.
	var defs []string
	for i := range 30 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"type":"object","properties":{"a":{"$ref":"#/$defs/d%d"},"b":{"$ref":"#/$defs/d%d"}}}`, i, i+1, i+1))
	}
	schema := `{"type":"object","properties":{"x":{"$ref":"#/$defs/d0"}},"$defs":{` + strings.Join(defs, ",") + `}}`
	out, err := adaptGemini(json.RawMessage(schema))
	if err != nil || len(out) > 1<<20 {
		t.Fatalf("%d bytes, %v", len(out), err)
	}
	// Properties under allOf, 40 levels deep: converting a merged branch
	// again at every level would take 2^40 steps.
	nested := `{"type":"string"}`
	for range 40 {
		nested = `{"allOf":[{"type":"object","properties":{"p":` + nested + `}}]}`
	}
	p, _ := normalizeParameters(json.RawMessage(`{"properties":{"x":` + nested + `}}`))
	for _, f := range []Format{OpenAIChat, Gemini} {
		if _, err := EncodeTool(f, Definition{Name: "n", Parameters: p}); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	// A definition that is an allOf of itself at the root.
	self := `{"allOf":[{"$ref":"#/$defs/s"}],"$defs":{"s":{"allOf":[{"$ref":"#/$defs/s"}],"properties":{"p":{}}}}}`
	for _, f := range []Format{OpenAIChat, Anthropic, Gemini} {
		p, _ := normalizeParameters(json.RawMessage(self))
		if _, err := EncodeTool(f, Definition{Name: "s", Parameters: p}); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func FuzzAdapt(f *testing.F) {
	for _, d := range loadDefinitions(f) {
		f.Add(string(d.Parameters))
	}
	f.Add(`{"allOf":[{"$ref":"#"}],"anyOf":[{"$ref":"#/$defs/a"},true],"$defs":{"a":{"oneOf":[{"$ref":"#/$defs/a"}]}}}`)
	f.Add(`{"properties":{"a":{"type":["null"]},"b":{"items":[{"const":1}]},"c":{"enum":[]}}}`)
	for _, s := range hostileSchemas() {
		f.Add(s)
	}
	f.Add(`{"properties":{"a":{"enum":[1,2,3]},"b":{"enum":[1,"a",null,true,[1,[2,{}]],{"x":1}]},"c":{"const":1.5},"d":{}}}`)
	f.Add(`{"properties":{"a":{"type":"integer","enum":["x"],"minLength":"1","format":"enum"},"b":true,"c":false,"d":{"$ref":"#/nowhere"}}}`)
	f.Add(`{"properties":{"a":{"anyOf":[{"type":"null"}]},"b":{"oneOf":[]},"c":{"type":["null","array"]},"d":{"type":"array","items":[]}}}`)
	f.Add(`{"properties":{"a":{"type":"object","properties":{"b":{}},"propertyOrdering":[1,"b","c"],"required":"b"}}}`)
	f.Fuzz(func(t *testing.T, schema string) {
		p, err := normalizeParameters(json.RawMessage(schema))
		if err != nil {
			return
		}
		IsStrictSchema(p)
		for _, format := range []Format{OpenAIChat, OpenAIResponses, Anthropic, Gemini} {
			out, err := EncodeTool(format, Definition{Name: "f", Parameters: p})
			if err != nil {
				continue
			}
			var v map[string]any
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatalf("%s: invalid JSON %s", format, out)
			}
			if format == Gemini {
				if err := geminicheck.Declaration(out); err != nil {
					t.Fatalf("gemini declaration %s\nfrom %s:\n%v", out, schema, err)
				}
			}
		}
	})
}

// Every declaration of the Gemini golden file passes Gemini's documented
// schema subset.
func TestGeminiGoldenValid(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "golden", "gemini.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tools []struct {
		FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
	}
	if err := json.Unmarshal(b, &tools); err != nil || len(tools) != 1 || len(tools[0].FunctionDeclarations) == 0 {
		t.Fatalf("golden file: %d tools, %v", len(tools), err)
	}
	for _, d := range tools[0].FunctionDeclarations {
		if err := geminicheck.Declaration(d); err != nil {
			t.Errorf("%s:\n%v", d, err)
		}
	}
}

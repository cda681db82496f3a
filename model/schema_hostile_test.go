package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/internal/schemaguard"
)

var allFormats = []Format{OpenAIChat, OpenAIResponses, Anthropic, Gemini}

// hostileSchemas are schemas built to hurt whoever walks them.
func hostileSchemas() map[string]string {
	var laughs strings.Builder
	laughs.WriteString(`{"type":"object","properties":{"x":{"$ref":"#/$defs/d30"}},"$defs":{"d0":{"type":"string"}`)
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&laughs, `,"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i-1, i-1)
	}
	laughs.WriteString(`}}`)
	props := make([]string, schemaguard.MaxFanOut+1)
	for i := range props {
		props[i] = fmt.Sprintf(`"p%d":{}`, i)
	}
	return map[string]string{
		"self_ref":   `{"type":"object","$ref":"#"}`,
		"mutual_ref": `{"type":"object","$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}}}`,
		"deep":       `{"type":"object","properties":{"x":` + strings.Repeat(`{"not":`, 1000) + `{}` + strings.Repeat(`}`, 1000) + `}}`,
		"huge_enum":  `{"type":"object","properties":{"x":{"enum":[` + strings.Repeat(`"v",`, schemaguard.MaxEnum) + `"w"]}}}`,
		"fan_out":    `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`,
		"laughs":     laughs.String(),
	}
}

// A tool or prompt whose schema is hostile has no definition: the error
// names it and wraps ErrSchema and ErrBadParameter. A schema built in Go
// may even loop back to itself.
func TestNewDefinitionHostileSchemas(t *testing.T) {
	schemas := map[string]*jsonschema.Schema{}
	for name, raw := range hostileSchemas() {
		if name == "deep" {
			continue // below, built in Go: decoding it costs jsonschema-go the square of its depth
		}
		schemas[name] = mustSchema(raw)
	}
	deep := &jsonschema.Schema{}
	for range 5000 {
		deep = &jsonschema.Schema{Not: deep}
	}
	schemas["deep"] = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"x": deep}}
	loop := &jsonschema.Schema{Type: "object"}
	loop.Properties = map[string]*jsonschema.Schema{"self": loop}
	schemas["loop"] = loop
	for name, s := range schemas {
		it := toolkit.Item{Namespace: "remote", Type: toolkit.ListTypeTools, Name: name, Value: &testTool{name: name, schema: s}}
		_, err := NewDefinition(name, it)
		if !errors.Is(err, errs.ErrSchema) || !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), `"remote.`+name+`"`) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A recursive schema that goes into its value is legitimate.
	tree := mustSchema(`{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#"}}}}`)
	it := toolkit.Item{Namespace: "remote", Type: toolkit.ListTypeTools, Name: "tree", Value: &testTool{name: "tree", schema: tree}}
	d, err := NewDefinition("tree", it)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range allFormats {
		if _, err := EncodeTool(f, d); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// Definitions made by hand are encoded within bounds for every provider
// whatever their schema holds: parameters too large or too deep to walk
// are an error; cycles and definitions that multiply are encoded with
// bounded work, and Gemini's inlining stops at its limits.
func TestEncodeHostileParameters(t *testing.T) {
	deepJSON := `{"type":"object","properties":{"x":` + strings.Repeat(`{"items":`, 400) + `{}` + strings.Repeat(`}`, 400) + `}}`
	big := `{"type":"object","description":"` + strings.Repeat("x", 2<<20) + `"}`
	for name, p := range map[string]string{"deep": deepJSON, "big": big} {
		for _, f := range allFormats {
			_, err := EncodeTool(f, Definition{Name: "t", Parameters: json.RawMessage(p)})
			if !errors.Is(err, errs.ErrSchema) || !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), `"t"`) {
				t.Errorf("%s, %s: %v", name, f, err)
			}
		}
	}
	for name, p := range hostileSchemas() {
		if name == "deep" {
			continue
		}
		for _, f := range allFormats {
			out, err := EncodeTool(f, Definition{Name: "t", Parameters: json.RawMessage(p)})
			if err != nil {
				t.Errorf("%s, %s: %v", name, f, err)
			}
			if len(out) > 8<<20 {
				t.Errorf("%s, %s: %d bytes", name, f, len(out))
			}
		}
	}
}

// Inlining a large definition many times stops once the converted schema
// is large; inlining a chain of definitions stops once it is deep.
func TestAdaptGeminiBounded(t *testing.T) {
	props := make([]string, 200)
	for i := range props {
		props[i] = fmt.Sprintf(`"p%d":{"type":"string","description":"%s"}`, i, strings.Repeat("d", 100))
	}
	uses := make([]string, 500)
	for i := range uses {
		uses[i] = fmt.Sprintf(`"u%d":{"$ref":"#/$defs/big"}`, i)
	}
	wide := `{"type":"object","properties":{` + strings.Join(uses, ",") + `},"$defs":{"big":{"type":"object","properties":{` + strings.Join(props, ",") + `}}}}`
	out, err := adaptGemini(json.RawMessage(wide))
	if err != nil {
		t.Fatal(err)
	}
	// Inlined everywhere: 500 * 200 nodes, about 12 MB.
	if len(out) > 4<<20 {
		t.Errorf("%d bytes", len(out))
	}
	var chain strings.Builder
	chain.WriteString(`{"type":"object","properties":{"x":{"$ref":"#/$defs/c0"}},"$defs":{`)
	for i := range 900 {
		fmt.Fprintf(&chain, `"c%d":{"type":"object","properties":{"next":{"$ref":"#/$defs/c%d"}}},`, i, i+1)
	}
	chain.WriteString(`"c900":{"type":"string"}}}`)
	out, err = adaptGemini(json.RawMessage(chain.String()))
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(out) {
		t.Fatal("invalid JSON")
	}
	// Two levels of JSON ("properties", then the property) a level.
	depth, most := 0, 0
	for _, b := range out {
		switch b {
		case '{':
			depth++
			most = max(most, depth)
		case '}':
			depth--
		}
	}
	if most > 2*maxGeminiDepth+4 {
		t.Errorf("converted %d levels of JSON deep", most)
	}
	if most < 2*MaxRefDepth {
		t.Errorf("converted only %d levels of JSON deep", most)
	}
}

// Hostile schemas of tools: NewDefinition refuses them or gives a
// definition every provider's encoder handles within bounds; nothing
// panics, overflows the stack or hangs.
func FuzzDefinition(f *testing.F) {
	for _, s := range hostileSchemas() {
		f.Add(s)
	}
	f.Add(`{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#"}}}}`)
	f.Add(`{"type":"object","$dynamicAnchor":"n","properties":{"a":{"$dynamicRef":"#n"}}}`)
	f.Add(`{"type":"object","allOf":[{"$ref":"#/$defs/s"}],"$defs":{"s":{"properties":{"p":{"$ref":"#"}}}}}`)
	f.Fuzz(func(t *testing.T, raw string) {
		s, _, err := schemaguard.CheckJSON([]byte(raw))
		if err != nil {
			return
		}
		it := toolkit.Item{Namespace: "n", Type: toolkit.ListTypeTools, Name: "f", Value: &testTool{name: "f", schema: s}}
		d, err := NewDefinition("f", it)
		if err != nil {
			if !errors.Is(err, errs.ErrSchema) {
				t.Fatalf("error %v does not wrap ErrSchema", err)
			}
			return
		}
		for _, format := range allFormats {
			out, err := EncodeTool(format, d)
			if err == nil && !json.Valid(out) {
				t.Fatalf("%s: invalid JSON", format)
			}
			if len(out) > 16<<20 {
				t.Fatalf("%s: %d bytes", format, len(out))
			}
		}
	})
}

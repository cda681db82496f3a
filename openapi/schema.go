package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/jsonschema-go/jsonschema"
)

// The schemas of a document are OpenAPI Schema Objects: JSON Schema
// 2020-12 in 3.1, a dialect of draft 4 in 3.0 (nullable, boolean
// exclusiveMinimum). A tool's schemas are JSON Schema 2020-12: each schema
// is converted, and the components it refers to
// ("#/components/schemas/Name") become "$defs" of the tool's schema, so
// that a recursive component stays a reference and is never expanded.

// componentPrefix is how a local schema reference starts.
const componentPrefix = "#/components/schemas/"

// maxSchemaDepth bounds the nesting of one schema, references aside.
const maxSchemaDepth = 64

// errSchema is wrapped by the error of a schema that cannot be converted.
var errSchema = errors.New("schema")

// schemaSet converts a document's schemas, each component once.
type schemaSet struct {
	doc  *openapi3.T
	is30 bool
	max  int

	mu    sync.Mutex
	comps map[string]*component
}

// component is a converted component schema.
type component struct {
	raw  json.RawMessage // JSON Schema 2020-12
	deps []string        // the components it refers to
	err  error
}

func newSchemaSet(doc *openapi3.T, max int) *schemaSet {
	return &schemaSet{doc: doc, is30: strings.HasPrefix(doc.OpenAPI, "3.0"), max: max, comps: map[string]*component{}}
}

// node converts one schema to a JSON value, recording in deps the
// components it refers to.
func (s *schemaSet) node(ref *openapi3.SchemaRef, deps map[string]bool) (any, error) {
	if ref == nil {
		return map[string]any{}, nil
	}
	if ref.Ref != "" {
		return s.refNode(ref.Ref, deps)
	}
	if ref.Value == nil {
		return map[string]any{}, nil
	}
	data, err := marshalSchema(ref.Value)
	if err != nil {
		return nil, err
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", errSchema, err)
	}
	return s.convert(v, 0, deps)
}

// marshalSchema marshals a schema with kin-openapi, turning a panic into
// an error.
func marshalSchema(v *openapi3.Schema) (data []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			data, err = nil, fmt.Errorf("%w: %v", errSchema, r)
		}
	}()
	data, err = json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errSchema, err)
	}
	return data, nil
}

// refNode returns the reference to a component, as a reference to the
// tool schema's $defs.
func (s *schemaSet) refNode(ref string, deps map[string]bool) (any, error) {
	name, ok := strings.CutPrefix(ref, componentPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: reference %s: only %s... is supported", errSchema, quote(ref), componentPrefix)
	}
	comp, _, _ := strings.Cut(name, "/")
	if s.doc.Components == nil || s.doc.Components.Schemas[unescapePointer(comp)] == nil {
		return nil, fmt.Errorf("%w: reference %s: no such component", errSchema, quote(ref))
	}
	deps[unescapePointer(comp)] = true
	return map[string]any{"$ref": "#/$defs/" + name}, nil
}

// unescapePointer undoes the escapes of a JSON pointer token.
func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// Keywords whose value is a schema, a map of schemas, or a list of
// schemas.
var (
	schemaKeys = []string{"additionalProperties", "not", "if", "then", "else", "contains",
		"propertyNames", "unevaluatedProperties", "unevaluatedItems", "additionalItems", "items"}
	schemaMapKeys  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	schemaListKeys = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	// droppedKeys describe the API, not the values: they are left out.
	droppedKeys = []string{"example", "discriminator", "xml", "externalDocs", "nullable", "$schema", "$id"}
)

// convert turns one OpenAPI schema (a decoded JSON value) into JSON
// Schema 2020-12.
func (s *schemaSet) convert(v any, depth int, deps map[string]bool) (any, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", errSchema, maxSchemaDepth)
	}
	m, ok := v.(map[string]any)
	if !ok {
		if _, isBool := v.(bool); isBool {
			return v, nil
		}
		return map[string]any{}, nil
	}
	if ref, ok := m["$ref"].(string); ok {
		r, err := s.refNode(ref, deps)
		if err != nil || s.is30 {
			return r, err // in 3.0 the keywords beside $ref are ignored
		}
		delete(m, "$ref")
		rest, err := s.convert(m, depth, deps)
		if err != nil {
			return nil, err
		}
		if rm := rest.(map[string]any); len(rm) > 0 {
			rm["$ref"] = r.(map[string]any)["$ref"]
			return rm, nil
		}
		return r, nil
	}
	out := make(map[string]any, len(m))
	for k, val := range m {
		if strings.HasPrefix(k, "x-") || slices.Contains(droppedKeys, k) {
			continue
		}
		var err error
		switch {
		case slices.Contains(schemaKeys, k):
			if list, isList := val.([]any); isList { // items as a list (draft 4 tuples)
				val, err = s.convertList(list, depth, deps)
				k = "prefixItems"
			} else {
				val, err = s.convert(val, depth+1, deps)
			}
		case slices.Contains(schemaMapKeys, k):
			val, err = s.convertMap(val, depth, deps)
		case slices.Contains(schemaListKeys, k):
			list, _ := val.([]any)
			val, err = s.convertList(list, depth, deps)
		}
		if err != nil {
			return nil, err
		}
		out[k] = val
	}
	if s.is30 {
		from30(m, out)
	}
	if t, ok := out["type"].(string); ok && t == "file" { // Swagger 2's file
		out["type"] = "string"
	}
	return out, nil
}

// from30 rewrites the OpenAPI 3.0 keywords of in into their JSON Schema
// 2020-12 form in out.
func from30(in, out map[string]any) {
	if in["nullable"] == true {
		switch t := out["type"].(type) {
		case string:
			out["type"] = []any{t, "null"}
		case []any:
			if !slices.Contains(t, any("null")) {
				out["type"] = append(t, "null")
			}
		}
		if e, ok := out["enum"].([]any); ok && !slices.Contains(e, nil) {
			out["enum"] = append(e, nil)
		}
	}
	for _, b := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		ex, ok := out[b[0]].(bool)
		if !ok {
			continue
		}
		delete(out, b[0])
		if lim, has := out[b[1]]; ex && has {
			out[b[0]] = lim
			delete(out, b[1])
		}
	}
}

func (s *schemaSet) convertList(list []any, depth int, deps map[string]bool) ([]any, error) {
	out := make([]any, len(list))
	for i, e := range list {
		c, err := s.convert(e, depth+1, deps)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

func (s *schemaSet) convertMap(v any, depth int, deps map[string]bool) (map[string]any, error) {
	m, _ := v.(map[string]any)
	out := make(map[string]any, len(m))
	for k, e := range m {
		c, err := s.convert(e, depth+1, deps)
		if err != nil {
			return nil, err
		}
		out[k] = c
	}
	return out, nil
}

// component returns the converted component name.
func (s *schemaSet) component(name string) *component {
	s.mu.Lock()
	c, ok := s.comps[name]
	s.mu.Unlock()
	if ok {
		return c
	}
	c = &component{}
	deps := map[string]bool{}
	var node any
	var ref *openapi3.SchemaRef
	if s.doc.Components != nil {
		ref = s.doc.Components.Schemas[name]
	}
	if ref != nil && ref.Ref != "" && ref.Value != nil {
		ref = &openapi3.SchemaRef{Value: ref.Value} // a component that is a reference: its value
	}
	node, c.err = s.node(ref, deps)
	if c.err == nil {
		c.raw, c.err = json.Marshal(node)
		c.deps = sortedKeys(deps)
	}
	if c.err != nil {
		c.err = fmt.Errorf("component %s: %w", quote(name), c.err)
	}
	s.mu.Lock()
	s.comps[name] = c
	s.mu.Unlock()
	return c
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// assemble returns the JSON of root with the components it refers to
// (transitively) as its $defs, refusing more than max bytes. With
// levels > 0, only the components that many references away from root
// are taken; those farther are defined as {} (any value), so that a
// schema whose components reach one another (an output schema of an API
// whose objects all refer to each other) stays small.
func (s *schemaSet) assemble(root map[string]any, deps map[string]bool, levels int) ([]byte, error) {
	body, err := json.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errSchema, err)
	}
	size := len(body)
	if len(deps) == 0 {
		if size > s.max {
			return nil, fmt.Errorf("%w: larger than %d bytes", errSchema, s.max)
		}
		return body, nil
	}
	var defs bytes.Buffer
	defs.WriteString(`{"$defs":{`)
	level := sortedKeys(deps)
	seen := map[string]bool{}
	for _, n := range level {
		seen[n] = true
	}
	first := true
	write := func(name string, raw []byte) error {
		if size += len(raw) + len(name) + 4; size > s.max {
			return fmt.Errorf("%w: larger than %d bytes with the components it refers to", errSchema, s.max)
		}
		if !first {
			defs.WriteByte(',')
		}
		first = false
		n, _ := json.Marshal(name)
		defs.Write(n)
		defs.WriteByte(':')
		defs.Write(raw)
		return nil
	}
	for depth := 1; len(level) > 0; depth++ {
		var next []string
		for _, name := range level {
			if levels > 0 && depth > levels {
				if err := write(name, []byte("{}")); err != nil {
					return nil, err
				}
				continue
			}
			c := s.component(name)
			if c.err != nil {
				return nil, c.err
			}
			if err := write(name, c.raw); err != nil {
				return nil, err
			}
			for _, d := range c.deps {
				if !seen[d] {
					seen[d] = true
					next = append(next, d)
				}
			}
		}
		level = next
	}
	defs.WriteString("}")
	if len(body) > 2 {
		defs.WriteByte(',')
	}
	defs.Write(body[1:])
	return defs.Bytes(), nil
}

// jsonSchema parses assembled JSON into a schema.
func jsonSchema(data []byte) (*jsonschema.Schema, error) {
	var js jsonschema.Schema
	if err := json.Unmarshal(data, &js); err != nil {
		return nil, fmt.Errorf("%w: %v", errSchema, err)
	}
	return &js, nil
}

// isObjectSchema reports whether a converted schema describes objects,
// looking through a reference to a component; it returns the schema to
// use as a root (the component's own, for a reference).
func (s *schemaSet) objectRoot(node any) (map[string]any, bool) {
	m, ok := node.(map[string]any)
	if !ok {
		return nil, false
	}
	if ref, ok := m["$ref"].(string); ok && len(m) == 1 {
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		if !ok || strings.Contains(name, "/") {
			return nil, false
		}
		c := s.component(unescapePointer(name))
		if c.err != nil {
			return nil, false
		}
		var root map[string]any
		if json.Unmarshal(c.raw, &root) != nil {
			return nil, false
		}
		m = root
	}
	if t, _ := m["type"].(string); t == "object" {
		return m, true
	}
	return nil, false
}

package model

import (
	"encoding/json"
	"slices"
	"strings"
)

// Bounds of OpenAI's strict mode (Structured Outputs) on one schema.
const (
	// strictMaxDepth is how deep objects may nest.
	strictMaxDepth = 10
	// strictMaxProperties bounds the object properties of one schema.
	strictMaxProperties = 5000
	// strictMaxEnumValues bounds the enum values of one schema.
	strictMaxEnumValues = 1000
)

// strictKeywords are the keywords strict mode accepts.
var strictKeywords = map[string]bool{
	"type": true, "description": true, "title": true, "enum": true, "anyOf": true,
	"$ref": true, "$defs": true, "definitions": true,
	"properties": true, "required": true, "additionalProperties": true, "items": true,
	"pattern": true, "format": true,
	"multipleOf": true, "minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"minItems": true, "maxItems": true,
}

// strictFormats are the string formats strict mode accepts.
var strictFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}

// strictTypes are the JSON types strict mode accepts.
var strictTypes = []string{"string", "number", "integer", "boolean", "object", "array", "null"}

// IsStrictSchema reports whether an object schema qualifies for OpenAI's
// strict mode (Structured Outputs) as it stands, so that a tool sent with
// "strict": true is accepted: the root is a plain object schema (no anyOf
// at the root; a root without properties is sent with an empty
// "properties"); every object forbids additional properties
// ("additionalProperties": false) and requires all of its properties;
// every node has a type, anyOf or a local $ref; only the keywords strict
// mode supports appear (type, description, title, enum, anyOf, $ref,
// $defs, definitions, properties, required, additionalProperties, items,
// pattern, format, multipleOf, minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, minItems, maxItems: no default, no const, no
// minLength, no allOf, oneOf or not), string formats among those it
// knows (date-time, time, date, duration, email, hostname, ipv4, ipv6,
// uuid); and objects nest at most 10 deep, with at most 5,000 properties
// and 1,000 enum values in all.
func IsStrictSchema(params json.RawMessage) bool {
	v, err := decodeSchema(params)
	if err != nil {
		return false
	}
	root, ok := v.(map[string]any)
	if !ok || root["type"] != "object" || root["anyOf"] != nil {
		return false
	}
	var b strictBudget
	return b.node(root, 0, 0)
}

// strictBudget counts what one schema spends of strict mode's limits.
type strictBudget struct {
	properties, enums, nodes int
}

// strictMaxNodes bounds the nodes visited, so that a hostile schema costs
// little to turn down.
const strictMaxNodes = 20000

func (b *strictBudget) node(v any, depth, objects int) bool {
	b.nodes++
	if b.nodes > strictMaxNodes || depth > 4*strictMaxDepth {
		return false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k := range m {
		if !strictKeywords[k] {
			return false
		}
	}
	types, ok := strictTypeList(m["type"])
	if !ok {
		return false
	}
	if len(types) == 0 && m["anyOf"] == nil && m["$ref"] == nil {
		return false
	}
	if ref, ok := m["$ref"]; ok {
		if s, _ := ref.(string); !strings.HasPrefix(s, "#") {
			return false
		}
	}
	if f, ok := m["format"]; ok {
		if s, _ := f.(string); !slices.Contains(strictFormats, s) {
			return false
		}
	}
	if p, ok := m["pattern"]; ok {
		if _, isStr := p.(string); !isStr {
			return false
		}
	}
	if e, ok := m["enum"]; ok {
		l, isList := e.([]any)
		if !isList || len(l) == 0 {
			return false
		}
		if b.enums += len(l); b.enums > strictMaxEnumValues {
			return false
		}
	}
	props, hasProps := m["properties"].(map[string]any)
	if _, ok := m["properties"]; ok && !hasProps {
		return false
	}
	if hasProps || slices.Contains(types, "object") {
		if objects++; objects > strictMaxDepth {
			return false
		}
		if m["additionalProperties"] != false {
			return false
		}
		if b.properties += len(props); b.properties > strictMaxProperties {
			return false
		}
		req := stringList(m["required"])
		for name, p := range props {
			if !slices.Contains(req, name) || !b.node(p, depth+1, objects) {
				return false
			}
		}
	} else if _, ok := m["additionalProperties"]; ok {
		return false
	}
	if it, ok := m["items"]; ok && !b.node(it, depth+1, objects) {
		return false
	}
	if a, ok := m["anyOf"]; ok {
		l, isList := a.([]any)
		if !isList || len(l) == 0 {
			return false
		}
		for _, br := range l {
			if !b.node(br, depth+1, objects) {
				return false
			}
		}
	}
	for _, kw := range []string{"$defs", "definitions"} {
		if d, ok := m[kw]; ok {
			defs, isMap := d.(map[string]any)
			if !isMap {
				return false
			}
			for _, s := range defs {
				if !b.node(s, depth+1, objects) {
					return false
				}
			}
		}
	}
	return true
}

// strictTypeList returns the types a node's "type" names (none when it
// has none); ok is false when it names one strict mode does not know or
// is malformed.
func strictTypeList(t any) (types []string, ok bool) {
	switch x := t.(type) {
	case nil:
		return nil, true
	case string:
		return []string{x}, slices.Contains(strictTypes, x)
	case []any:
		if len(x) == 0 {
			return nil, false
		}
		for _, e := range x {
			s, isStr := e.(string)
			if !isStr || !slices.Contains(strictTypes, s) {
				return nil, false
			}
			types = append(types, s)
		}
		return types, true
	}
	return nil, false
}

// Package geminicheck checks function declarations against the schema
// subset the Gemini API documents for function calling (the Schema object
// of the Gemini API and of Vertex AI: an OpenAPI 3.0 subset), for tests:
// every declaration the toolkit writes for Gemini must pass.
//
// The rules are those the API states or enforces with a 400:
//
//   - a declaration has a name (1 to 64 characters of [A-Za-z0-9_.:-],
//     starting with a letter or '_'), an optional description and optional
//     parameters, an OBJECT schema with at least one property;
//   - every schema node has a type (STRING, NUMBER, INTEGER, BOOLEAN, ARRAY
//     or OBJECT) unless it has anyOf ("must be specified when not using
//     one_of, any_of or all_of");
//   - only the documented keywords appear: type, format, title,
//     description, nullable, enum, items, minItems, maxItems, properties,
//     required, minProperties, maxProperties, propertyOrdering, minLength,
//     maxLength, pattern, minimum, maximum, default, example, anyOf;
//   - format is one of those documented for the node's type (float and
//     double for NUMBER, int32 and int64 for INTEGER, enum and date-time for
//     STRING);
//   - enum appears only on STRING and lists strings;
//   - object keywords (properties, required, minProperties, maxProperties,
//     propertyOrdering) only on OBJECT, never an empty properties, and
//     required and propertyOrdering name only properties of the node;
//   - array keywords (items, minItems, maxItems) only on ARRAY, and every
//     ARRAY has items;
//   - string keywords (minLength, maxLength, pattern) only on STRING and
//     number keywords (minimum, maximum) only on NUMBER or INTEGER;
//   - each keyword has the JSON type the API expects.
package geminicheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
)

// maxDepth bounds the nesting checked, so that a hostile input cannot
// exhaust the stack.
const maxDepth = 256

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$`)

var types = []string{"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"}

var formats = map[string][]string{
	"NUMBER":  {"float", "double"},
	"INTEGER": {"int32", "int64"},
	"STRING":  {"enum", "date-time"},
}

var keywords = map[string]bool{
	"type": true, "format": true, "title": true, "description": true, "nullable": true,
	"enum": true, "items": true, "minItems": true, "maxItems": true,
	"properties": true, "required": true, "minProperties": true, "maxProperties": true,
	"propertyOrdering": true, "minLength": true, "maxLength": true, "pattern": true,
	"minimum": true, "maximum": true, "default": true, "example": true, "anyOf": true,
}

// Keywords allowed only on nodes of one type (or two).
var (
	objectOnly = []string{"properties", "required", "minProperties", "maxProperties", "propertyOrdering"}
	arrayOnly  = []string{"items", "minItems", "maxItems"}
	stringOnly = []string{"minLength", "maxLength", "pattern", "enum"}
	numberOnly = []string{"minimum", "maximum"}
)

// Declaration checks one function declaration, as JSON.
func Declaration(raw []byte) error {
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf("declaration: %v", err)
	}
	var errs []error
	for k := range d {
		switch k {
		case "name", "description", "parameters":
		default:
			errs = append(errs, fmt.Errorf("declaration: unknown field %q", k))
		}
	}
	name, _ := d["name"].(string)
	if !nameRE.MatchString(name) {
		errs = append(errs, fmt.Errorf("declaration: bad name %q", name))
	}
	if v, ok := d["description"]; ok {
		if _, ok := v.(string); !ok {
			errs = append(errs, fmt.Errorf("declaration %s: description is not a string", name))
		}
	}
	if p, ok := d["parameters"]; ok {
		pm, _ := p.(map[string]any)
		if pm["type"] != "OBJECT" {
			errs = append(errs, fmt.Errorf("declaration %s: parameters are not an OBJECT", name))
		}
		if props, _ := pm["properties"].(map[string]any); len(props) == 0 {
			errs = append(errs, fmt.Errorf("declaration %s: parameters.properties: should be non-empty for OBJECT type", name))
		}
		if err := Schema(p); err != nil {
			errs = append(errs, fmt.Errorf("declaration %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// Schema checks a decoded schema and everything below it. Errors name the
// path of the node ("parameters.properties[a].items").
func Schema(v any) error {
	var errs []error
	check(v, "parameters", 0, &errs)
	return errors.Join(errs...)
}

func check(v any, path string, depth int, errs *[]error) {
	fail := func(format string, args ...any) {
		*errs = append(*errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
	}
	if depth > maxDepth {
		fail("nested too deep")
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		fail("a schema must be an object, not %T", v)
		return
	}
	for k := range m {
		if !keywords[k] {
			fail("keyword %q is not in Gemini's schema", k)
		}
	}
	typ, hasType := m["type"].(string)
	anyOf, hasAnyOf := m["anyOf"].([]any)
	switch {
	case !hasType && m["type"] != nil:
		fail("type is not a string")
	case hasType && !slices.Contains(types, typ):
		fail("unknown type %q", typ)
	case !hasType && !hasAnyOf:
		fail("type must be specified when not using anyOf")
	}
	if _, ok := m["anyOf"]; ok && (!hasAnyOf || len(anyOf) == 0) {
		fail("anyOf must be a non-empty list")
	}
	only := func(kws []string, allowed ...string) {
		for _, k := range kws {
			if _, ok := m[k]; ok && !slices.Contains(allowed, typ) {
				fail("%s: only allowed for %v type, not %q", k, allowed, typ)
			}
		}
	}
	only(objectOnly, "OBJECT")
	only(arrayOnly, "ARRAY")
	only(stringOnly, "STRING")
	only(numberOnly, "NUMBER", "INTEGER")

	if f, ok := m["format"]; ok {
		s, _ := f.(string)
		if !slices.Contains(formats[typ], s) {
			fail("format %v is not documented for type %q", f, typ)
		}
	}
	for _, k := range []string{"title", "description", "pattern"} {
		if v, ok := m[k]; ok {
			if _, ok := v.(string); !ok {
				fail("%s is not a string", k)
			}
		}
	}
	if v, ok := m["nullable"]; ok {
		if _, ok := v.(bool); !ok {
			fail("nullable is not a boolean")
		}
	}
	for _, k := range []string{"minItems", "maxItems", "minProperties", "maxProperties", "minLength", "maxLength", "minimum", "maximum"} {
		if v, ok := m[k]; ok {
			if !isNumber(v) {
				fail("%s is not a number", k)
			}
		}
	}
	if v, ok := m["enum"]; ok {
		l, _ := v.([]any)
		if len(l) == 0 {
			fail("enum must be a non-empty list")
		}
		for _, e := range l {
			if _, ok := e.(string); !ok {
				fail("enum value %v is not a string", e)
			}
		}
	}
	props, hasProps := m["properties"].(map[string]any)
	if _, ok := m["properties"]; ok {
		if !hasProps {
			fail("properties is not an object")
		} else if len(props) == 0 {
			fail("properties: should be non-empty for OBJECT type")
		}
	}
	for _, k := range []string{"required", "propertyOrdering"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		l, isList := v.([]any)
		if !isList {
			fail("%s is not a list", k)
			continue
		}
		for _, n := range l {
			s, _ := n.(string)
			if _, ok := props[s]; !ok {
				fail("%s names %v, which is not a property", k, n)
			}
		}
	}
	if typ == "ARRAY" {
		if _, ok := m["items"]; !ok {
			fail("items: missing field")
		}
	}
	for name, p := range props {
		check(p, path+".properties["+name+"]", depth+1, errs)
	}
	if it, ok := m["items"]; ok {
		check(it, path+".items", depth+1, errs)
	}
	for i, b := range anyOf {
		check(b, fmt.Sprintf("%s.anyOf[%d]", path, i), depth+1, errs)
	}
}

func isNumber(v any) bool {
	switch v.(type) {
	case float64, json.Number:
		return true
	}
	return false
}

package model

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
)

// Gemini refuses a schema node without a type unless it has anyOf ("type
// must be specified when not using one_of, any_of or all_of"). These
// functions give every node one.

// geminiEnum adapts the enum of a node (const is already a one-value
// enum). Gemini takes enums of strings only, on STRING nodes: such an enum
// on an untyped or STRING node stays, and makes the node a STRING. Any
// other enum is described in desc ("Allowed values: 1, 2, 3.") and, on a
// node with no type and no anyOf, types the node after its values: the
// JSON type they share (INTEGER when every number is a whole number,
// NUMBER otherwise), or for values of several types an anyOf with one
// branch per type, its STRING branch keeping the string values as its
// enum. A null among the values makes the node nullable.
func geminiEnum(out map[string]any, enum []any, desc string) (string, bool) {
	var vals []any
	nullable := false
	for _, v := range enum {
		if v == nil {
			nullable = true
		} else {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return desc, nullable
	}
	typ, _ := out["type"].(string)
	untyped := typ == "" && out["anyOf"] == nil
	if allStrings(vals) && (untyped || typ == "STRING") {
		out["type"], out["enum"] = "STRING", vals
		return desc, nullable
	}
	desc = appendSentence(desc, "Allowed values: "+listValues(enum)+".")
	if untyped {
		if branches := valuesSchemas(vals, 0); len(branches) == 1 {
			mergeSchema(out, branches[0])
		} else {
			l := make([]any, len(branches))
			for i, b := range branches {
				l[i] = b
			}
			out["anyOf"] = l
		}
	}
	return desc, nullable
}

// maxValueDepth bounds how deep valuesSchemas looks into array values.
const maxValueDepth = 8

// geminiTypeOrder is the order of the branches valuesSchemas makes.
var geminiTypeOrder = []string{"STRING", "INTEGER", "NUMBER", "BOOLEAN", "ARRAY", "OBJECT"}

// valuesSchemas returns one schema per Gemini type among vals (no nulls),
// in geminiTypeOrder; whole and fractional numbers make one NUMBER. A
// STRING schema lists its values as an enum; an ARRAY schema's items are
// typed after the elements of its values.
func valuesSchemas(vals []any, depth int) []map[string]any {
	byType := map[string][]any{}
	for _, v := range vals {
		t := valueType(v)
		byType[t] = append(byType[t], v)
	}
	if len(byType["NUMBER"]) > 0 && len(byType["INTEGER"]) > 0 {
		byType["NUMBER"] = append(byType["NUMBER"], byType["INTEGER"]...)
		delete(byType, "INTEGER")
	}
	var out []map[string]any
	for _, t := range geminiTypeOrder {
		vs := byType[t]
		if len(vs) == 0 {
			continue
		}
		s := map[string]any{"type": t}
		switch t {
		case "STRING":
			s["enum"] = vs
		case "ARRAY":
			s["items"] = elementsSchema(vs, depth+1)
		}
		out = append(out, s)
	}
	return out
}

// elementsSchema returns the schema of the elements of arrays: the one
// type they share, an anyOf of theirs, or STRING when there are none or
// they are too deep.
func elementsSchema(arrays []any, depth int) map[string]any {
	var elems []any
	for _, a := range arrays {
		for _, e := range a.([]any) {
			if e != nil {
				elems = append(elems, e)
			}
		}
	}
	if len(elems) == 0 || depth > maxValueDepth {
		return map[string]any{"type": "STRING"}
	}
	branches := valuesSchemas(elems, depth)
	for _, b := range branches {
		delete(b, "enum") // the values of the whole array were listed
	}
	if len(branches) == 1 {
		return branches[0]
	}
	l := make([]any, len(branches))
	for i, b := range branches {
		l[i] = b
	}
	return map[string]any{"anyOf": l}
}

// valueType returns the Gemini type of a decoded JSON value (not null).
func valueType(v any) string {
	switch x := v.(type) {
	case string:
		return "STRING"
	case bool:
		return "BOOLEAN"
	case json.Number:
		if isWhole(string(x)) {
			return "INTEGER"
		}
		return "NUMBER"
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return "INTEGER"
		}
		return "NUMBER"
	case []any:
		return "ARRAY"
	default:
		return "OBJECT"
	}
}

// isWhole reports whether a JSON number is a whole number that fits an
// int64 (1, -3, 2.0, 1e3), which JSON Schema counts as an integer.
func isWhole(n string) bool {
	if _, err := strconv.ParseInt(n, 10, 64); err == nil {
		return true
	}
	f, err := strconv.ParseFloat(n, 64)
	return err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<63
}

// inferGeminiType returns the type of a node that has neither a type nor
// anyOf, from the keywords it uses: properties and the other object
// keywords make an OBJECT, items and the other array keywords an ARRAY,
// string keywords a STRING, minimum and maximum a NUMBER, a format the
// type it belongs to, a default or example value its own type. A node
// that says nothing of its type (an unconstrained value, {} or true) is a
// STRING, the one type every model can write any value in.
func inferGeminiType(s map[string]any) string {
	has := func(kws ...string) bool {
		return slices.ContainsFunc(kws, func(k string) bool { _, ok := s[k]; return ok })
	}
	switch {
	case has("properties", "minProperties", "maxProperties", "additionalProperties", "patternProperties", "propertyNames"):
		return "OBJECT"
	case has("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains"):
		return "ARRAY"
	case has("minLength", "maxLength", "pattern"):
		return "STRING"
	case has("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
		return "NUMBER"
	}
	if f, ok := s["format"].(string); ok {
		for t, fs := range geminiFormats {
			if slices.Contains(fs, f) {
				return t
			}
		}
	}
	for _, k := range []string{"default", "example"} {
		if v, ok := s[k]; ok && v != nil {
			return valueType(v)
		}
	}
	return "STRING"
}

// Keywords Gemini takes only on nodes of some types.
var (
	geminiStringOnly = []string{"minLength", "maxLength", "pattern", "enum"}
	geminiNumberOnly = []string{"minimum", "maximum"}
	geminiNumeric    = []string{"minItems", "maxItems", "minProperties", "maxProperties", "minLength", "maxLength", "minimum", "maximum"}
)

// tidyGeminiKeywords drops from a converted node what Gemini would refuse
// in it beyond the object and array keywords: string keywords (and enum)
// on a node that is not a STRING, minimum and maximum on one that is not a
// NUMBER or INTEGER, a format not documented for the node's type, a
// numeric keyword whose value is not a number, a pattern that is not a
// string, and names in propertyOrdering that are not properties.
func tidyGeminiKeywords(out map[string]any) {
	typ, _ := out["type"].(string)
	if typ != "STRING" {
		for _, k := range geminiStringOnly {
			delete(out, k)
		}
	}
	if typ != "NUMBER" && typ != "INTEGER" {
		for _, k := range geminiNumberOnly {
			delete(out, k)
		}
	}
	if f, ok := out["format"].(string); ok && !slices.Contains(geminiFormats[typ], f) || !ok {
		delete(out, "format")
	}
	for _, k := range geminiNumeric {
		if v, ok := out[k]; ok {
			if _, isNum := v.(json.Number); !isNum {
				if _, isFloat := v.(float64); !isFloat {
					delete(out, k)
				}
			}
		}
	}
	if p, ok := out["pattern"]; ok {
		if _, isStr := p.(string); !isStr {
			delete(out, "pattern")
		}
	}
	if order, ok := out["propertyOrdering"]; ok {
		props, _ := out["properties"].(map[string]any)
		var kept []any
		for _, n := range stringList(order) {
			if _, ok := props[n]; ok && !slices.Contains(kept, any(n)) {
				kept = append(kept, n)
			}
		}
		if len(kept) > 0 {
			out["propertyOrdering"] = kept
		} else {
			delete(out, "propertyOrdering")
		}
	}
}

package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/llmkit/toolkit/internal/errs"
)

// emptyObjectSchema is the input schema of a tool that takes no arguments
// or declares none.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// decodeSchema decodes a JSON Schema into generic values, keeping numbers
// exact.
func decodeSchema(raw json.RawMessage) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data after schema")
	}
	return v, nil
}

// normalizeParameters turns an input schema into an object schema: a
// missing schema (nil, null, true, {}) becomes {"type":"object",
// "properties":{}}; an object schema without "type" gets "type":"object".
// A schema that describes something other than an object is an error: the
// arguments of a tool call are always an object.
func normalizeParameters(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) || bytes.Equal(raw, []byte("true")) {
		return emptyObjectSchema, nil
	}
	v, err := decodeSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: input schema: %v", errs.ErrSchema, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: input schema is %s, want an object schema", errs.ErrSchema, jsonKind(v))
	}
	if len(m) == 0 {
		return emptyObjectSchema, nil
	}
	switch t := m["type"].(type) {
	case nil:
		m["type"] = "object"
	case string:
		if t != "object" {
			return nil, fmt.Errorf("%w: input schema has type %q, want \"object\"", errs.ErrSchema, t)
		}
	case []any:
		if !slices.Contains(t, any("object")) {
			return nil, fmt.Errorf("%w: input schema has type %v, want \"object\"", errs.ErrSchema, t)
		}
		m["type"] = "object"
	default:
		return nil, fmt.Errorf("%w: input schema has a malformed type", errs.ErrSchema)
	}
	return json.Marshal(m)
}

// jsonKind names the JSON kind of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	default:
		return "an object"
	}
}

// objectRoot adapts an object schema for OpenAI and Anthropic, which both
// require a plain object at the root: "type" is "object", "properties" is
// present, and the combinators they refuse at the top level are folded in.
// allOf branches are merged (properties and required joined); anyOf and
// oneOf branches are merged with only the properties every branch requires
// kept required; enum, const and not are dropped. The toolkit still checks
// the arguments against the original schema when the tool is called.
func objectRoot(m map[string]any) map[string]any {
	budget := maxRootBranches
	return flattenRoot(m, definitions(m), 0, &budget)
}

// maxRootBranches bounds the branches merged into one root.
const maxRootBranches = 256

// maxRootMerge bounds how deep root combinators (and the refs they follow)
// are merged.
const maxRootMerge = 8

func flattenRoot(m map[string]any, defs map[string]any, depth int, budget *int) map[string]any {
	m = shallowCopy(m)
	*budget--
	if depth >= maxRootMerge || *budget <= 0 {
		delete(m, "allOf")
		delete(m, "anyOf")
		delete(m, "oneOf")
	}
	if branches, ok := m["allOf"].([]any); ok {
		delete(m, "allOf")
		for _, b := range branches {
			if bm, ok := resolveLocal(b, defs).(map[string]any); ok {
				mergeObject(m, flattenRoot(bm, defs, depth+1, budget), true)
			}
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		branches, ok := m[kw].([]any)
		if !ok {
			continue
		}
		delete(m, kw)
		var common []string
		for i, b := range branches {
			bm, ok := resolveLocal(b, defs).(map[string]any)
			if !ok {
				common = nil
				continue
			}
			bm = flattenRoot(bm, defs, depth+1, budget)
			req := stringList(bm["required"])
			if i == 0 {
				common = req
			} else {
				common = intersect(common, req)
			}
			delete(bm, "required")
			mergeObject(m, bm, false)
		}
		addRequired(m, common)
	}
	delete(m, "enum")
	delete(m, "const")
	delete(m, "not")
	m["type"] = "object"
	if _, ok := m["properties"].(map[string]any); !ok {
		m["properties"] = map[string]any{}
	}
	return m
}

// objectOnlyKeywords are the keywords mergeObject leaves out: they
// describe the schema document or its type, not the object's members.
var objectOnlyKeywords = map[string]bool{"type": true, "$schema": true, "$id": true, "$defs": true, "definitions": true}

// mergeObject merges the object schema src into dst: properties are joined
// (dst's win), required lists are joined when withRequired, and other
// keywords are copied when dst lacks them.
func mergeObject(dst, src map[string]any, withRequired bool) {
	mergeKeywords(dst, src, withRequired, objectOnlyKeywords)
}

// mergeSchema copies into dst the keywords of src that dst lacks, joining
// properties and required lists.
func mergeSchema(dst, src map[string]any) { mergeKeywords(dst, src, true, nil) }

// mergeKeywords copies into dst the keywords of src that dst lacks, except
// those in skip: properties are joined (dst's win) and, when withRequired,
// so are required lists.
func mergeKeywords(dst, src map[string]any, withRequired bool, skip map[string]bool) {
	for k, v := range src {
		switch {
		case k == "properties":
			sp, _ := v.(map[string]any)
			dp, _ := dst["properties"].(map[string]any)
			if dp == nil {
				dp = map[string]any{}
			}
			for name, s := range sp {
				if _, ok := dp[name]; !ok {
					dp[name] = s
				}
			}
			dst["properties"] = dp
		case k == "required":
			if withRequired {
				addRequired(dst, stringList(v))
			}
		case skip[k]:
		default:
			if _, ok := dst[k]; !ok {
				dst[k] = v
			}
		}
	}
}

// addRequired adds names to m's required list, keeping it free of
// duplicates.
func addRequired(m map[string]any, names []string) {
	if len(names) == 0 {
		return
	}
	have := stringList(m["required"])
	for _, n := range names {
		if !slices.Contains(have, n) {
			have = append(have, n)
		}
	}
	out := make([]any, len(have))
	for i, n := range have {
		out[i] = n
	}
	m["required"] = out
}

func stringList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func shallowCopy(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// definitions returns the local definitions of a root schema: "$defs" and
// the older "definitions", keyed by their JSON pointer.
func definitions(root map[string]any) map[string]any {
	out := map[string]any{}
	for _, kw := range []string{"$defs", "definitions"} {
		if d, ok := root[kw].(map[string]any); ok {
			for name, s := range d {
				out["#/"+kw+"/"+escapePointer(name)] = s
			}
		}
	}
	return out
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// resolveLocal follows one local $ref ("#" or a definition) of a root-level
// branch; anything else is returned as is.
func resolveLocal(v any, defs map[string]any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	ref, ok := m["$ref"].(string)
	if !ok {
		return v
	}
	if t, ok := defs[ref]; ok {
		return t
	}
	return v
}

// adaptOpenAI adapts normalized parameters for OpenAI's function tools.
func adaptOpenAI(params json.RawMessage) (json.RawMessage, error) {
	return adaptRoot(params)
}

// decodeParams decodes normalized parameters; ok is false when they are
// not a JSON object.
func decodeParams(params json.RawMessage) (m map[string]any, ok bool, err error) {
	v, err := decodeSchema(params)
	if err != nil {
		return nil, false, fmt.Errorf("%w: parameters: %v", errs.ErrSchema, err)
	}
	m, ok = v.(map[string]any)
	return m, ok, nil
}

// adaptAnthropic adapts normalized parameters for Anthropic's input_schema.
func adaptAnthropic(params json.RawMessage) (json.RawMessage, error) {
	return adaptRoot(params)
}

func adaptRoot(params json.RawMessage) (json.RawMessage, error) {
	m, ok, err := decodeParams(params)
	if err != nil {
		return nil, err
	}
	if !ok {
		return emptyObjectSchema, nil
	}
	if !needsRootFix(m) {
		return params, nil
	}
	return json.Marshal(objectRoot(m))
}

// needsRootFix reports whether objectRoot would change m.
func needsRootFix(m map[string]any) bool {
	if m["type"] != "object" {
		return true
	}
	if _, ok := m["properties"].(map[string]any); !ok {
		return true
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf", "enum", "const", "not"} {
		if _, ok := m[kw]; ok {
			return true
		}
	}
	return false
}

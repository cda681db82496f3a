package model

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/llmkit/toolkit/internal/errs"
)

// MaxRefDepth is how many times the Gemini adaptation inlines the same
// $ref along one path before it stops: a recursive schema (a tree node
// whose children are tree nodes) is unrolled this deep and then cut to a
// bare typed schema.
const MaxRefDepth = 3

// maxInline bounds the $refs inlined in one schema, so that a schema whose
// definitions refer to each other many times over cannot blow up.
const maxInline = 1000

// geminiKeep lists the keywords of Gemini's OpenAPI-subset Schema that the
// adaptation keeps; every other keyword is dropped.
var geminiKeep = map[string]bool{
	"type": true, "format": true, "description": true, "nullable": true,
	"enum": true, "items": true, "properties": true, "required": true,
	"minItems": true, "maxItems": true, "minProperties": true, "maxProperties": true,
	"minLength": true, "maxLength": true, "pattern": true,
	"minimum": true, "maximum": true, "default": true, "example": true,
	"anyOf": true, "propertyOrdering": true,
}

// geminiFormats lists the formats Gemini accepts, by type.
var geminiFormats = map[string][]string{
	"STRING":  {"enum", "date-time"},
	"NUMBER":  {"float", "double"},
	"INTEGER": {"int32", "int64"},
}

// geminiTypes maps JSON Schema types to Gemini's type names.
var geminiTypes = map[string]string{
	"string": "STRING", "number": "NUMBER", "integer": "INTEGER",
	"boolean": "BOOLEAN", "array": "ARRAY", "object": "OBJECT",
}

// adaptGemini converts normalized parameters to Gemini's schema (see
// Encode). It returns nil when the function takes no parameters, which
// Gemini wants left out.
func adaptGemini(params json.RawMessage) (json.RawMessage, error) {
	v, err := decodeSchema(params)
	if err != nil {
		return nil, fmt.Errorf("%w: parameters: %v", errs.ErrSchema, err)
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, nil
	}
	c := geminiConv{defs: definitions(root), seen: map[string]int{}}
	out := c.conv(objectRoot(root))
	out["type"] = "OBJECT"
	if p, _ := out["properties"].(map[string]any); len(p) == 0 {
		return nil, nil
	}
	return json.Marshal(out)
}

type geminiConv struct {
	defs    map[string]any
	seen    map[string]int // $ref -> times on the current path
	inlined int            // $refs inlined so far
}

// conv converts one schema node.
func (c *geminiConv) conv(v any) map[string]any {
	s, ok := v.(map[string]any)
	if !ok {
		// true, false or junk: an unconstrained value.
		return map[string]any{}
	}
	s = shallowCopy(s)

	if ref, ok := s["$ref"].(string); ok {
		delete(s, "$ref")
		target, found := c.defs[ref]
		tm, _ := target.(map[string]any)
		if !found || tm == nil {
			// Unknown or remote reference: keep the siblings only.
		} else if c.seen[ref] >= MaxRefDepth || c.inlined >= maxInline {
			cut := map[string]any{}
			if t, ok := tm["type"]; ok {
				cut["type"] = t
			}
			if d, ok := tm["description"]; ok {
				cut["description"] = d
			}
			mergeSchema(s, cut)
		} else {
			c.seen[ref]++
			c.inlined++
			inlined := c.conv(tm)
			c.seen[ref]--
			s = c.conv(s)
			mergeSchema(s, inlined)
			return s
		}
	}

	if branches, ok := s["allOf"].([]any); ok {
		delete(s, "allOf")
		for _, b := range branches {
			mergeSchema(s, c.flatBranch(b, 0))
		}
	}

	var alts []any
	for _, kw := range []string{"anyOf", "oneOf"} {
		if l, ok := s[kw].([]any); ok {
			alts = append(alts, l...)
			delete(s, kw)
		}
	}

	out := map[string]any{}
	nullable := false

	switch t := s["type"].(type) {
	case string:
		if t == "null" {
			nullable = true
		} else if g, ok := geminiTypes[strings.ToLower(t)]; ok {
			out["type"] = g
		}
	case []any:
		var types []string
		for _, x := range t {
			if x == "null" {
				nullable = true
			} else if str, ok := x.(string); ok && geminiTypes[strings.ToLower(str)] != "" {
				types = append(types, geminiTypes[strings.ToLower(str)])
			}
		}
		if len(types) == 1 {
			out["type"] = types[0]
		} else if len(types) > 1 {
			for _, g := range types {
				alts = append(alts, map[string]any{"type": strings.ToLower(g)})
			}
		}
	}

	if len(alts) > 0 {
		var kept []any
		for _, a := range alts {
			am := c.conv(a)
			if isNullOnly(a) {
				nullable = true
				continue
			}
			kept = append(kept, am)
		}
		switch len(kept) {
		case 0:
		case 1:
			mergeSchema(out, kept[0].(map[string]any))
		default:
			out["anyOf"] = kept
		}
	}

	desc, _ := s["description"].(string)
	if desc == "" {
		desc, _ = s["title"].(string)
	}

	if cv, ok := s["const"]; ok {
		if _, has := s["enum"]; !has {
			s["enum"] = []any{cv}
		}
	}
	if e, ok := s["enum"].([]any); ok {
		if allStrings(e) {
			out["enum"] = e
			if out["type"] == nil && out["anyOf"] == nil {
				out["type"] = "STRING"
			}
		} else {
			desc = appendSentence(desc, "Allowed values: "+listValues(e)+".")
		}
	}
	if out["type"] == nil && out["anyOf"] == nil {
		switch {
		case s["properties"] != nil:
			out["type"] = "OBJECT"
		case s["items"] != nil:
			out["type"] = "ARRAY"
		}
	}

	if props, ok := s["properties"].(map[string]any); ok && len(props) > 0 {
		cp := make(map[string]any, len(props))
		for name, p := range props {
			cp[name] = c.conv(p)
		}
		out["properties"] = cp
		var req []any
		for _, r := range stringList(s["required"]) {
			if _, ok := cp[r]; ok && !slices.Contains(req, any(r)) {
				req = append(req, r)
			}
		}
		if len(req) > 0 {
			out["required"] = req
		}
	}

	switch it := s["items"].(type) {
	case map[string]any, bool:
		out["items"] = c.conv(it)
	case []any:
		if len(it) > 0 {
			out["items"] = c.conv(it[0])
		}
	}
	if out["type"] == "ARRAY" && out["items"] == nil {
		if pi, ok := s["prefixItems"].([]any); ok && len(pi) > 0 {
			out["items"] = c.conv(pi[0])
		}
	}

	if f, ok := s["format"].(string); ok {
		if t, _ := out["type"].(string); slices.Contains(geminiFormats[t], f) {
			out["format"] = f
		}
	}
	if ex, ok := s["examples"].([]any); ok && len(ex) > 0 {
		if _, has := s["example"]; !has {
			out["example"] = ex[0]
		}
	}

	for k, val := range s {
		switch k {
		case "type", "enum", "properties", "required", "items", "format", "description", "anyOf", "nullable":
			continue
		}
		if geminiKeep[k] {
			out[k] = val
		}
	}
	if desc != "" {
		out["description"] = desc
	}
	if n, _ := s["nullable"].(bool); n || nullable {
		out["nullable"] = true
	}
	return out
}

// flatBranch returns an allOf branch, unconverted, with its own $ref and
// allOf merged in, so that the merged schema is converted once.
func (c *geminiConv) flatBranch(v any, depth int) map[string]any {
	m, ok := v.(map[string]any)
	if !ok || depth >= maxRootMerge || c.inlined >= maxInline {
		return map[string]any{}
	}
	c.inlined++
	m = shallowCopy(m)
	if ref, ok := m["$ref"].(string); ok {
		if target, found := c.defs[ref]; found && c.seen[ref] < MaxRefDepth {
			delete(m, "$ref")
			mergeSchema(m, c.flatBranch(target, depth+1))
		}
	}
	if branches, ok := m["allOf"].([]any); ok {
		delete(m, "allOf")
		for _, b := range branches {
			mergeSchema(m, c.flatBranch(b, depth+1))
		}
	}
	return m
}

// mergeSchema copies into dst the keywords of src that dst lacks, joining
// properties and required lists.
func mergeSchema(dst, src map[string]any) {
	for k, v := range src {
		switch k {
		case "properties":
			sp, _ := v.(map[string]any)
			dp, _ := dst["properties"].(map[string]any)
			if dp == nil {
				dp = map[string]any{}
			}
			for name, p := range sp {
				if _, ok := dp[name]; !ok {
					dp[name] = p
				}
			}
			dst["properties"] = dp
		case "required":
			addRequired(dst, stringList(v))
		default:
			if _, ok := dst[k]; !ok {
				dst[k] = v
			}
		}
	}
}

// isNullOnly reports whether v is the schema {"type":"null"}.
func isNullOnly(v any) bool {
	m, ok := v.(map[string]any)
	return ok && m["type"] == "null"
}

func allStrings(l []any) bool {
	for _, x := range l {
		if _, ok := x.(string); !ok {
			return false
		}
	}
	return len(l) > 0
}

func listValues(l []any) string {
	parts := make([]string, len(l))
	for i, x := range l {
		b, _ := json.Marshal(x)
		parts[i] = string(b)
	}
	return strings.Join(parts, ", ")
}

func appendSentence(desc, s string) string {
	if desc == "" {
		return s
	}
	if !strings.HasSuffix(desc, ".") {
		desc += "."
	}
	return desc + " " + s
}

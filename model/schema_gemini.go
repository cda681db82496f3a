package model

import (
	"encoding/json"
	"slices"
	"strings"
)

// MaxRefDepth is how many times the Gemini adaptation inlines the same
// $ref along one path before it stops: a recursive schema (a tree node
// whose children are tree nodes) is unrolled this deep and then cut to a
// bare typed schema.
const MaxRefDepth = 3

// maxInline bounds the $refs inlined in one schema, so that a schema whose
// definitions refer to each other many times over cannot blow up.
const maxInline = 1000

// maxGeminiNodes bounds the nodes of a converted schema past which no
// $ref is inlined any more (each is cut to a bare typed schema), so that
// inlining large definitions many times cannot blow up either.
const maxGeminiNodes = 20_000

// maxGeminiDepth bounds how deeply conversions nest, $refs inlined
// included: a node deeper than this is cut to a bare typed schema.
const maxGeminiDepth = 100

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
	root, ok, err := decodeParams(params)
	if err != nil || !ok {
		return nil, err
	}
	c := geminiConv{defs: definitions(root), seen: map[string]int{}}
	out := c.conv(objectRoot(root), 0)
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
	nodes   int            // nodes converted so far
}

// conv converts one schema node, depth conversions deep, which always
// gets a type or anyOf.
func (c *geminiConv) conv(v any, depth int) map[string]any { return c.node(v, true, depth) }

// node converts one schema node, depth conversions deep. When typed is
// false (the siblings of a $ref, merged with its target afterwards) a node
// whose type cannot be told from its structure is left untyped.
func (c *geminiConv) node(v any, typed bool, depth int) map[string]any {
	s, ok := v.(map[string]any)
	if !ok {
		// true, false or junk: an unconstrained value (see
		// inferGeminiType).
		return map[string]any{"type": "STRING"}
	}
	c.nodes++
	if depth > maxGeminiDepth {
		return bareGemini(s)
	}
	s = shallowCopy(s)

	if ref, ok := s["$ref"].(string); ok {
		delete(s, "$ref")
		target, found := c.defs[ref]
		tm, _ := target.(map[string]any)
		if !found || tm == nil {
			// Unknown or remote reference: keep the siblings only.
		} else if c.seen[ref] >= MaxRefDepth || c.inlined >= maxInline || c.nodes >= maxGeminiNodes {
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
			inlined := c.conv(tm, depth+1)
			c.seen[ref]--
			s = c.node(s, false, depth+1)
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
		alts = foldIntoBranches(s, alts)
		var kept []any
		for _, a := range alts {
			am := c.conv(a, depth+1)
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
		var null bool
		desc, null = geminiEnum(out, e, desc)
		nullable = nullable || null
	}
	if out["type"] == nil && out["anyOf"] == nil {
		switch {
		case typed:
			out["type"] = inferGeminiType(s)
		case s["properties"] != nil:
			out["type"] = "OBJECT"
		case s["items"] != nil || s["prefixItems"] != nil:
			out["type"] = "ARRAY"
		}
	}

	if props, ok := s["properties"].(map[string]any); ok && len(props) > 0 && out["type"] == "OBJECT" {
		// Properties of a merged branch (a single anyOf branch) come
		// first; the node's own are added to them.
		cp, _ := out["properties"].(map[string]any)
		cp = shallowCopy(cp)
		for name, p := range props {
			if _, ok := cp[name]; !ok {
				cp[name] = c.conv(p, depth+1)
			}
		}
		out["properties"] = cp
		addRequired(out, stringList(s["required"]))
	}

	// Gemini has no tuples: a tuple's elements are all described by the
	// schema of its first position, in the older form (items is a list)
	// and in the 2020-12 form (prefixItems, with items, if any, a boolean
	// or the schema of the elements after the tuple).
	pi, _ := s["prefixItems"].([]any)
	switch it := s["items"].(type) {
	case map[string]any:
		out["items"] = c.conv(it, depth+1)
	case []any:
		if len(it) > 0 {
			out["items"] = c.conv(it[0], depth+1)
		}
	case bool:
		if len(pi) == 0 {
			out["items"] = c.conv(it, depth+1)
		}
	}
	if out["items"] == nil && len(pi) > 0 {
		out["items"] = c.conv(pi[0], depth+1)
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
	if out["type"] == "OBJECT" && out["properties"] == nil {
		if note := freeFormNote(s["additionalProperties"]); note != "" {
			desc = appendSentence(desc, note)
		}
	}
	tidyGemini(out)
	if desc != "" {
		out["description"] = desc
	}
	if n, _ := s["nullable"].(bool); n || nullable {
		out["nullable"] = true
	}
	return out
}

// Keywords that only make sense on one Gemini type.
var (
	geminiObjectOnly = []string{"properties", "required", "minProperties", "maxProperties", "propertyOrdering"}
	geminiArrayOnly  = []string{"items", "minItems", "maxItems"}
)

// tidyGemini enforces on a converted node the rules Gemini checks beyond
// its keyword list, each of which fails the whole request with a 400:
//
//   - "properties" (and "required" and the other object keywords) are
//     "only allowed for OBJECT type": they are dropped from any other node,
//     including one with anyOf and no type of its own (foldIntoBranches has
//     already moved them into the object branches where it could).
//   - "properties" "should be non-empty for OBJECT type": an object without
//     properties (a free-form object, a Go map) keeps "type":"OBJECT", which
//     Gemini's schema documents with properties optional and accepts, but
//     never gets an empty "properties" (or a "required" naming nothing). It
//     is not turned into a string: the model would then send a JSON string
//     where the tool expects an object, and the call would fail validation.
//   - "required" may only name properties of the same node.
//   - "items" is only allowed for ARRAY, and an ARRAY without "items" is a
//     "missing field": one gets items of type STRING (an untyped schema is
//     refused too; see inferGeminiType).
//   - the keywords of strings, numbers and enums, and formats, only on
//     nodes of their type, with values of the right JSON type (see
//     tidyGeminiKeywords).
func tidyGemini(out map[string]any) {
	tidyGeminiKeywords(out)
	if out["type"] != "OBJECT" {
		for _, k := range geminiObjectOnly {
			delete(out, k)
		}
	} else {
		props, _ := out["properties"].(map[string]any)
		if len(props) == 0 {
			delete(out, "properties")
			delete(out, "propertyOrdering")
		}
		var req []any
		for _, r := range stringList(out["required"]) {
			if _, ok := props[r]; ok && !slices.Contains(req, any(r)) {
				req = append(req, r)
			}
		}
		if len(req) > 0 {
			out["required"] = req
		} else {
			delete(out, "required")
		}
	}
	if out["type"] != "ARRAY" {
		for _, k := range geminiArrayOnly {
			delete(out, k)
		}
	} else if out["items"] == nil {
		out["items"] = map[string]any{"type": "STRING"}
	}
}

// foldIntoBranches copies the object keywords of a node that has anyOf,
// oneOf or several types ({"type":["object","null"],"properties":...} or
// {"anyOf":[{"type":"object"},...],"properties":...}) into the branches
// that are objects, and its array keywords into the branches that are
// arrays (properties and required are joined with the branch's own; for
// the other keywords a branch's own value wins). In JSON Schema they apply to whichever
// branch matches; Gemini only accepts them on a node of that type.
func foldIntoBranches(s map[string]any, alts []any) []any {
	out := make([]any, len(alts))
	for i, a := range alts {
		out[i] = a
		am, ok := a.(map[string]any)
		if !ok {
			continue
		}
		var copied map[string]any
		fold := func(keys []string) {
			for _, k := range keys {
				v, has := s[k]
				if !has {
					continue
				}
				if copied == nil {
					copied = shallowCopy(am)
				}
				// properties and required are joined (mergeSchema); for
				// the other keywords the branch's own value wins.
				mergeSchema(copied, map[string]any{k: v})
			}
		}
		switch t, _ := am["type"].(string); strings.ToLower(t) {
		case "object":
			fold(geminiObjectOnly)
		case "array":
			fold(append(geminiArrayOnly, "prefixItems"))
		}
		if copied != nil {
			out[i] = copied
		}
	}
	return out
}

// freeFormNote describes, for the model, the values of an object without
// properties, which Gemini cannot express: additionalProperties is not in
// its schema.
func freeFormNote(ap any) string {
	m, ok := ap.(map[string]any)
	if !ok {
		return ""
	}
	if t, ok := m["type"].(string); ok && geminiTypes[strings.ToLower(t)] != "" {
		return "Any keys; each value is of type " + strings.ToLower(t) + "."
	}
	return ""
}

// flatBranch returns an allOf branch, unconverted, with its own $ref and
// allOf merged in, so that the merged schema is converted once.
func (c *geminiConv) flatBranch(v any, depth int) map[string]any {
	m, ok := v.(map[string]any)
	if !ok || depth >= maxRootMerge || c.inlined >= maxInline || c.nodes >= maxGeminiNodes {
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

// bareGemini returns the Gemini type and the description of a schema
// node, without what is under it.
func bareGemini(s map[string]any) map[string]any {
	out := map[string]any{}
	if t, ok := s["type"].(string); ok && geminiTypes[strings.ToLower(t)] != "" {
		out["type"] = geminiTypes[strings.ToLower(t)]
	} else {
		// Gemini refuses a node without a type.
		out["type"] = inferGeminiType(s)
	}
	if d, ok := s["description"].(string); ok {
		out["description"] = d
	}
	tidyGemini(out)
	return out
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

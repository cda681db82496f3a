package openapi_test

import (
	"sort"
	"strings"
)

// exampleInput returns a value that satisfies a tool's input schema (a
// JSON Schema 2020-12 as a decoded map, with its components in $defs):
// the required properties of objects, one element of arrays, the first
// enum value, a default or example when there is one.
func exampleInput(root map[string]any) any {
	defs, _ := root["$defs"].(map[string]any)
	return sample(root, defs, 0)
}

func sample(s any, defs map[string]any, depth int) any {
	m, ok := s.(map[string]any)
	if !ok || depth > 12 {
		return nil
	}
	if ref, ok := m["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		return sample(defs[name], defs, depth+1)
	}
	if v, ok := m["const"]; ok {
		return v
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if v, ok := m["default"]; ok {
		return v
	}
	if ex, ok := m["examples"].([]any); ok && len(ex) > 0 {
		return ex[0]
	}
	for _, k := range []string{"allOf"} {
		if list, ok := m[k].([]any); ok {
			out := map[string]any{}
			for _, e := range list {
				if o, ok := sample(e, defs, depth+1).(map[string]any); ok {
					for k, v := range o {
						out[k] = v
					}
				}
			}
			return out
		}
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if list, ok := m[k].([]any); ok && len(list) > 0 {
			return sample(list[0], defs, depth+1)
		}
	}
	typ := m["type"]
	if list, ok := typ.([]any); ok {
		typ = nil
		for _, t := range list {
			if t != "null" {
				typ = t
				break
			}
		}
	}
	if typ == nil && m["properties"] != nil {
		typ = "object"
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := m["properties"].(map[string]any)
		req, _ := m["required"].([]any)
		for _, r := range req {
			name, _ := r.(string)
			out[name] = sample(props[name], defs, depth+1)
		}
		if len(out) == 0 && len(props) > 0 { // one property, so that the object is not empty
			names := make([]string, 0, len(props))
			for k := range props {
				names = append(names, k)
			}
			sort.Strings(names)
			out[names[0]] = sample(props[names[0]], defs, depth+1)
		}
		return out
	case "array":
		n := 1
		if v, ok := m["minItems"].(float64); ok && int(v) > n {
			n = int(v)
		}
		out := make([]any, n)
		for i := range out {
			out[i] = sample(m["items"], defs, depth+1)
		}
		return out
	case "integer":
		if v, ok := m["minimum"].(float64); ok {
			return v
		}
		return 1
	case "number":
		if v, ok := m["minimum"].(float64); ok {
			return v
		}
		return 1.5
	case "boolean":
		return true
	case "string":
		switch m["format"] {
		case "date-time":
			return "2024-01-02T03:04:05Z"
		case "date":
			return "2024-01-02"
		case "email":
			return "someone@example.com"
		case "uuid":
			return "123e4567-e89b-12d3-a456-426614174000"
		case "uri", "url":
			return "https://example.com/x"
		}
		s := "example"
		if v, ok := m["minLength"].(float64); ok && int(v) > len(s) {
			s = strings.Repeat("x", int(v))
		}
		return s
	}
	return "example"
}

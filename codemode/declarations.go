package codemode

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Bounds of the declarations.
const (
	// maxTypeDepth is how deep a schema is written out; deeper parts are
	// "any".
	maxTypeDepth = 6
	// maxDeclaration bounds one tool's declaration in bytes: past it, its
	// argument and result types are written as "any", the argument's
	// property names kept.
	maxDeclaration = 6 << 10
	// maxDescription bounds a description written into a comment.
	maxDescription = 600
)

// Declaration is what a script needs to call one tool: its name and its
// input and output schemas.
type Declaration struct {
	// Name is the tool's name in scripts: tools.Name(args).
	Name        string
	Description string
	Input       *jsonschema.Schema // nil: any object
	Output      *jsonschema.Schema // nil: the result is not described
}

// Declare writes TypeScript declarations of tools for a model to read:
// the global tools object, one async function per tool, with its
// description and the argument's properties' descriptions as comments.
// Each declaration is bounded (large schemas are written loosely), so the
// text grows with the number of tools, not with their schemas' size.
func Declare(tools []Declaration) string {
	var b strings.Builder
	b.WriteString("declare const tools: {\n")
	for _, t := range tools {
		b.WriteString(declareOne(t))
	}
	b.WriteString("};\n")
	return b.String()
}

// declareOne writes one tool's member of the tools object.
func declareOne(t Declaration) string {
	var b strings.Builder
	comment(&b, "  ", t.Description)
	in := typeOf(t.Input, 0, "  ")
	if t.Input == nil {
		in = "Record<string, unknown>"
	}
	out := "unknown"
	if t.Output != nil {
		out = typeOf(t.Output, 0, "  ")
	}
	fmt.Fprintf(&b, "  %s(args: %s): Promise<%s>;\n", member(t.Name), in, out)
	if b.Len() <= maxDeclaration {
		return b.String()
	}
	// Too large: keep the description's start and the properties' names.
	b.Reset()
	comment(&b, "  ", truncate(t.Description, 200))
	var props []string
	size := 0
	if t.Input != nil {
		for _, p := range sortedKeys(t.Input.Properties) {
			opt := "?"
			if slices.Contains(t.Input.Required, p) {
				opt = ""
			}
			if size += len(p) + 8; size > maxDeclaration/4 {
				props = append(props, "[more: string]: any")
				break
			}
			props = append(props, member(p)+opt+": any")
		}
	}
	fmt.Fprintf(&b, "  %s(args: { %s }): Promise<any>;\n", member(t.Name), strings.Join(props, "; "))
	return b.String()
}

// typeOf writes the TypeScript type of s.
func typeOf(s *jsonschema.Schema, depth int, indent string) string {
	if s == nil {
		return "any"
	}
	if depth >= maxTypeDepth {
		return "any"
	}
	if s.Const != nil {
		return literal(*s.Const)
	}
	if len(s.Enum) > 0 {
		parts := make([]string, 0, len(s.Enum))
		for _, e := range s.Enum[:min(len(s.Enum), 50)] {
			parts = append(parts, literal(e))
		}
		return strings.Join(parts, " | ")
	}
	if alts := append(slices.Clip(s.AnyOf), s.OneOf...); len(alts) > 0 {
		parts := make([]string, 0, len(alts))
		for _, a := range alts[:min(len(alts), 20)] {
			parts = append(parts, typeOf(a, depth+1, indent))
		}
		return strings.Join(parts, " | ")
	}
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	if len(types) == 0 {
		if s.Properties != nil {
			types = []string{"object"}
		} else {
			return "any"
		}
	}
	parts := make([]string, 0, len(types))
	for _, t := range types {
		switch t {
		case "string":
			parts = append(parts, "string")
		case "number", "integer":
			parts = append(parts, "number")
		case "boolean":
			parts = append(parts, "boolean")
		case "null":
			parts = append(parts, "null")
		case "array":
			parts = append(parts, arrayOf(s, depth, indent))
		case "object":
			parts = append(parts, objectOf(s, depth, indent))
		default:
			parts = append(parts, "any")
		}
	}
	return strings.Join(parts, " | ")
}

func arrayOf(s *jsonschema.Schema, depth int, indent string) string {
	if s.Items == nil {
		return "any[]"
	}
	t := typeOf(s.Items, depth+1, indent)
	if strings.ContainsAny(t, "|&") {
		return "Array<" + t + ">"
	}
	return t + "[]"
}

func objectOf(s *jsonschema.Schema, depth int, indent string) string {
	if len(s.Properties) == 0 {
		if s.AdditionalProperties != nil {
			return "Record<string, " + typeOf(s.AdditionalProperties, depth+1, indent) + ">"
		}
		return "Record<string, unknown>"
	}
	inner := indent + "  "
	var b strings.Builder
	b.WriteString("{\n")
	for _, p := range sortedKeys(s.Properties) {
		ps := s.Properties[p]
		if ps != nil {
			comment(&b, inner, ps.Description)
		}
		opt := "?"
		if slices.Contains(s.Required, p) {
			opt = ""
		}
		fmt.Fprintf(&b, "%s%s%s: %s;\n", inner, member(p), opt, typeOf(ps, depth+1, inner))
	}
	b.WriteString(indent + "}")
	return b.String()
}

// comment writes a description as a /** */ comment that cannot end early.
func comment(b *strings.Builder, indent, text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	text = strings.ReplaceAll(truncate(text, maxDescription), "*/", "* /")
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		fmt.Fprintf(b, "%s/** %s */\n", indent, lines[0])
		return
	}
	fmt.Fprintf(b, "%s/**\n", indent)
	for _, l := range lines {
		fmt.Fprintf(b, "%s * %s\n", indent, strings.TrimRight(l, " \t\r"))
	}
	fmt.Fprintf(b, "%s */\n", indent)
}

var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// member writes a property name: as is when it is an identifier, quoted
// otherwise.
func member(name string) string {
	if identifier.MatchString(name) {
		return name
	}
	b, _ := json.Marshal(name)
	return string(b)
}

// literal writes a JSON value as a TypeScript literal type.
func literal(v any) string {
	b, err := json.Marshal(v)
	if err != nil || len(b) > 200 {
		return "any"
	}
	return string(b)
}

func sortedKeys(m map[string]*jsonschema.Schema) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

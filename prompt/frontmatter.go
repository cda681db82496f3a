package prompt

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"gopkg.in/yaml.v3"

	"github.com/llmkit/toolkit/internal/schemaguard"
)

// frontMatter is the YAML header of a prompt file.
type frontMatter struct {
	Name           string    `yaml:"name"`
	Title          string    `yaml:"title"`
	Description    string    `yaml:"description"`
	Model          string    `yaml:"model"`
	Provider       string    `yaml:"provider"`
	SystemPrompt   string    `yaml:"system_prompt"`
	Input          yaml.Node `yaml:"input"`
	Output         yaml.Node `yaml:"output"`
	Tools          []string  `yaml:"tools"`
	Thinking       bool      `yaml:"thinking"`
	ThinkingBudget *int      `yaml:"thinking_budget"`
	MaxTokens      *int      `yaml:"max_tokens"`
}

// fields lists the front matter keys, in the order the documentation gives
// them.
var fields = []string{
	"name", "title", "description", "model", "provider", "system_prompt",
	"input", "output", "tools", "thinking", "thinking_budget", "max_tokens",
}

// parseFrontMatter decodes the YAML front matter strictly: the top level is
// a mapping whose keys are among fields, each at most once.
func parseFrontMatter(src string) (*frontMatter, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return nil, fmt.Errorf("front matter: %s", oneLine(err))
	}
	fm := new(frontMatter)
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return fm, nil // empty front matter
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return fm, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("front matter (line %d): want a mapping of fields, found %s", root.Line, kindName(root))
	}
	seen := make(map[string]bool)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("front matter line %d: field names must be plain strings", k.Line)
		}
		key := k.Value
		known := false
		for _, f := range fields {
			if f == key {
				known = true
				break
			}
		}
		if !known {
			return nil, fmt.Errorf("front matter line %d: unknown field %q (known fields: %s)", k.Line, key, strings.Join(fields, ", "))
		}
		if seen[key] {
			return nil, fmt.Errorf("front matter line %d: field %q given twice", k.Line, key)
		}
		seen[key] = true
	}
	if err := root.Decode(fm); err != nil {
		return nil, fmt.Errorf("front matter: %s", oneLine(err))
	}
	return fm, nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "something else"
}

// schema is a schema of the front matter, resolved, with the plan that
// bounds the validation of a value when that depends on the value.
type schema struct {
	s    *jsonschema.Schema
	rs   *jsonschema.Resolved
	plan *schemaguard.Plan
}

// schemaFromYAML converts a JSON Schema written in YAML into a resolved
// schema, checked first as untrusted input (schemaguard: bounded size and
// depth, no $ref cycle). A missing or null node means no schema.
func schemaFromYAML(field string, n *yaml.Node) (schema, error) {
	if n.Kind == 0 || n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return schema{}, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return schema{}, fmt.Errorf("%s schema (line %d): %w", field, n.Line, err)
	}
	if err := checkTypes(v); err != nil {
		return schema{}, fmt.Errorf("%s schema (line %d): %w", field, n.Line, err)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return schema{}, fmt.Errorf("%s schema (line %d): not expressible as JSON: %w", field, n.Line, err)
	}
	s, plan, err := schemaguard.CheckJSON(data)
	if err != nil {
		return schema{}, fmt.Errorf("%s schema (line %d): %w", field, n.Line, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return schema{}, fmt.Errorf("%s schema (line %d): %w", field, n.Line, err)
	}
	return schema{s, rs, plan}, nil
}

// oneLine flattens a multi-line YAML error message.
func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.TrimPrefix(err.Error(), "yaml: ")), " ")
}

// jsonTypes are the values the "type" keyword allows.
var jsonTypes = map[string]bool{
	"null": true, "boolean": true, "object": true, "array": true,
	"number": true, "integer": true, "string": true,
}

// checkTypes reports a "type" keyword anywhere in a schema (given as
// decoded YAML) whose value is not a JSON type, such as a misspelt
// "strng", which would otherwise be accepted and match nothing. Values of
// keywords that hold instance data rather than schemas are not searched.
func checkTypes(v any) error {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			switch k {
			case "const", "enum", "default", "examples":
				continue
			case "type":
				var list []any
				switch t := e.(type) {
				case string:
					list = []any{t}
				case []any:
					list = t
				default:
					continue // a property named "type" under "properties"
				}
				for _, t := range list {
					if s, ok := t.(string); ok && !jsonTypes[s] {
						return fmt.Errorf("unknown type %q (want one of null, boolean, object, array, number, integer, string)", s)
					}
				}
				continue
			}
			if err := checkTypes(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := checkTypes(e); err != nil {
				return err
			}
		}
	}
	return nil
}

package skill

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/internal/frontmatter"
)

// Bounds of the Agent Skills specification's fields, in characters.
const (
	// MaxName bounds a skill's name.
	MaxName = 64
	// MaxDescription bounds a skill's description.
	MaxDescription = 1024
	// MaxCompatibility bounds the compatibility field.
	MaxCompatibility = 500
)

// Bounds of the front matter's YAML, past the byte bound of Limits.
const (
	maxNodes = 4096 // YAML nodes
	maxDepth = 32   // nesting of mappings and sequences
)

// Frontmatter is the front matter of a SKILL.md: the fields of the Agent
// Skills specification, checked, and every field the author wrote, as a
// JSON object, in Fields.
type Frontmatter struct {
	// Name is 1 to 64 characters: lowercase letters, digits and hyphens,
	// neither first nor last, never two together.
	Name string
	// Description says what the skill does and when to use it: 1 to 1024
	// characters.
	Description string
	// License, Compatibility (at most 500 characters) and AllowedTools
	// (space-separated, experimental) are optional.
	License, Compatibility, AllowedTools string
	// Metadata is the optional string-to-string map of the same name.
	Metadata map[string]string
	// Fields is the whole front matter as a JSON object (name and
	// description included), as SEP-2640's entries carry it.
	Fields map[string]any
}

// equal reports whether f and g hold the same fields.
func (f Frontmatter) equal(g Frontmatter) bool {
	return reflect.DeepEqual(normal(f.Fields), normal(g.Fields))
}

// normal returns m through a JSON round trip, so that numbers compare
// alike however they were decoded.
func normal(m map[string]any) any {
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	return v
}

// Parse splits a SKILL.md into its checked front matter and its body. The
// front matter must be present, within lim's byte bound, a YAML mapping
// without anchors or aliases, and hold the Agent Skills fields as the
// specification says. Errors wrap ErrBadParameter.
func Parse(md []byte, lim Limits) (Frontmatter, string, error) {
	lim = lim.orDefault()
	if !utf8.Valid(md) {
		return Frontmatter{}, "", fmt.Errorf("%w: %s is not UTF-8", errs.ErrBadParameter, FileName)
	}
	text := strings.ReplaceAll(string(md), "\r\n", "\n")
	// Look for the closing line only within the bound.
	head := text
	if len(head) > lim.MaxFrontmatter+8 {
		head = head[:lim.MaxFrontmatter+8]
	}
	fm, _, ok, err := frontmatter.Split(head)
	if !ok {
		return Frontmatter{}, "", fmt.Errorf("%w: %s has no front matter (a first line of \"---\")", errs.ErrBadParameter, FileName)
	}
	if err != nil {
		return Frontmatter{}, "", fmt.Errorf("%w: %s: %v (within its first %d bytes)", errs.ErrBadParameter, FileName, err, lim.MaxFrontmatter)
	}
	_, body, _, _ := frontmatter.Split(text)
	f, err := decode(fm)
	if err != nil {
		return Frontmatter{}, "", fmt.Errorf("%w: %s: %v", errs.ErrBadParameter, FileName, err)
	}
	return f, body, nil
}

// FromFields checks a front matter given as a JSON object (an SEP-2640
// entry's) and returns it. Errors wrap ErrBadParameter.
func FromFields(fields map[string]any) (Frontmatter, error) {
	f := Frontmatter{Fields: fields}
	if err := f.fill(); err != nil {
		return Frontmatter{}, fmt.Errorf("%w: front matter: %v", errs.ErrBadParameter, err)
	}
	return f, nil
}

// decode parses the YAML of a front matter.
func decode(src string) (Frontmatter, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return Frontmatter{}, fmt.Errorf("front matter: %s", strings.Join(strings.Fields(strings.TrimPrefix(err.Error(), "yaml: ")), " "))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return Frontmatter{}, fmt.Errorf("front matter: want a mapping of fields")
	}
	n := 0
	v, err := plain(doc.Content[0], 0, &n)
	if err != nil {
		return Frontmatter{}, fmt.Errorf("front matter: %v", err)
	}
	f := Frontmatter{Fields: v.(map[string]any)}
	if err := f.fill(); err != nil {
		return Frontmatter{}, err
	}
	return f, nil
}

// plain converts a YAML node into JSON values, refusing anchors and
// aliases (so no alias bomb expands), tags other than the core ones, and
// trees past maxNodes or maxDepth.
func plain(n *yaml.Node, depth int, count *int) (any, error) {
	if *count++; *count > maxNodes {
		return nil, fmt.Errorf("more than %d YAML nodes", maxNodes)
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return nil, fmt.Errorf("line %d: YAML anchors and aliases are not allowed", n.Line)
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
				return nil, fmt.Errorf("line %d: keys must be plain strings", k.Line)
			}
			if _, dup := m[k.Value]; dup {
				return nil, fmt.Errorf("line %d: key %q given twice", k.Line, k.Value)
			}
			v, err := plain(n.Content[i+1], depth+1, count)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := plain(c, depth+1, count)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str", "!!null", "!!bool", "!!int", "!!float":
		default:
			return nil, fmt.Errorf("line %d: tag %s is not allowed", n.Line, n.Tag)
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %v", n.Line, err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("line %d: unexpected YAML", n.Line)
}

// fill sets the typed fields of f from f.Fields and checks them.
func (f *Frontmatter) fill() error {
	str := func(key string, max int, required bool) (string, error) {
		v, ok := f.Fields[key]
		if !ok || v == nil {
			if required {
				return "", fmt.Errorf("field %q is required", key)
			}
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("field %q: want a string", key)
		}
		if n := utf8.RuneCountInString(s); (required && n == 0) || (max > 0 && n > max) {
			return "", fmt.Errorf("field %q: want 1 to %d characters, not %d", key, max, n)
		}
		return s, nil
	}
	var err error
	if f.Name, err = str("name", MaxName, true); err != nil {
		return err
	}
	if !validName(f.Name) {
		return errors.New(nameRule(f.Name))
	}
	if f.Description, err = str("description", MaxDescription, true); err != nil {
		return err
	}
	if f.License, err = str("license", 0, false); err != nil {
		return err
	}
	if f.Compatibility, err = str("compatibility", MaxCompatibility, false); err != nil {
		return err
	}
	if f.AllowedTools, err = str("allowed-tools", 0, false); err != nil {
		return err
	}
	f.Metadata = nil
	if v, ok := f.Fields["metadata"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("field %q: want a mapping of strings", "metadata")
		}
		f.Metadata = make(map[string]string, len(m))
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("field %q: key %q: want a string value", "metadata", k)
			}
			f.Metadata[k] = s
		}
	}
	f.Fields = maps.Clone(f.Fields)
	return nil
}

// CheckName checks a skill name against the Agent Skills specification:
// 1 to 64 lowercase letters, digits and hyphens, not starting or ending
// with a hyphen, without two hyphens in a row. Errors wrap
// ErrBadParameter.
func CheckName(name string) error {
	if !validName(name) {
		return fmt.Errorf("%w: %s", errs.ErrBadParameter, nameRule(name))
	}
	return nil
}

// validName reports whether name follows the rule of CheckName.
func validName(name string) bool {
	ok := name != "" && len(name) <= MaxName && name[0] != '-' && name[len(name)-1] != '-' && !strings.Contains(name, "--")
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
	}
	return ok
}

// nameRule says why name is not a skill name.
func nameRule(name string) string {
	return fmt.Sprintf("skill name %.80q: want 1 to %d lowercase letters, digits and single hyphens inside", name, MaxName)
}

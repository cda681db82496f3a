package main

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/policy"
)

// cannotUnmarshal matches yaml.v3's message for a value of the wrong type:
// the node's tag, its value (cut to 7 bytes and "..." when longer than 10;
// absent for lists and mappings) and the Go type.
var cannotUnmarshal = regexp.MustCompile("^cannot unmarshal (\\S+)(?: `(.*)`)? into (\\S+)$")

// yamlError rewrites a yaml.v3 error as "file:line: field: message" lines.
// root is the parsed document (nil for a syntax error), in which the field
// is found from the line and the value the message gives.
func yamlError(file string, root *yaml.Node, err error) error {
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	out := make([]error, 0, len(msgs))
	used := map[*yaml.Node]bool{} // two bad values alike on one line are two fields
	for _, m := range msgs {
		m = strings.TrimPrefix(m, "yaml: ")
		where, line := file, 0
		if sub := yamlLine.FindStringSubmatch(m); sub != nil {
			where, m = file+":"+sub[1], sub[2]
			line, _ = strconv.Atoi(sub[1])
		}
		if line == 0 && errors.Is(err, toolkit.ErrBadParameter) {
			// A value's own parser (an effect, a rate) refused it: yaml.v3
			// gives no position; the value it quotes tells the field.
			if path, n, ok := findQuoted(root, m); ok {
				where, m = fmt.Sprintf("%s:%d", file, n.Line), fieldName(path)+": "+plain(err)
			}
		}
		if sub := unknownField.FindStringSubmatch(m); sub != nil {
			if path, ok := findKey(root, line, sub[1]); ok {
				m = fieldName(path) + ": unknown field"
			} else {
				m = fmt.Sprintf("unknown field %q", sub[1])
			}
			if known := yamlFields(sub[2]); known != "" {
				m += " (known: " + known + ")"
			}
		} else if sub := cannotUnmarshal.FindStringSubmatch(m); sub != nil {
			if path, n, ok := findValue(root, line, sub[1], sub[2], used); ok {
				used[n] = true
				m = fmt.Sprintf("%s: cannot use %s as %s", fieldName(path), describeNode(n), describeType(sub[3]))
			}
		}
		out = append(out, fmt.Errorf("%s: %s", where, m))
	}
	return errors.Join(out...)
}

// configTypes are the configuration's types, by the Go name yaml.v3 gives
// them.
var configTypes = map[string]any{
	"main.Config": Config{}, "main.Server": Server{}, "main.Timeouts": Timeouts{},
	"main.ToolFilter": ToolFilter{}, "main.Auth": Auth{}, "main.BearerAuth": BearerAuth{},
	"main.JWTAuth": JWTAuth{}, "main.OAuth": OAuth{}, "main.ToolSearch": ToolSearch{}, "main.CodeMode": CodeMode{}, "main.WarmWorkers": WarmWorkers{}, "main.InputState": InputState{}, "main.PolicyConfig": PolicyConfig{}, "main.AuditLog": AuditLog{},
	"policy.Rule": policy.Rule{}, "policy.Limit": policy.Limit{}, "policy.Annotations": policy.Annotations{}, "policy.Condition": policy.Condition{},
}

// yamlFields lists the fields of one of the configuration's types, by
// the Go name yaml.v3 gives it.
func yamlFields(goType string) string {
	v, ok := configTypes[goType]
	if !ok {
		return ""
	}
	var names []string
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

// walkYAML calls fn for every value node of the document under root, with
// its path (mapping keys and sequence indexes) and, for a mapping value,
// its key node. It stops when fn returns false.
func walkYAML(root *yaml.Node, fn func(path []any, key, n *yaml.Node) bool) {
	if root == nil {
		return
	}
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	var walk func(path []any, key, n *yaml.Node) bool
	walk = func(path []any, key, n *yaml.Node) bool {
		if !fn(path, key, n) {
			return false
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if !walk(append(slices.Clip(path), k.Value), k, n.Content[i+1]) {
					return false
				}
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				if !walk(append(slices.Clip(path), i), nil, c) {
					return false
				}
			}
		}
		return true
	}
	walk(nil, nil, n)
}

// quoted matches the first quoted string of a message.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// findQuoted returns the path and node of the first scalar value of the
// document that the message msg quotes.
func findQuoted(root *yaml.Node, msg string) (found []any, node *yaml.Node, ok bool) {
	q := quoted.FindString(msg)
	if q == "" {
		return nil, nil, false
	}
	value, err := strconv.Unquote(q)
	if err != nil {
		return nil, nil, false
	}
	walkYAML(root, func(path []any, _, n *yaml.Node) bool {
		if n.Kind == yaml.ScalarNode && n.Value == value {
			found, node, ok = path, n, true
		}
		return !ok
	})
	return found, node, ok
}

// findKey returns the path of the mapping key name on line.
func findKey(root *yaml.Node, line int, name string) (found []any, ok bool) {
	walkYAML(root, func(path []any, key, _ *yaml.Node) bool {
		if key != nil && key.Line == line && key.Value == name {
			found, ok = path, true
		}
		return !ok
	})
	return found, ok
}

// findValue returns the path and node of the value on line that yaml.v3
// described by tag and value (see cannotUnmarshal), skipping those in
// used: the deepest, as a mapping or list holds the bad value rather than
// is it, and the first of those in the document's order.
func findValue(root *yaml.Node, line int, tag, value string, used map[*yaml.Node]bool) (found []any, node *yaml.Node, ok bool) {
	walkYAML(root, func(path []any, _, n *yaml.Node) bool {
		if n.Line != line || used[n] || n.ShortTag() != tag && n.Tag != tag || ok && len(path) <= len(found) {
			return true
		}
		switch n.Kind {
		case yaml.ScalarNode:
			if cut, short := strings.CutSuffix(value, "..."); n.Value != value && !(short && strings.HasPrefix(n.Value, cut)) {
				return true
			}
		case yaml.MappingNode, yaml.SequenceNode:
		default:
			return true
		}
		found, node, ok = path, n, true
		return true
	})
	return found, node, ok
}

// describeNode names a YAML value in a message.
func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

// describeType names, in a message, the Go type a value must fit.
func describeType(goType string) string {
	switch goType {
	case "time.Duration", "*time.Duration":
		return "a duration (like 30s or 1m30s)"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "int", "int64", "uint", "uint64":
		return "a whole number"
	case "[]string":
		return "a list of strings"
	case "map[string]string":
		return "a mapping of strings"
	case "main.ToolFilter", "main.Timeouts", "main.Server", "main.Config",
		"main.Auth", "main.BearerAuth", "main.JWTAuth", "main.OAuth",
		"*main.Auth", "*main.BearerAuth", "*main.JWTAuth", "*main.OAuth",
		"main.PolicyConfig", "*main.PolicyConfig", "main.AuditLog", "*main.AuditLog",
		"policy.Rule", "policy.Limit", "policy.Annotations", "policy.Condition":
		return "a mapping of fields"
	case "toolkit.Effect":
		return "allow, deny or ask"
	case "policy.Rate":
		return "a rate (like 10/s or 100/m)"
	case "*bool":
		return "true or false"
	}
	if strings.HasPrefix(goType, "[]") {
		return "a list"
	}
	return goType
}

// lineOf returns the line of the node at path (mapping keys and sequence
// indexes) in the document root, or of its nearest ancestor present.
func lineOf(root *yaml.Node, path ...any) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, p := range path {
		switch k := p.(type) {
		case string:
			if n.Kind != yaml.MappingNode {
				return line
			}
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					line, n, found = n.Content[i].Line, n.Content[i+1], true
					break
				}
			}
			if !found {
				return line
			}
		case int:
			if n.Kind != yaml.SequenceNode || k < 0 || k >= len(n.Content) {
				return line
			}
			n = n.Content[k]
			line = n.Line
		}
	}
	return line
}

// fieldName spells a path as a field reference: servers[1].url.
func fieldName(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch k := p.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(k)
		case int:
			fmt.Fprintf(&b, "[%d]", k)
		}
	}
	if b.Len() == 0 {
		return "(top)"
	}
	return b.String()
}

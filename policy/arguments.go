package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/llmkit/toolkit"
)

// Bounds of argument conditions.
const (
	// maxPointerTokens bounds the depth of a JSON Pointer.
	maxPointerTokens = 32
	// maxArgumentDepth bounds the nesting of the arguments a condition
	// reads; deeper arguments make every condition unknown.
	maxArgumentDepth = 64
)

// Condition is a test on one value of a call's arguments, found by a JSON
// Pointer (RFC 6901: "/path/to/field", "/items/0"; "" is the whole
// input). Exactly one of Equals, Matches and Present is given.
type Condition struct {
	// Path is the JSON Pointer of the value.
	Path string `json:"path" yaml:"path"`
	// Equals holds when the value is present and equal to this JSON value
	// (numbers compare by value: 1 equals 1.0).
	Equals any `json:"equals,omitempty" yaml:"equals,omitempty"`
	// Matches holds when the value is a string that matches this glob
	// pattern ('*', '?', '\' as in the rule's name patterns).
	Matches *string `json:"matches,omitempty" yaml:"matches,omitempty"`
	// Present holds when the value's presence is as given.
	Present *bool `json:"present,omitempty" yaml:"present,omitempty"`
}

// condition is a compiled Condition.
type condition struct {
	path    []string
	equals  any // decoded from JSON, so it compares with decoded arguments
	hasEq   bool
	matches *glob
	present *bool
}

// compileCondition checks and compiles c.
func compileCondition(c Condition) (condition, error) {
	path, err := parsePointer(c.Path)
	if err != nil {
		return condition{}, fmt.Errorf("path: %w", err)
	}
	out := condition{path: path}
	given := 0
	if c.Equals != nil {
		given++
		b, err := json.Marshal(c.Equals)
		if err != nil {
			return condition{}, fmt.Errorf("%w: equals: %v", toolkit.ErrBadParameter, err)
		}
		if out.equals, err = decodeArguments(b); err != nil {
			return condition{}, fmt.Errorf("%w: equals: %v", toolkit.ErrBadParameter, err)
		}
		out.hasEq = true
	}
	if c.Matches != nil {
		given++
		g, err := compileGlob(*c.Matches)
		if err != nil {
			return condition{}, fmt.Errorf("matches: %w", err)
		}
		out.matches = &g
	}
	if c.Present != nil {
		given++
		p := *c.Present
		out.present = &p
	}
	if given != 1 {
		return condition{}, fmt.Errorf("%w: give one of equals, matches and present (%d given)", toolkit.ErrBadParameter, given)
	}
	return out, nil
}

// holds reports whether the condition holds for the decoded arguments.
func (c *condition) holds(args any) bool {
	v, found := lookupPointer(args, c.path)
	switch {
	case c.present != nil:
		return found == *c.present
	case !found:
		return false
	case c.matches != nil:
		s, ok := v.(string)
		return ok && c.matches.match(s)
	}
	return reflect.DeepEqual(v, c.equals)
}

// parsePointer splits a JSON Pointer into its unescaped reference tokens.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("%w: JSON Pointer %q must be empty or start with /", toolkit.ErrBadParameter, truncate(p))
	}
	parts := strings.Split(p[1:], "/")
	if len(parts) > maxPointerTokens {
		return nil, fmt.Errorf("%w: JSON Pointer %q has more than %d tokens", toolkit.ErrBadParameter, truncate(p), maxPointerTokens)
	}
	for i, s := range parts {
		if !strings.Contains(s, "~") {
			continue
		}
		var b strings.Builder
		for j := 0; j < len(s); j++ {
			if s[j] != '~' {
				b.WriteByte(s[j])
				continue
			}
			if j+1 == len(s) || (s[j+1] != '0' && s[j+1] != '1') {
				return nil, fmt.Errorf("%w: JSON Pointer %q: ~ must be followed by 0 or 1", toolkit.ErrBadParameter, truncate(p))
			}
			if s[j+1] == '0' {
				b.WriteByte('~')
			} else {
				b.WriteByte('/')
			}
			j++
		}
		parts[i] = b.String()
	}
	return parts, nil
}

// lookupPointer returns the value at path in v.
func lookupPointer(v any, path []string) (any, bool) {
	for _, tok := range path {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return nil, false
			}
		case []any:
			i, ok := arrayIndex(tok)
			if !ok || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// arrayIndex parses an RFC 6901 array index: digits without leading zeros.
func arrayIndex(tok string) (int, bool) {
	if tok == "" || len(tok) > 9 || (len(tok) > 1 && tok[0] == '0') {
		return 0, false
	}
	n, err := strconv.Atoi(tok)
	if err != nil || n < 0 || strings.ContainsAny(tok, "+-") {
		return 0, false
	}
	return n, true
}

// errDuplicateKey reports an object with a key twice: the policy and the
// tool could read different values, so no condition holds or fails on it.
var errDuplicateKey = errors.New("an object has the same key twice")

// decodeArguments decodes JSON as encoding/json would into any, but
// refuses objects with a key twice, nesting deeper than
// maxArgumentDepth, and anything after the value.
func decodeArguments(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return normalize(v), nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxArgumentDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxArgumentDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				if _, dup := m[k]; dup {
					return nil, errDuplicateKey
				}
				if m[k], err = decodeValue(dec, depth+1); err != nil {
					return nil, err
				}
			}
			_, err := dec.Token() // '}'
			return m, err
		case '[':
			var a []any
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if a == nil {
				a = []any{}
			}
			_, err := dec.Token() // ']'
			return a, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}

// normalize turns json.Numbers into float64, as encoding/json decodes
// numbers into any, so that equal numbers compare equal.
func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return x.String()
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	}
	return v
}

// truncate cuts s for a message.
func truncate(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

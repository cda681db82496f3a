package genai

import (
	"fmt"
	"strconv"
	"strings"
)

// Bounds of a streamed argument's JSON path.
const (
	maxPathDepth = 32
	maxPathIndex = 4096
)

// pathStep is one step of a JSON path: an object member or an array
// index.
type pathStep struct {
	key   string
	index int
	isKey bool
}

// parsePath parses the JSON paths of streamed function call arguments
// (RFC 9535, the subset that names one value): "$", then steps ".name",
// "['name']" or "[\"name\"]" (with \\, \' and \" escapes) and "[N]".
func parsePath(p string) ([]pathStep, error) {
	if !strings.HasPrefix(p, "$") {
		return nil, fmt.Errorf("%w %q: does not start with $", ErrStreamedArgument, p)
	}
	var steps []pathStep
	s := p[1:]
	for s != "" {
		if len(steps) >= maxPathDepth {
			return nil, fmt.Errorf("%w %q: deeper than %d", ErrStreamedArgument, p, maxPathDepth)
		}
		switch s[0] {
		case '.':
			s = s[1:]
			n := strings.IndexAny(s, ".[")
			if n < 0 {
				n = len(s)
			}
			if n == 0 {
				return nil, fmt.Errorf("%w %q: empty member name", ErrStreamedArgument, p)
			}
			steps = append(steps, pathStep{key: s[:n], isKey: true})
			s = s[n:]
		case '[':
			if len(s) > 1 && (s[1] == '\'' || s[1] == '"') {
				key, rest, err := quoted(s[1:])
				if err != nil || !strings.HasPrefix(rest, "]") {
					return nil, fmt.Errorf("%w %q: bad quoted member name", ErrStreamedArgument, p)
				}
				steps = append(steps, pathStep{key: key, isKey: true})
				s = rest[1:]
				continue
			}
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return nil, fmt.Errorf("%w %q: unclosed [", ErrStreamedArgument, p)
			}
			i, err := strconv.Atoi(s[1:end])
			if err != nil || i < 0 || i > maxPathIndex {
				return nil, fmt.Errorf("%w %q: bad index %q", ErrStreamedArgument, p, s[1:end])
			}
			steps = append(steps, pathStep{index: i})
			s = s[end+1:]
		default:
			return nil, fmt.Errorf("%w %q: unexpected %q", ErrStreamedArgument, p, s[0])
		}
	}
	return steps, nil
}

// quoted reads a quoted name at the start of s and returns it and what
// follows the closing quote.
func quoted(s string) (name, rest string, err error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == q:
			return b.String(), s[i+1:], nil
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		default:
			b.WriteByte(c)
		}
	}
	return "", "", fmt.Errorf("unclosed quote")
}

// setPath sets the value at path in args, making the objects and arrays
// on the way.
func setPath(args map[string]any, path string, v any) error {
	steps, err := parsePath(path)
	if err != nil {
		return err
	}
	if len(steps) == 0 || !steps[0].isKey {
		return fmt.Errorf("%w %q: does not name an argument", ErrStreamedArgument, path)
	}
	var cur any = args
	set := func(x any) {} // replaces cur in its parent
	for i, st := range steps {
		last := i == len(steps)-1
		if st.isKey {
			m, ok := cur.(map[string]any)
			if !ok {
				if cur != nil {
					return fmt.Errorf("%w %q: %s is not an object", ErrStreamedArgument, path, st.key)
				}
				m = map[string]any{}
				set(m)
			}
			if last {
				m[st.key] = v
				return nil
			}
			key := st.key
			cur, set = m[key], func(x any) { m[key] = x }
			continue
		}
		l, ok := cur.([]any)
		if !ok && cur != nil {
			return fmt.Errorf("%w %q: not an array at step %d", ErrStreamedArgument, path, i)
		}
		for len(l) <= st.index {
			l = append(l, nil)
		}
		set(l)
		if last {
			l[st.index] = v
			return nil
		}
		idx, arr := st.index, l
		cur, set = l[st.index], func(x any) { arr[idx] = x }
	}
	return nil
}

package schemaguard

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/llmkit/toolkit/internal/errs"
)

// An Error says why a schema, or a value checked by a Plan, is refused.
// It wraps errs.ErrBadParameter; its text does not repeat it.
type Error struct {
	msg  string
	path []string // Plan.Check: the place in the value, innermost first
}

// Error returns the reason, with the place in the value when a Plan
// refused it.
func (e *Error) Error() string {
	if e.path == nil {
		return e.msg
	}
	b := []byte("#")
	for k := len(e.path) - 1; k >= 0; k-- {
		b = append(b, '/')
		b = append(b, escapePointer(e.path[k])...)
		if len(b) > maxPathLen {
			b = append(b[:maxPathLen], "..."...)
			break
		}
	}
	return fmt.Sprintf("%s (at %s)", e.msg, b)
}

// Unwrap returns errs.ErrBadParameter.
func (e *Error) Unwrap() error { return errs.ErrBadParameter }

// Errorf returns an *Error: for the callers' own reasons to refuse a
// schema, worded like the guard's.
func Errorf(format string, args ...any) error {
	return &Error{msg: fmt.Sprintf(format, args...)}
}

// errorf is Errorf.
var errorf = Errorf

// maxPathLen bounds the JSON Pointers errors show.
const maxPathLen = 200

// path returns the JSON Pointer of node i ("#" for the root), cut to
// maxPathLen bytes.
func (g *graph) path(i int32) string {
	var segs []string
	for ; i > 0; i = g.nodes[i].parent {
		segs = append(segs, g.nodes[i].seg.String())
	}
	var b strings.Builder
	b.WriteByte('#')
	for k := len(segs) - 1; k >= 0; k-- {
		b.WriteByte('/')
		b.WriteString(segs[k])
		if b.Len() > maxPathLen {
			return b.String()[:maxPathLen] + "..."
		}
	}
	return b.String()
}

// errorAt returns an error about the subschema under node parent at seg
// (parent itself when seg is empty).
func (g *graph) errorAt(parent int32, seg segment, format string, args ...any) error {
	where := "#"
	if parent != none {
		where = g.path(parent)
		if seg.kw != "" {
			where += "/" + seg.String()
		}
	}
	if len(where) > maxPathLen {
		where = where[:maxPathLen] + "..."
	}
	return errorf("%s (at %s)", fmt.Sprintf(format, args...), where)
}

// wrapAt adds the place of node i to err, an *Error.
func (g *graph) wrapAt(i int32, err error) error {
	return errorf("%v (at %s)", err, g.path(i))
}

// valueSizer measures the JSON values a schema holds and checks their
// nesting.
type valueSizer struct {
	n   int
	err error
}

// value adds the size of v, found under keyword kw at the given depth.
// Values of types JSON does not produce count as small leaves.
func (vs *valueSizer) value(kw string, v any, depth int) {
	if vs.err != nil {
		return
	}
	if depth > MaxValueDepth {
		vs.err = errorf("the value of %q nests more than %d levels deep", kw, MaxValueDepth)
		return
	}
	if vs.n > MaxBytes {
		vs.err = errorf("the schema is larger than %d bytes", MaxBytes)
		return
	}
	switch x := v.(type) {
	case string:
		vs.n += len(x) + 2
	case json.Number:
		vs.n += len(x)
	case json.RawMessage:
		vs.n += len(x)
		if jsonDepth(x, MaxValueDepth) > MaxValueDepth {
			vs.err = errorf("the value of %q nests more than %d levels deep", kw, MaxValueDepth)
		}
	case []any:
		vs.n += 2
		for _, e := range x {
			vs.value(kw, e, depth+1)
			vs.n++
		}
	case map[string]any:
		vs.n += 2
		for k, e := range x {
			vs.n += len(k) + 4
			vs.value(kw, e, depth+1)
		}
	default:
		vs.n += 8
	}
}

// jsonDepth returns the nesting depth of the JSON text data: the most
// objects and arrays open at once. It stops counting past limit
// (returning limit+1) and does not check that data is valid JSON.
func jsonDepth(data []byte, limit int) int {
	d, _ := jsonShape(data, limit, -1)
	return d
}

// jsonShape returns the nesting depth of the JSON text data and the sum,
// over its bytes, of the objects and arrays each is in. It stops past
// either limit (a negative weightLimit is none), returning a value over
// it, and does not check that data is valid JSON.
func jsonShape(data []byte, limit, weightLimit int) (depth, weight int) {
	cur, most := 0, 0
	inString, escaped := false, false
	for i, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			weight += cur
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			cur++
			if cur > most {
				most = cur
				if most > limit {
					return limit + 1, weight
				}
			}
		case '}', ']':
			if cur > 0 {
				cur--
			}
		}
		weight += cur
		if weightLimit >= 0 && weight > weightLimit && i&1023 == 0 {
			return most, weight
		}
	}
	return most, weight
}

package prompt

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/google/jsonschema-go/jsonschema"
)

// Limits that keep rendering bounded whatever the template and input.
const (
	// MaxRenderSize is the largest rendered message, in bytes.
	MaxRenderSize = 8 << 20
	// MaxRangeIterations is the most loop iterations ({{ range }}) one
	// rendering may run, over all loops together.
	MaxRangeIterations = 100_000
)

// Names of the range guards, the functions appended to every range
// pipeline; long and unlikely, so they do not clash with names a template
// author would choose.
const (
	rangeOne = "_prompt_range_values"
	rangeTwo = "_prompt_range_pairs"
	// printGuard ends the pipeline of every action that prints: it refuses
	// a value that is absent or null (see printValue).
	printGuard = "_prompt_print_value"
)

// funcs are the functions available to prompt templates.
var funcs = template.FuncMap{
	"json":     jsonFunc,
	"default":  defaultFunc,
	"join":     joinFunc,
	"upper":    textFunc("upper", strings.ToUpper),
	"lower":    textFunc("lower", strings.ToLower),
	"trim":     textFunc("trim", strings.TrimSpace),
	printGuard: printValue,
	// Placeholders; each rendering binds its own (see execute).
	rangeOne: func(v any) any { return v },
	rangeTwo: func(v any) any { return v },
}

// parseTemplate parses a prompt body. Missing map keys are errors when the
// template runs. Sub-templates are refused: with them a template could
// call itself and run for ever. Every {{ range }} pipeline gets a final
// command that counts the iterations against MaxRangeIterations, and every
// action that prints gets one that refuses to print no value.
func parseTemplate(name, body string) (*template.Template, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(funcs).Parse(body)
	if err != nil {
		return nil, err
	}
	if len(t.Templates()) > 1 {
		return nil, errors.New(`template: sub-templates ({{ define }}, {{ block }}) are not supported`)
	}
	if t.Tree == nil || t.Root == nil {
		return t, nil
	}
	if err := guardNodes(t.Tree, t.Root); err != nil {
		return nil, err
	}
	return t, nil
}

// guardNodes appends the range guard to the pipeline of every range node
// under n, and the print guard to every action that prints, and refuses
// {{ template }} calls.
func guardNodes(tree *parse.Tree, n parse.Node) error {
	switch n := n.(type) {
	case *parse.ActionNode:
		if len(n.Pipe.Decl) > 0 {
			return nil // {{ $x := ... }} and {{ $x = ... }} print nothing
		}
		src := n.Pipe.String()
		id := parse.NewIdentifier(printGuard).SetTree(tree).SetPos(n.Pipe.Pos)
		arg := &parse.StringNode{NodeType: parse.NodeString, Pos: n.Pipe.Pos, Quoted: strconv.Quote(src), Text: src}
		n.Pipe.Cmds = append(n.Pipe.Cmds, &parse.CommandNode{NodeType: parse.NodeCommand, Pos: n.Pipe.Pos, Args: []parse.Node{id, arg}})
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := guardNodes(tree, c); err != nil {
				return err
			}
		}
	case *parse.IfNode:
		return guardBranch(tree, &n.BranchNode)
	case *parse.WithNode:
		return guardBranch(tree, &n.BranchNode)
	case *parse.RangeNode:
		guard := rangeOne
		if len(n.Pipe.Decl) > 1 {
			guard = rangeTwo
		}
		id := parse.NewIdentifier(guard).SetTree(tree).SetPos(n.Pipe.Pos)
		n.Pipe.Cmds = append(n.Pipe.Cmds, &parse.CommandNode{NodeType: parse.NodeCommand, Pos: n.Pipe.Pos, Args: []parse.Node{id}})
		return guardBranch(tree, &n.BranchNode)
	case *parse.TemplateNode:
		loc, _ := tree.ErrorContext(n)
		return fmt.Errorf("template: %s: {{ template }} is not supported", loc)
	}
	return nil
}

func guardBranch(tree *parse.Tree, b *parse.BranchNode) error {
	if err := guardNodes(tree, b.List); err != nil {
		return err
	}
	return guardNodes(tree, b.ElseList)
}

// execute renders t with data, bounding loops and output.
func execute(t *template.Template, data any) (string, error) {
	t, err := t.Clone()
	if err != nil {
		return "", err
	}
	b := &budget{left: MaxRangeIterations}
	t.Funcs(template.FuncMap{rangeOne: b.values, rangeTwo: b.pairs})
	var out limitedBuilder
	err = t.Execute(&out, data)
	if b.err != nil {
		return "", b.err
	}
	if err != nil {
		return "", err
	}
	return out.String(), nil
}

// errTooManyIterations reports a rendering that ran out of loop budget.
var errTooManyIterations = fmt.Errorf("template loops ran more than %d times", MaxRangeIterations)

// budget counts the loop iterations of one rendering. The range guards
// turn what a range walks over into iterators that stop, and record
// errTooManyIterations, when the budget runs out.
type budget struct {
	left int
	err  error
}

func (b *budget) tick() bool {
	if b.left == 0 {
		b.err = errTooManyIterations
		return false
	}
	b.left--
	return true
}

// values is the guard of a range with at most one variable: it iterates
// over the elements of a list, the values of a map in key order, or 0..n-1.
// Anything else is returned unchanged for the range to handle.
func (b *budget) values(v any) any {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		return iter.Seq[any](func(yield func(any) bool) {
			for i := 0; i < rv.Len() && b.tick(); i++ {
				if !yield(rv.Index(i).Interface()) {
					return
				}
			}
		})
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return v
		}
		keys := sortedKeys(rv)
		return iter.Seq[any](func(yield func(any) bool) {
			for _, k := range keys {
				if !b.tick() || !yield(rv.MapIndex(k).Interface()) {
					return
				}
			}
		})
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return b.upTo(uint64(max(rv.Int(), 0)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return b.upTo(rv.Uint())
	}
	return v
}

// upTo iterates over 0..n-1 within the budget.
func (b *budget) upTo(n uint64) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := uint64(0); i < n && b.tick(); i++ {
			if !yield(int(i)) {
				return
			}
		}
	}
}

// pairs is the guard of a range with two variables: index and element of a
// list, or key and value of a map in key order.
func (b *budget) pairs(v any) any {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		return iter.Seq2[int, any](func(yield func(int, any) bool) {
			for i := 0; i < rv.Len() && b.tick(); i++ {
				if !yield(i, rv.Index(i).Interface()) {
					return
				}
			}
		})
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return v
		}
		keys := sortedKeys(rv)
		return iter.Seq2[string, any](func(yield func(string, any) bool) {
			for _, k := range keys {
				if !b.tick() || !yield(k.String(), rv.MapIndex(k).Interface()) {
					return
				}
			}
		})
	}
	return v
}

func sortedKeys(m reflect.Value) []reflect.Value {
	keys := m.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
	return keys
}

// number is how a JSON number reaches a template: a float64 that prints as
// JSON does (1000000, not 1e+06).
type number float64

// String formats n as encoding/json would.
func (n number) String() string {
	f := float64(n)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	b, _ := json.Marshal(f)
	return string(b)
}

// templateData converts a decoded JSON value for the template: numbers
// become number values; everything else stays as decoded.
func templateData(v any) any {
	switch v := v.(type) {
	case float64:
		return number(v)
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = templateData(e)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = templateData(e)
		}
		return s
	}
	return v
}

// declareProperties sets every property that schema s declares but the
// object v lacks to nil, recursively, so a template can test or default an
// optional field while a name the schema does not know is still an error.
// v must be a fresh value from templateData: it is changed in place.
func declareProperties(v any, s *jsonschema.Schema) {
	if s == nil {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		for name, ps := range s.Properties {
			if e, ok := v[name]; ok {
				declareProperties(e, ps)
			} else {
				v[name] = nil
			}
		}
	case []any:
		if s.Items != nil {
			for _, e := range v {
				declareProperties(e, s.Items)
			}
		}
	}
}

// errNoValue reports an attempt to print a value that is absent or null.
var errNoValue = errors.New("no value: the input omits it or it is null (test it with if or with, or give a fallback with default)")

// printValue is the print guard: it returns v unless v is nil, which is
// what an action sees for a property the input schema declares but the
// input omits, or for a JSON null. text/template would print "<no value>".
func printValue(src string, v any) (any, error) {
	if v == nil {
		return nil, fmt.Errorf("{{ %s }}: %w", src, errNoValue)
	}
	return v, nil
}

// textFunc makes one of the text functions (upper, lower, trim): f applied
// to v as text. Like printing, it refuses a value that is absent or null.
func textFunc(name string, f func(string) string) func(any) (string, error) {
	return func(v any) (string, error) {
		if v == nil {
			return "", fmt.Errorf("%s: %w", name, errNoValue)
		}
		return f(toString(v)), nil
	}
}

// jsonFunc marshals v as JSON.
func jsonFunc(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// defaultFunc returns v unless it is nil or empty (an empty string, slice,
// array or map), in which case it returns fallback. Zero numbers and false
// are values, not empty.
func defaultFunc(fallback, v any) any {
	if v == nil {
		return fallback
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String, reflect.Slice, reflect.Array, reflect.Map:
		if rv.Len() == 0 {
			return fallback
		}
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return fallback
		}
	}
	return v
}

// joinFunc joins the elements of any slice or array, each formatted as
// text, with sep. A nil list joins to "".
func joinFunc(list any, sep string) (string, error) {
	if list == nil {
		return "", nil
	}
	rv := reflect.ValueOf(list)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return "", fmt.Errorf("join: want a list, got %T", list)
	}
	parts := make([]string, rv.Len())
	for i := range parts {
		parts[i] = toString(rv.Index(i).Interface())
	}
	return strings.Join(parts, sep), nil
}

// toString formats v as text; nil is "".
func toString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case fmt.Stringer:
		return v.String()
	}
	return fmt.Sprint(v)
}

// errTooLarge reports a rendering that outgrew MaxRenderSize.
var errTooLarge = fmt.Errorf("rendered prompt exceeds %d bytes", MaxRenderSize)

// limitedBuilder is a strings.Builder that refuses to grow past
// MaxRenderSize, which stops the template.
type limitedBuilder struct{ strings.Builder }

func (b *limitedBuilder) Write(p []byte) (int, error) {
	if b.Len()+len(p) > MaxRenderSize {
		return 0, errTooLarge
	}
	return b.Builder.Write(p)
}

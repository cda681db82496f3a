package schemaguard

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"
)

// A Plan bounds the validation of values against one schema whose cost
// depends on the value (see the package documentation). It is immutable
// and safe for concurrent use.
type Plan struct {
	cw []int64
	lp []int32
	// closure holds, for each node where a part of a value starts to be
	// checked (the root and every subschema that checks a member or an
	// element), the subschemas that check that part, with the number of
	// paths by which each is reached.
	closure map[int32][]entry
	// parts holds, for each node of a closure, its subschemas that check
	// parts of a value.
	parts map[int32]*parts
}

// parts are the subschemas of a node that check the parts of a value, as
// a Plan follows them.
type parts struct {
	props       map[string]int32 // properties
	patterns    []patternEdge    // patternProperties
	additional  int32            // additionalProperties
	unevalProps int32            // unevaluatedProperties
	propNames   int32            // propertyNames (checks the member names)
	prefix      []int32          // prefixItems, or an items array (draft-07)
	rest        int32            // items after prefix (draft-07: additionalItems)
	contains    int32
	unevalItems int32
}

// partsOf returns the parts of node i.
func (g *graph) partsOf(i int32) (*parts, error) {
	s := g.nodes[i].s
	at := func(c *jsonschema.Schema) int32 {
		if c == nil {
			return none
		}
		return g.index[c]
	}
	p := &parts{
		additional: at(s.AdditionalProperties), unevalProps: at(s.UnevaluatedProperties),
		propNames: at(s.PropertyNames), contains: at(s.Contains), unevalItems: at(s.UnevaluatedItems),
	}
	if len(s.Properties) > 0 {
		p.props = make(map[string]int32, len(s.Properties))
		for k, c := range s.Properties {
			p.props[k] = g.index[c]
		}
	}
	var err error
	if p.patterns, err = g.patterns(i); err != nil {
		return nil, err
	}
	prefix, rest := g.items(s)
	for _, c := range prefix {
		p.prefix = append(p.prefix, g.index[c])
	}
	p.rest = at(rest)
	return p, nil
}

// entry is a subschema and the number of times a part of a value is
// checked against it.
type entry struct {
	node int32
	mult int64
}

// newPlan computes the closures of the starting points.
func newPlan(a *analysis) (*Plan, error) {
	g := a.g
	p := &Plan{cw: a.cw, lp: a.lp, closure: map[int32][]entry{}, parts: map[int32]*parts{}}
	starts := []int32{0}
	for i := range g.nodes {
		if a.reachable[i] {
			g.nodes[i].consuming(func(t int32) { starts = append(starts, t) })
		}
	}
	total := 0
	for _, s := range starts {
		if _, done := p.closure[s]; done {
			continue
		}
		c := a.closureOf(s)
		total += len(c)
		if total > maxPlanEntries {
			return nil, errorf("the schema's $refs and combinators are too intricate to bound (more than %d paths to keep)", maxPlanEntries)
		}
		p.closure[s] = c
		for _, e := range c {
			if p.parts[e.node] == nil {
				pp, err := g.partsOf(e.node)
				if err != nil {
					return nil, err
				}
				p.parts[e.node] = pp
			}
		}
	}
	return p, nil
}

// closureOf returns the nodes that check the same value as node s, s
// included, each with the number of in-place paths from s to it. The
// in-place graph has no cycle and every count is at most cw[s] <= MaxWork.
func (a *analysis) closureOf(s int32) []entry {
	g := a.g
	// Topological order of the nodes reachable from s (reverse postorder).
	var order []int32
	seen := map[int32]bool{s: true}
	type frame struct {
		node int32
		next int
	}
	stack := []frame{{node: s}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		out := g.nodes[f.node].inPlaceEdges()
		if f.next == len(out) {
			order = append(order, f.node)
			stack = stack[:len(stack)-1]
			continue
		}
		t := out[f.next]
		f.next++
		if !seen[t] {
			seen[t] = true
			stack = append(stack, frame{node: t})
		}
	}
	mult := make(map[int32]int64, len(order))
	mult[s] = 1
	out := make([]entry, 0, len(order))
	for k := len(order) - 1; k >= 0; k-- {
		i := order[k]
		m := mult[i]
		out = append(out, entry{i, m})
		for _, t := range g.nodes[i].inPlaceEdges() {
			mult[t] = addCap(mult[t], m, MaxWork)
		}
	}
	return out
}

// Check reports whether validating v (a value as encoding/json decodes
// into an any) against the plan's schema stays within the bounds: no part
// of v checked at a cost of more than MaxWork, v nested at most
// MaxInstanceDepth levels where subschemas apply, validation at most
// MaxNesting subschemas deep. The error wraps errs.ErrBadParameter and
// gives the JSON Pointer of the part of v at fault. A nil Plan accepts
// every value.
func (p *Plan) Check(v any) error {
	if p == nil {
		return nil
	}
	w := walker{p: p}
	return w.value(v, []entry{{0, 1}}, 0, 0)
}

type walker struct {
	p *Plan
}

// at adds seg to the place of err, an *Error, as the walk unwinds.
func at(err error, seg string) error {
	if e, ok := err.(*Error); ok {
		e.path = append(e.path, seg)
	}
	return err
}

// valueErr returns an error about the part of the value being checked.
func valueErr(format string, args ...any) error {
	return &Error{msg: fmt.Sprintf(format, args...), path: []string{}}
}

// value checks v, a part of the value checked against the subschemas
// starting at cfg, at the given depth and validation nesting.
func (w *walker) value(v any, cfg []entry, depth, nesting int) error {
	p := w.p
	if depth > MaxInstanceDepth {
		return valueErr("the value nests more than %d levels deep", MaxInstanceDepth)
	}
	cost, long := w.cost(cfg)
	if cost > MaxWork {
		return valueErr("checking this part of the value costs more than %d", MaxWork)
	}
	if nesting += int(long); nesting > MaxNesting {
		return valueErr("checking the value recurses more than %d subschemas deep", MaxNesting)
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
		members := w.expand(cfg)
		var names []entry
		for _, m := range members {
			if t := p.parts[m.node].propNames; t != none {
				names = append(names, entry{t, m.mult})
			}
		}
		if len(names) > 0 {
			// Each member name is a string checked against these.
			if cost, long := w.cost(merge(names)); cost > MaxWork || nesting+int(long) > MaxNesting {
				return valueErr("checking the member names costs more than %d", MaxWork)
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			next := w.member(members, k)
			if len(next) == 0 {
				continue
			}
			if err := w.value(x[k], next, depth+1, nesting); err != nil {
				return at(err, k)
			}
		}
	case []any:
		if len(x) == 0 {
			return nil
		}
		members := w.expand(cfg)
		for k, e := range x {
			next := w.element(members, k)
			if len(next) == 0 {
				continue
			}
			if err := w.value(e, next, depth+1, nesting); err != nil {
				return at(err, strconv.Itoa(k))
			}
		}
	}
	return nil
}

// cost returns the work of checking one value against the subschemas
// starting at cfg, and the longest in-place chain among them.
func (w *walker) cost(cfg []entry) (int64, int32) {
	var cost int64
	var long int32
	for _, e := range cfg {
		cost = addCap(cost, mulCap(e.mult, w.p.cw[e.node], MaxWork), MaxWork)
		long = max(long, w.p.lp[e.node])
	}
	return cost, long
}

// expand returns the subschemas that check a value starting at cfg.
func (w *walker) expand(cfg []entry) []entry {
	var out []entry
	for _, e := range cfg {
		for _, c := range w.p.closure[e.node] {
			out = append(out, entry{c.node, mulCap(e.mult, c.mult, MaxWork)})
		}
	}
	return merge(out)
}

// member returns the subschemas that check the member named k of an
// object checked against members.
func (w *walker) member(members []entry, k string) []entry {
	var out []entry
	for _, m := range members {
		n := w.p.parts[m.node]
		t, matched := n.props[k]
		if matched {
			out = append(out, entry{t, m.mult})
		}
		for _, pe := range n.patterns {
			if pe.re.MatchString(k) {
				out = append(out, entry{pe.target, m.mult})
				matched = true
			}
		}
		if !matched && n.additional != none {
			out = append(out, entry{n.additional, m.mult})
		}
		if n.unevalProps != none {
			out = append(out, entry{n.unevalProps, m.mult})
		}
	}
	return merge(out)
}

// element returns the subschemas that check the element at index k of an
// array checked against members.
func (w *walker) element(members []entry, k int) []entry {
	var out []entry
	for _, m := range members {
		n := w.p.parts[m.node]
		if k < len(n.prefix) {
			out = append(out, entry{n.prefix[k], m.mult})
		} else if n.rest != none {
			out = append(out, entry{n.rest, m.mult})
		}
		for _, t := range [...]int32{n.contains, n.unevalItems} {
			if t != none {
				out = append(out, entry{t, m.mult})
			}
		}
	}
	return merge(out)
}

// merge adds up the counts of the same node.
func merge(l []entry) []entry {
	if len(l) < 2 {
		return l
	}
	sort.Slice(l, func(i, j int) bool { return l[i].node < l[j].node })
	out := l[:1]
	for _, e := range l[1:] {
		if last := &out[len(out)-1]; last.node == e.node {
			last.mult = addCap(last.mult, e.mult, MaxWork)
		} else {
			out = append(out, e)
		}
	}
	return out
}

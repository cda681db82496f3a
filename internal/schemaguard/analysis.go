package schemaguard

import (
	"strings"
)

// saturating addition and multiplication, capped at limit+1 so that "more
// than limit" stays true without overflow.
func addCap(a, b, limit int64) int64 {
	if s := a + b; s <= limit {
		return s
	}
	return limit + 1
}

func mulCap(a, b, limit int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > limit || b > limit || a > limit/b {
		return limit + 1
	}
	return a * b
}

// analysis is what Check learns of a graph's edges.
type analysis struct {
	g         *graph
	reachable []bool
	cw        []int64 // work of checking one value against a node and everything in place
	lp        []int32 // longest in-place chain from a node, in nodes
}

// reach marks the nodes validation can reach from the root.
func (a *analysis) reach() {
	g := a.g
	a.reachable = make([]bool, len(g.nodes))
	stack := []int32{0}
	a.reachable[0] = true
	visit := func(t int32) {
		if !a.reachable[t] {
			a.reachable[t] = true
			stack = append(stack, t)
		}
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, t := range g.nodes[i].all {
			visit(t)
		}
	}
}

// dfs visits the nodes (only those of from, if not nil) depth-first along
// the edges edges gives, iteratively, calling post for each node once all
// its successors are done. It returns the first cycle found (the nodes on
// it, the first repeated at the end), or nil.
func (a *analysis) dfs(from []bool, edges func(i int32) []int32, post func(i int32)) []int32 {
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, len(a.g.nodes))
	type frame struct {
		node int32
		out  []int32
		next int
	}
	for start := range a.g.nodes {
		if (from != nil && !from[start]) || color[start] != white {
			continue
		}
		stack := []frame{{node: int32(start), out: edges(int32(start))}}
		color[start] = grey
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next == len(f.out) {
				color[f.node] = black
				if post != nil {
					post(f.node)
				}
				stack = stack[:len(stack)-1]
				continue
			}
			t := f.out[f.next]
			f.next++
			switch color[t] {
			case grey:
				var cycle []int32
				for k := range stack {
					if stack[k].node == t || cycle != nil {
						cycle = append(cycle, stack[k].node)
					}
				}
				return append(cycle, t)
			case white:
				color[t] = grey
				stack = append(stack, frame{node: t, out: edges(t)})
			}
		}
	}
	return nil
}

// inPlace checks the graph of subschemas that check the same value: it
// must have no cycle, no chain longer than MaxDepth, and no node whose
// check of one value costs more than MaxWork. Definitions that validation
// never reaches are checked too: other walkers of the schema (model
// encoders) may follow them.
func (a *analysis) inPlace() error {
	g := a.g
	a.cw = make([]int64, len(g.nodes))
	a.lp = make([]int32, len(g.nodes))
	var fail error
	cycle := a.dfs(nil, func(i int32) []int32 { return g.nodes[i].inPlaceEdges() }, func(i int32) {
		w, l := g.nodes[i].weight, int32(0)
		for _, t := range g.nodes[i].inPlaceEdges() {
			w = addCap(w, a.cw[t], MaxWork)
			l = max(l, a.lp[t])
		}
		a.cw[i], a.lp[i] = w, l+1
		if fail == nil && w > MaxWork {
			fail = g.errorAt(i, segment{}, "checking one value against this subschema costs more than %d (its $refs and combinators multiply)", MaxWork)
		}
		if fail == nil && l+1 > MaxDepth {
			fail = g.errorAt(i, segment{}, "more than %d subschemas check one value in a chain of $refs and combinators", MaxDepth)
		}
	})
	if cycle != nil {
		return errorf("a $ref cycle checks a value against itself without end: %s", a.describe(cycle))
	}
	return fail
}

// describe names the nodes of a cycle.
func (a *analysis) describe(cycle []int32) string {
	var b strings.Builder
	for k, i := range cycle {
		if k > 0 {
			b.WriteString(" -> ")
		}
		b.WriteString(a.g.path(i))
		if b.Len() > 4*maxPathLen {
			b.WriteString(" ...")
			break
		}
	}
	return b.String()
}

// allEdges returns every successor of node i.
func (a *analysis) allEdges(i int32) []int32 { return a.g.nodes[i].all }

// bounded reports whether validating any value against the schema stays
// within MaxWork for each part of the value and MaxNesting deep, whatever
// the value: the schema has no recursion, and the worst case, every path
// from the root, fits.
func (a *analysis) bounded() bool {
	g := a.g
	work := make([]int64, len(g.nodes))
	long := make([]int32, len(g.nodes))
	cycle := a.dfs(a.reachable, a.allEdges, func(i int32) {
		w, l := g.nodes[i].weight, int32(0)
		for _, t := range a.allEdges(i) {
			w = addCap(w, work[t], MaxWork)
			l = max(l, long[t])
		}
		work[i], long[i] = w, min(l+1, MaxNesting+1)
	})
	return cycle == nil && work[0] <= MaxWork && long[0] <= MaxNesting
}

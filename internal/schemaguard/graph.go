package schemaguard

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// none marks an absent edge.
const none = -1

// node is one subschema of the schema being checked, with the edges
// validation follows from it.
type node struct {
	s      *jsonschema.Schema
	parent int32
	depth  int32
	seg    segment // where the node is under its parent
	weight int64
	base   int32 // the node that starts this node's base (refs.go)

	// all lists the subschemas validation goes to from this node: first
	// (all[:inPlace]) those that check the same value (allOf, anyOf,
	// oneOf, not, if, then, else, dependentSchemas or dependencies, then
	// the targets of $ref and $dynamicRef), then those that check a part
	// of it (parts.go). Made by link.
	all     []int32
	inPlace int32
}

// consuming calls f for every subschema that checks a part of n's value.
func (n *node) consuming(f func(int32)) {
	for _, t := range n.all[n.inPlace:] {
		f(t)
	}
}

// inPlaceEdges returns the subschemas that check the same value as n.
func (n *node) inPlaceEdges() []int32 { return n.all[:n.inPlace] }

// base is what resolution keeps of a node that starts a base: its URI and
// its anchors.
type base struct {
	uri     *url.URL
	anchors map[string]anchorInfo
}

type patternEdge struct {
	re     *regexp.Regexp
	target int32
}

type anchorInfo struct {
	node    int32
	dynamic bool
}

// graph is a schema being checked: its subschemas in depth-first order,
// the root first.
type graph struct {
	nodes  []node
	index  map[*jsonschema.Schema]int32
	draft7 bool
	bytes  int
	refs   bool           // some subschema has a $ref or a $dynamicRef
	bases  map[int32]base // resolution of the nodes that start a base
	kids   []child        // scratch for children
	keys   []string       // scratch for sorted keys
}

// sortedKeys returns the keys of m in order, in a scratch slice valid
// until the next call.
func sortedKeys[V any](g *graph, m map[string]V) []string {
	g.keys = g.keys[:0]
	for k := range m {
		g.keys = append(g.keys, k)
	}
	slices.Sort(g.keys)
	return g.keys
}

// segment is where a subschema is under its parent: under keyword kw,
// and key or index idx for the members of a map or an array.
type segment struct {
	kw, key string
	idx     int32 // none unless an array element
}

// String returns the segment as JSON Pointer segments ("properties/a").
func (sg segment) String() string {
	switch {
	case sg.kw == "":
		return ""
	case sg.idx != none:
		return sg.kw + "/" + strconv.Itoa(int(sg.idx))
	case sg.key != "" || sg.kw == "$defs" || sg.kw == "definitions" || sg.kw == "properties" ||
		sg.kw == "patternProperties" || sg.kw == "dependentSchemas" || sg.kw == "dependencies":
		return sg.kw + "/" + escapePointer(sg.key)
	}
	return sg.kw
}

// size is about the bytes of the segment's key in the schema's JSON.
func (sg segment) size() int { return len(sg.key) + 4 }

// child is a subschema of a node.
type child struct {
	seg segment
	s   *jsonschema.Schema
}

// children returns every subschema directly under s, those under maps in
// key order, with their JSON Pointer segments, in a scratch slice valid
// until the next call. It checks the fan-out of each keyword.
func (g *graph) children(s *jsonschema.Schema) ([]child, error) {
	out := g.kids[:0]
	one := func(kw string, c *jsonschema.Schema) {
		if c != nil {
			out = append(out, child{segment{kw: kw, idx: none}, c})
		}
	}
	var err error
	list := func(kw string, l []*jsonschema.Schema) {
		if len(l) > MaxFanOut && err == nil {
			err = errorf("%s has %d members, more than %d", kw, len(l), MaxFanOut)
		}
		for i, c := range l {
			out = append(out, child{segment{kw: kw, idx: int32(i)}, c})
		}
	}
	dict := func(kw string, m map[string]*jsonschema.Schema) {
		if len(m) == 0 {
			return
		}
		if len(m) > MaxFanOut && err == nil {
			err = errorf("%s has %d members, more than %d", kw, len(m), MaxFanOut)
		}
		for _, k := range sortedKeys(g, m) {
			out = append(out, child{segment{kw: kw, key: k, idx: none}, m[k]})
		}
	}
	dict("$defs", s.Defs)
	dict("definitions", s.Definitions)
	dict("properties", s.Properties)
	dict("patternProperties", s.PatternProperties)
	dict("dependentSchemas", s.DependentSchemas)
	dict("dependencies", s.DependencySchemas)
	list("allOf", s.AllOf)
	list("anyOf", s.AnyOf)
	list("oneOf", s.OneOf)
	list("prefixItems", s.PrefixItems)
	list("items", s.ItemsArray)
	one("items", s.Items)
	one("not", s.Not)
	one("if", s.If)
	one("then", s.Then)
	one("else", s.Else)
	one("additionalProperties", s.AdditionalProperties)
	one("additionalItems", s.AdditionalItems)
	one("contains", s.Contains)
	one("unevaluatedItems", s.UnevaluatedItems)
	one("unevaluatedProperties", s.UnevaluatedProperties)
	one("propertyNames", s.PropertyNames)
	one("contentSchema", s.ContentSchema)
	g.kids = out
	return out, err
}

func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// build walks the schema under root (iteratively: its depth is what is
// being checked) and checks its size, its shape and the values it holds.
func build(root *jsonschema.Schema) (*graph, error) {
	g := &graph{index: make(map[*jsonschema.Schema]int32, 16), nodes: make([]node, 0, 16)}
	switch root.Schema {
	case "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#":
		g.draft7 = true
	}
	type item struct {
		s      *jsonschema.Schema
		parent int32
		seg    segment
		depth  int32
	}
	stack := []item{{s: root, parent: none}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		i := int32(len(g.nodes))
		if it.s == nil {
			return nil, g.errorAt(it.parent, it.seg, "a subschema is null")
		}
		if prev, ok := g.index[it.s]; ok {
			return nil, g.errorAt(it.parent, it.seg, "the schema is not a tree: this subschema is also at %s", g.path(prev))
		}
		if it.depth > MaxDepth {
			return nil, g.errorAt(it.parent, it.seg, "subschemas nest more than %d levels deep", MaxDepth)
		}
		if len(g.nodes) >= MaxSubschemas {
			return nil, errorf("the schema has more than %d subschemas", MaxSubschemas)
		}
		g.index[it.s] = i
		g.nodes = append(g.nodes, node{s: it.s, parent: it.parent, seg: it.seg, depth: it.depth, base: none})
		g.refs = g.refs || it.s.Ref != "" || it.s.DynamicRef != ""
		if err := g.local(i); err != nil {
			return nil, err
		}
		kids, err := g.children(it.s)
		if err != nil {
			return nil, g.wrapAt(i, err)
		}
		// Every subschema pushed is one more (or an error): count them
		// now, so that the stack stays small too.
		if len(g.nodes)+len(stack)+len(kids) > MaxSubschemas {
			return nil, errorf("the schema has more than %d subschemas", MaxSubschemas)
		}
		// Push in reverse so that children are numbered in order.
		for k := len(kids) - 1; k >= 0; k-- {
			stack = append(stack, item{s: kids[k].s, parent: i, seg: kids[k].seg, depth: it.depth + 1})
		}
	}
	return g, nil
}

// local checks what node i holds besides subschemas, weighs it and
// counts its bytes.
func (g *graph) local(i int32) error {
	s := g.nodes[i].s
	if len(s.Enum) > MaxEnum {
		return g.errorAt(i, segment{}, "enum has %d values, more than %d", len(s.Enum), MaxEnum)
	}
	for _, c := range [...]struct {
		kw string
		n  int
	}{
		{"required", len(s.Required)}, {"dependentRequired", len(s.DependentRequired)},
		{"dependencies", len(s.DependencyStrings)}, {"examples", len(s.Examples)}, {"type", len(s.Types)},
	} {
		if c.n > MaxFanOut {
			return g.errorAt(i, segment{}, "%s has %d members, more than %d", c.kw, c.n, MaxFanOut)
		}
	}
	g.nodes[i].weight = 1 + int64(len(s.Enum)+len(s.Properties)+len(s.PatternProperties)+
		len(s.Required)+len(s.DependentRequired)+len(s.DependencyStrings)+
		len(s.DependentSchemas)+len(s.DependencySchemas))

	n := 16 + len(s.ID) + len(s.Schema) + len(s.Ref) + len(s.Comment) + len(s.Anchor) +
		len(s.DynamicAnchor) + len(s.DynamicRef) + len(s.Title) + len(s.Description) +
		len(s.Pattern) + len(s.Format) + len(s.ContentEncoding) + len(s.ContentMediaType) +
		len(s.Type) + len(s.Default) + len(s.Vocabulary)*8 + g.nodes[i].seg.size()
	for _, l := range [][]string{s.Types, s.Required, s.PropertyOrder} {
		for _, x := range l {
			n += len(x) + 3
		}
	}
	for k, l := range s.DependentRequired {
		n += len(k)
		for _, x := range l {
			n += len(x) + 3
		}
	}
	for k, l := range s.DependencyStrings {
		n += len(k)
		for _, x := range l {
			n += len(x) + 3
		}
	}
	if len(s.Default) > 0 && jsonDepth(s.Default, MaxValueDepth) > MaxValueDepth {
		return g.errorAt(i, segment{}, "default nests more than %d levels deep", MaxValueDepth)
	}
	vs := valueSizer{}
	if s.Const != nil {
		vs.value("const", *s.Const, 0)
	}
	for _, v := range s.Enum {
		vs.value("enum", v, 0)
	}
	for _, v := range s.Examples {
		vs.value("examples", v, 0)
	}
	for _, k := range sortedKeys(g, s.Extra) {
		n += len(k)
		vs.value(k, s.Extra[k], 0)
	}
	if vs.err != nil {
		return g.wrapAt(i, vs.err)
	}
	g.bytes += n + vs.n
	if g.bytes > MaxBytes {
		return errorf("the schema is larger than %d bytes", MaxBytes)
	}
	return nil
}

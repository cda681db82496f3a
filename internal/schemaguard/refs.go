package schemaguard

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// The resolution of $id, $anchor, $dynamicAnchor, $ref and $dynamicRef
// below follows github.com/google/jsonschema-go (Schema.Resolve), so that
// the edges checked here are the ones its validation follows. A $ref that
// does not resolve inside the schema is refused: without a loader, which
// no caller gives, Resolve refuses it too.

// resolveURIs gives every node its base and records the URIs and anchors
// of the bases. Nodes are in depth-first order, parents first.
func (g *graph) resolveURIs() (map[string]int32, error) {
	uris := map[string]int32{"": 0}
	g.bases = map[int32]base{0: {uri: &url.URL{}}}
	for i := range g.nodes {
		n := &g.nodes[i]
		b := int32(0)
		if n.parent != none {
			b = g.nodes[n.parent].base
		}
		if n.s.ID != "" && !(g.draft7 && n.s.Ref != "") {
			id, err := url.Parse(n.s.ID)
			if err != nil {
				return nil, g.errorAt(int32(i), segment{}, "$id %.100q does not parse: %v", n.s.ID, err)
			}
			switch {
			case !g.draft7 && id.Fragment != "":
				return nil, g.errorAt(int32(i), segment{}, "$id %.100q has a fragment", n.s.ID)
			case g.draft7 && id.Fragment != "":
				g.setAnchor(b, strings.TrimPrefix(n.s.ID, "#"), int32(i), false, true)
			default:
				u := g.bases[b].uri.ResolveReference(id)
				if !u.IsAbs() {
					return nil, g.errorAt(int32(i), segment{}, "$id %.100q is not an absolute URI", n.s.ID)
				}
				if i == 0 {
					g.bases[0] = base{uri: u, anchors: g.bases[0].anchors}
				} else {
					g.bases[int32(i)] = base{uri: u}
				}
				uris[u.String()] = int32(i)
				b = int32(i)
			}
		}
		n.base = b
		if !g.draft7 {
			if err := g.setAnchor(b, n.s.Anchor, int32(i), false, false); err != nil {
				return nil, err
			}
			if err := g.setAnchor(b, n.s.DynamicAnchor, int32(i), true, false); err != nil {
				return nil, err
			}
		}
	}
	return uris, nil
}

// setAnchor records an anchor of the base node b; a second anchor of the
// same name is an error unless lenient.
func (g *graph) setAnchor(b int32, name string, i int32, dynamic, lenient bool) error {
	if name == "" {
		return nil
	}
	bi := g.bases[b]
	if _, dup := bi.anchors[name]; dup {
		if lenient {
			return nil
		}
		return g.errorAt(i, segment{}, "anchor %.100q is defined twice", name)
	}
	if bi.anchors == nil {
		bi.anchors = map[string]anchorInfo{}
		g.bases[b] = bi
	}
	bi.anchors[name] = anchorInfo{node: i, dynamic: dynamic}
	return nil
}

// link resolves the references of every node and records the edges
// validation follows. A schema without $ref or $dynamicRef needs no
// resolution: jsonschema-go checks its $id and anchors when it resolves
// it.
func (g *graph) link() error {
	var uris map[string]int32
	var dynamic map[string][]int32
	if g.refs {
		var err error
		if uris, err = g.resolveURIs(); err != nil {
			return err
		}
		// The nodes of each dynamic anchor name, for $dynamicRefs that
		// act dynamically: validation picks one of them by the dynamic
		// scope.
		for i := range g.nodes {
			if a := g.nodes[i].s.DynamicAnchor; a != "" && !g.draft7 {
				if dynamic == nil {
					dynamic = map[string][]int32{}
				}
				dynamic[a] = append(dynamic[a], int32(i))
			}
		}
	}
	var all []int32 // scratch
	for i := range g.nodes {
		n := &g.nodes[i]
		s := n.s
		all = all[:0]
		for _, l := range [...][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf} {
			for _, c := range l {
				all = append(all, g.index[c])
			}
		}
		for _, c := range [...]*jsonschema.Schema{s.Not, s.If, s.Then, s.Else} {
			if c != nil {
				all = append(all, g.index[c])
			}
		}
		deps := s.DependentSchemas
		if g.draft7 {
			deps = s.DependencySchemas
		}
		for _, k := range sortedKeys(g, deps) {
			all = append(all, g.index[deps[k]])
		}
		if s.Ref != "" {
			t, _, err := g.resolveRef(uris, int32(i), s.Ref)
			if err != nil {
				return err
			}
			all = append(all, t)
		}
		if s.DynamicRef != "" && !g.draft7 {
			t, frag, err := g.resolveRef(uris, int32(i), s.DynamicRef)
			if err != nil {
				return err
			}
			if frag == "" {
				all = append(all, t)
			} else {
				all = append(all, dynamic[frag]...)
			}
		}
		if len(s.PatternProperties) > 0 {
			if _, err := g.patterns(int32(i)); err != nil {
				return err
			}
		}
		n.inPlace = int32(len(all))
		all = g.appendParts(all, s)
		if len(all) > 0 {
			n.all = slices.Clone(all)
		}
	}
	return nil
}

// appendParts appends the subschemas of s that check parts of a value (in
// no particular order: nothing reported depends on it).
func (g *graph) appendParts(all []int32, s *jsonschema.Schema) []int32 {
	for _, c := range s.Properties {
		all = append(all, g.index[c])
	}
	for _, c := range s.PatternProperties {
		all = append(all, g.index[c])
	}
	prefix, rest := g.items(s)
	for _, c := range prefix {
		all = append(all, g.index[c])
	}
	for _, c := range [...]*jsonschema.Schema{rest, s.AdditionalProperties, s.UnevaluatedProperties, s.PropertyNames, s.Contains, s.UnevaluatedItems} {
		if c != nil {
			all = append(all, g.index[c])
		}
	}
	return all
}

// items returns the subschemas of s that check the elements of an array
// by position (prefix), and those after them (rest), as the schema's
// draft says.
func (g *graph) items(s *jsonschema.Schema) (prefix []*jsonschema.Schema, rest *jsonschema.Schema) {
	if !g.draft7 {
		return s.PrefixItems, s.Items
	}
	if s.ItemsArray != nil {
		return s.ItemsArray, s.AdditionalItems
	}
	return nil, s.Items
}

// patterns compiles the patternProperties of node i, in key order.
func (g *graph) patterns(i int32) ([]patternEdge, error) {
	s := g.nodes[i].s
	var out []patternEdge
	for _, k := range sortedKeys(g, s.PatternProperties) {
		re, err := regexp.Compile(k)
		if err != nil {
			return nil, g.errorAt(i, segment{}, "patternProperties %.100q does not compile: %v", k, err)
		}
		out = append(out, patternEdge{re: re, target: g.index[s.PatternProperties[k]]})
	}
	return out, nil
}

// resolveRef resolves ref, a $ref or $dynamicRef of node i. frag is the
// name of the dynamic anchor a $dynamicRef names, if it names one.
func (g *graph) resolveRef(uris map[string]int32, i int32, ref string) (target int32, frag string, err error) {
	u, err := url.Parse(ref)
	if err != nil {
		return none, "", g.errorAt(i, segment{}, "$ref %.100q does not parse: %v", ref, err)
	}
	u = g.bases[g.nodes[i].base].uri.ResolveReference(u)
	doc := *u
	doc.Fragment = ""
	t, ok := uris[doc.String()]
	if !ok {
		return none, "", g.errorAt(i, segment{}, "$ref %.100q refers outside the schema", ref)
	}
	if f := u.Fragment; f != "" && !strings.HasPrefix(f, "/") {
		a, ok := g.bases[t].anchors[f]
		if !ok {
			return none, "", g.errorAt(i, segment{}, "$ref %.100q names no anchor of the schema", ref)
		}
		if a.dynamic {
			frag = f
		}
		return a.node, frag, nil
	}
	s, err := pointer(g.nodes[t].s, u.Fragment)
	if err != nil {
		return none, "", g.errorAt(i, segment{}, "$ref %.100q: %v", ref, err)
	}
	return g.index[s], "", nil
}

// pointer returns the subschema of s at the JSON Pointer ptr.
func pointer(s *jsonschema.Schema, ptr string) (*jsonschema.Schema, error) {
	if ptr == "" {
		return s, nil
	}
	if ptr[0] != '/' {
		return nil, errorf("not a JSON Pointer")
	}
	segs := strings.Split(ptr[1:], "/")
	for k := range segs {
		segs[k] = strings.ReplaceAll(strings.ReplaceAll(segs[k], "~1", "/"), "~0", "~")
	}
	for len(segs) > 0 {
		kw := segs[0]
		segs = segs[1:]
		var m map[string]*jsonschema.Schema
		var l []*jsonschema.Schema
		var one *jsonschema.Schema
		switch kw {
		case "$defs":
			m = s.Defs
		case "definitions":
			m = s.Definitions
		case "properties":
			m = s.Properties
		case "patternProperties":
			m = s.PatternProperties
		case "dependentSchemas":
			m = s.DependentSchemas
		case "dependencies":
			m = s.DependencySchemas
		case "allOf":
			l = s.AllOf
		case "anyOf":
			l = s.AnyOf
		case "oneOf":
			l = s.OneOf
		case "prefixItems":
			l = s.PrefixItems
		case "items":
			if s.Items != nil {
				one = s.Items
			} else {
				l = s.ItemsArray
			}
		case "not":
			one = s.Not
		case "if":
			one = s.If
		case "then":
			one = s.Then
		case "else":
			one = s.Else
		case "additionalProperties":
			one = s.AdditionalProperties
		case "additionalItems":
			one = s.AdditionalItems
		case "contains":
			one = s.Contains
		case "unevaluatedItems":
			one = s.UnevaluatedItems
		case "unevaluatedProperties":
			one = s.UnevaluatedProperties
		case "propertyNames":
			one = s.PropertyNames
		case "contentSchema":
			one = s.ContentSchema
		default:
			return nil, errorf("no subschema under %.100q", kw)
		}
		switch {
		case one != nil:
			s = one
			continue
		case m == nil && l == nil:
			return nil, errorf("no subschema under %.100q", kw)
		case len(segs) == 0:
			return nil, errorf("the pointer ends at %.100q, not at a schema", kw)
		}
		key := segs[0]
		segs = segs[1:]
		if m != nil {
			c, ok := m[key]
			if !ok {
				return nil, errorf("no %.100q under %.100q", key, kw)
			}
			s = c
			continue
		}
		k, err := strconv.Atoi(key)
		if err != nil || k < 0 || k >= len(l) || (len(key) > 1 && key[0] == '0') {
			return nil, errorf("no element %.20q under %.100q", key, kw)
		}
		s = l[k]
	}
	if s == nil {
		return nil, errorf("the pointer leads to a null subschema")
	}
	return s, nil
}

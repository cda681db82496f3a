package toolkit

import (
	"context"
	"fmt"
)

// ListType selects a kind of item.
type ListType string

// Kinds of item.
const (
	ListTypeTools     ListType = "tool"
	ListTypePrompts   ListType = "prompt"
	ListTypeResources ListType = "resource"
	// ListTypeTemplates selects resource templates (ResourceTemplate).
	// They are listed only when asked for by this type: an empty
	// ListRequest.Type means tools, prompts and resources, the items a
	// caller can use as they are.
	ListTypeTemplates ListType = "template"
)

// ListRequest selects items for List.
type ListRequest struct {
	// Namespace restricts results to one source: "builtin", "user" or a
	// connector's namespace. Empty means all.
	Namespace string
	// Type selects one kind of item. Empty means tools, prompts and
	// resources; resource templates are listed only with
	// ListTypeTemplates.
	Type ListType
	// Name keeps only items with this name (tools and prompts), this URI
	// or name (resources), or this URI template or name (templates).
	// Empty means all.
	Name string
	// Limit caps the page size; nil means no limit.
	Limit *uint
	// Offset skips this many matched items.
	Offset uint
}

// Item is one entry of a List or Lookup answer with the namespace it is
// served from.
type Item struct {
	// Namespace is the source: "builtin", a connector's namespace, or "user".
	Namespace string
	// Type is the kind of item.
	Type ListType
	// Name is the item's name (for resources and templates, their
	// human-readable name).
	Name string
	// URI is the resource's URI, or the template's URI template; empty for
	// tools and prompts.
	URI string
	// Value is the Tool, Prompt, Resource or ResourceTemplate itself.
	Value any
}

// Key returns the qualified key that reaches exactly this item: through
// Lookup, "namespace.name" for tools and prompts and "uri#namespace" for
// resources (a resource a template gives is reached through its template
// again); through LookupType with ListTypeTemplates,
// "uriTemplate#namespace" for templates.
func (it Item) Key() string {
	if it.Type == ListTypeResources || it.Type == ListTypeTemplates {
		return it.URI + "#" + it.Namespace
	}
	return it.Namespace + "." + it.Name
}

// Description returns the item's one-line description: its Description,
// or for a prompt without one its Title; empty when the item has none.
func (it Item) Description() string {
	switch v := it.Value.(type) {
	case Prompt:
		if d := v.Description(); d != "" {
			return d
		}
		return v.Title()
	case interface{ Description() string }:
		return v.Description()
	}
	return ""
}

// ListResponse is the answer of List. Items come in a stable order: tools,
// then prompts, then resources; within a kind by namespace (builtin, then
// connectors in registration order, then user) and then by name (URI for
// resources, URI template for templates).
type ListResponse struct {
	Tools     []Tool
	Prompts   []Prompt
	Resources []Resource
	// Templates holds resource templates; only a request with
	// ListTypeTemplates lists them.
	Templates []ResourceTemplate
	// Items holds the page's items, in order, with their namespaces.
	Items []Item

	// Count is the number of matched items before pagination.
	Count uint
	// Offset is the offset applied.
	Offset uint
	// Limit is the limit applied (nil if none).
	Limit *uint
}

// List returns the items matching req, in the stable order described on
// ListResponse. It reads the latest snapshot and never blocks on a
// connector. An unknown Type wraps ErrBadParameter; an unknown Namespace
// wraps ErrNotFound.
func (tk *Toolkit) List(ctx context.Context, req ListRequest) (*ListResponse, error) {
	s := tk.snap.Load()
	kinds, err := kindsOf(req.Type)
	if err != nil {
		return nil, err
	}
	var src *source
	if req.Namespace != "" {
		if src = s.byNS[req.Namespace]; src == nil {
			return nil, fmt.Errorf("%w: namespace %q", ErrNotFound, req.Namespace)
		}
	}

	// Collect the matching runs of entries without copying them.
	var runs [][]*entry
	var count int
	for _, k := range kinds {
		var run []*entry
		switch {
		case req.Name != "":
			run = s.byName(src, k, req.Name)
		case src != nil:
			run = src.items[k]
		default:
			run = s.all[k]
		}
		if k == KindTool && tk.guard != nil {
			run = tk.visibleTools(ctx, run)
		}
		if len(run) > 0 {
			runs = append(runs, run)
			count += len(run)
		}
	}

	resp := &ListResponse{Count: uint(count), Offset: req.Offset, Limit: req.Limit}
	start := min(uint(count), req.Offset)
	end := uint(count)
	if req.Limit != nil && *req.Limit < end-start {
		end = start + *req.Limit // cannot overflow: it is below count
	}
	if end > start {
		resp.Items = make([]Item, 0, end-start)
	}
	pos := uint(0)
	for _, run := range runs {
		n := uint(len(run))
		if pos+n <= start {
			pos += n
			continue
		}
		if pos >= end {
			break
		}
		lo := uint(0)
		if start > pos {
			lo = start - pos
		}
		hi := min(n, end-pos)
		page := run[lo:hi]
		for _, e := range page {
			resp.Items = append(resp.Items, e.item)
		}
		// A run holds one kind of item.
		switch run[0].kind {
		case KindTool:
			resp.Tools = values[Tool](page)
		case KindPrompt:
			resp.Prompts = values[Prompt](page)
		case KindResource:
			resp.Resources = values[Resource](page)
		case KindTemplate:
			resp.Templates = values[ResourceTemplate](page)
		}
		pos += n
	}
	return resp, nil
}

// values returns the values of entries of one kind, all of type T.
func values[T any](entries []*entry) []T {
	out := make([]T, len(entries))
	for i, e := range entries {
		out[i] = e.item.Value.(T)
	}
	return out
}

// allKinds lists every kind, in List order.
var allKinds = []Kind{KindTool, KindPrompt, KindResource, KindTemplate}

// kindsOf returns the kinds a ListType selects: empty means tools, prompts
// and resources, not templates.
func kindsOf(t ListType) ([]Kind, error) {
	if t == "" {
		return allKinds[:KindTemplate], nil
	}
	if k, ok := t.Kind(); ok {
		return allKinds[k : k+1], nil
	}
	return nil, fmt.Errorf("%w: list type %q: want %q, %q, %q, %q or empty", ErrBadParameter, t, ListTypeTools, ListTypePrompts, ListTypeResources, ListTypeTemplates)
}

// byName returns the entries of kind k named name (resources: by URI or
// name; templates: by URI template or name), in source order, within src
// when it is not nil.
func (s *snapshot) byName(src *source, k Kind, name string) []*entry {
	sources := s.sources
	if src != nil {
		sources = []*source{src}
	}
	var out []*entry
	for _, src := range sources {
		if e := src.index[k][name]; e != nil {
			out = append(out, e)
			continue
		}
		if k == KindResource || k == KindTemplate {
			for _, e := range src.items[k] {
				if e.item.Name == name {
					out = append(out, e)
				}
			}
		}
	}
	return out
}

package toolkit

// ListType selects a kind of item.
type ListType string

// Kinds of item.
const (
	ListTypeTools     ListType = "tool"
	ListTypePrompts   ListType = "prompt"
	ListTypeResources ListType = "resource"
)

// ListRequest selects items for List.
type ListRequest struct {
	// Namespace restricts results to one source: "builtin", "user" or a
	// connector's namespace. Empty means all.
	Namespace string
	// Type selects one kind of item. Empty means all three.
	Type ListType
	// Name keeps only items with this name (tools and prompts) or this URI
	// or name (resources). Empty means all.
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
	// Name is the item's name (for resources, the resource's name).
	Name string
	// URI is the resource's URI; empty for tools and prompts.
	URI string
	// Value is the Tool, Prompt or Resource itself.
	Value any
}

// Key returns the qualified key that reaches exactly this item through
// Lookup: "namespace.name" for tools and prompts, "uri#namespace" for
// resources.
func (it Item) Key() string {
	if it.Type == ListTypeResources {
		return it.URI + "#" + it.Namespace
	}
	return it.Namespace + "." + it.Name
}

// ListResponse is the answer of List. Items come in a stable order: tools,
// then prompts, then resources; within a kind by namespace (builtin, then
// connectors in registration order, then user) and then by name (URI for
// resources).
type ListResponse struct {
	Tools     []Tool
	Prompts   []Prompt
	Resources []Resource
	// Items holds the page's items, in order, with their namespaces.
	Items []Item

	// Count is the number of matched items before pagination.
	Count uint
	// Offset is the offset applied.
	Offset uint
	// Limit is the limit applied (nil if none).
	Limit *uint
}

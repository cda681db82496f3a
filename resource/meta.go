package resource

// MetaCarrier is implemented by items and contents that carry MCP `_meta`:
// tools, prompts, resources and resource templates (the `_meta` of their
// definition), and the output of a call or the content of a read (the
// `_meta` of the result or of the contents). It is optional: a value that
// does not implement it carries none.
//
// The map is data the toolkit keeps from the item's source and serves on
// (the MCP server face sends it as the definition's or the result's
// `_meta`); the toolkit reads it (an MCP App's `_meta.ui`, say) but never
// changes it in place. A builtin sets it by implementing the method; an
// item a connector brings in returns what its server sent. Callers must
// not modify the map. Its values are what encoding/json decodes into an
// any (maps, slices, strings, float64, bool, nil) or values that marshal
// to JSON.
type MetaCarrier interface {
	MetaData() map[string]any
}

// MetaOf returns the `_meta` v carries: its MetaData when v is a
// [MetaCarrier], nil otherwise.
func MetaOf(v any) map[string]any {
	if mc, ok := v.(MetaCarrier); ok {
		return mc.MetaData()
	}
	return nil
}

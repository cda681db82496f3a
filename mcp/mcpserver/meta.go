package mcpserver

import (
	"encoding/json"
	"fmt"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/resource"
)

// withMeta wraps the define function of a kind so that the SDK
// definition carries the `_meta` of the item (resource.MetaCarrier): an
// upstream's as its server sent it, a builtin's as it gives it. One that
// does not marshal to JSON refuses the item (so it never fails a whole
// list), as a panic of MetaData does.
func withMeta(define func(*Server, string, toolkit.Item) (definition, error)) func(*Server, string, toolkit.Item) (definition, error) {
	return func(s *Server, exposed string, it toolkit.Item) (definition, error) {
		d, err := define(s, exposed, it)
		if err != nil {
			return d, err
		}
		var meta map[string]any
		if err := safely(func() { meta = resource.MetaOf(it.Value) }); err != nil {
			return definition{}, fmt.Errorf("%w: _meta: %v", toolkit.ErrBadParameter, err)
		}
		if meta == nil {
			return d, nil
		}
		if _, err := json.Marshal(meta); err != nil {
			return definition{}, fmt.Errorf("%w: _meta: %v", toolkit.ErrBadParameter, err)
		}
		d.sdk.(interface{ SetMeta(map[string]any) }).SetMeta(meta)
		return d, nil
	}
}

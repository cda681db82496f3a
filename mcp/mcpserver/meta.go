package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/mcp/internal/wire"
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

// withRequestMeta returns ctx carrying the client's request `_meta` (of a
// tools/call, prompts/get or resources/read) for the connectors that serve
// the call to send on to their servers (bridge.WithRequestMeta), without
// the protocol's keys for one hop (progress token, trace context, ...),
// which each face handles itself. A `_meta` beyond the bounds of a
// server's (wire.CheckMeta) is refused with invalid params rather than
// dropped: dropping it would run the call, silently, without data the
// client meant the server to have, while a refusal tells the client what
// is wrong (and costs a client within the bounds nothing).
// kind and name (tool "x") say what the request is for in the error.
func withRequestMeta(ctx context.Context, kind, name string, meta map[string]any) (context.Context, error) {
	meta = wire.DataMeta(meta)
	if err := wire.CheckMeta(meta); err != nil {
		return ctx, invalidParams("%s %q: request %v", kind, name, err)
	}
	return bridge.WithRequestMeta(ctx, meta), nil
}

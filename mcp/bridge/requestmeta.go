package bridge

import "context"

// requestMetaKey is the context key of a caller's request `_meta`.
type requestMetaKey struct{}

// WithRequestMeta returns ctx carrying m, the `_meta` of the request a call
// serves: an [github.com/llmkit/toolkit/mcp/mcpserver.Server] sets its
// client's on the calls of tools/call, prompts/get and resources/read, and
// an embedding program may set its own. A connector sends its keys on with
// the request it makes to its server for the call, except the keys the
// protocol defines for one hop (progress token, trace context, ...), which
// it sets itself; a `_meta` beyond the connector's bounds fails the call.
// m must not change once given.
func WithRequestMeta(ctx context.Context, m map[string]any) context.Context {
	if len(m) == 0 && RequestMetaFrom(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, requestMetaKey{}, m)
}

// RequestMetaFrom returns the `_meta` [WithRequestMeta] put in ctx, or nil.
// The map is shared: the caller must not change it.
func RequestMetaFrom(ctx context.Context) map[string]any {
	m, _ := ctx.Value(requestMetaKey{}).(map[string]any)
	return m
}

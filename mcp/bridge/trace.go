package bridge

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
)

// W3C trace context travels in the _meta map of MCP requests under the keys
// "traceparent" and "tracestate" (the HTTP header names, lower case).

var tracePropagator = propagation.TraceContext{}

// metaCarrier adapts an MCP _meta map to the OpenTelemetry carrier
// interface. Only string values are read.
type metaCarrier map[string]any

func (c metaCarrier) Get(key string) string {
	s, _ := c[key].(string)
	return s
}

func (c metaCarrier) Set(key, value string) { c[key] = value }

func (c metaCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// InjectTraceMeta writes the W3C trace context of ctx (traceparent and, if
// any, tracestate) into meta, the _meta map of an outgoing MCP request. It
// does nothing when ctx carries no valid span context or meta is nil.
func InjectTraceMeta(ctx context.Context, meta map[string]any) {
	if meta == nil {
		return
	}
	tracePropagator.Inject(ctx, metaCarrier(meta))
}

// ExtractTraceMeta returns ctx with the remote span context found in meta,
// the _meta map of an incoming MCP request, so that spans started from the
// result become children of the caller's span. Without a valid traceparent
// it returns ctx unchanged.
func ExtractTraceMeta(ctx context.Context, meta map[string]any) context.Context {
	if len(meta) == 0 {
		return ctx
	}
	if _, ok := meta["traceparent"].(string); !ok {
		return ctx
	}
	return tracePropagator.Extract(ctx, metaCarrier(meta))
}

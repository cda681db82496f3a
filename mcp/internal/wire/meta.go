package wire

import (
	"fmt"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A `_meta` that crosses a face of the toolkit (a server's, on an item or
// an answer; a client's, on a request a gateway passes on) is data, and
// like every other field from a peer it is bounded: a value nested deeper
// than MaxMetaDepth levels, or whose keys and values add up to more than
// MaxMetaBytes, is refused. The walk stops at the first bound it crosses,
// so it costs at most in proportion to the bound, and it decodes nothing:
// it measures what the SDK already decoded.
const (
	// MaxMetaDepth is how deep a `_meta` value may nest (the map itself is
	// level 1).
	MaxMetaDepth = 32
	// MaxMetaBytes bounds the size of a `_meta`: the bytes of its keys and
	// strings, and a few bytes for each other value.
	MaxMetaBytes = 64 << 10
)

// hopMetaKeys are the `_meta` keys the protocol defines for one hop (a
// session or a request): the progress token, the per-request triple and
// the other keys of 2026-07-28 (the SDK adds the server's serverInfo to
// every result), a task's relation, W3C trace context, and the tag the
// connector adds to its own requests. They are never data to pass on: each
// face adds its own for its peers.
var hopMetaKeys = []string{
	"progressToken",
	sdk.MetaKeyProtocolVersion, sdk.MetaKeyClientInfo, sdk.MetaKeyServerInfo,
	sdk.MetaKeyClientCapabilities, sdk.MetaKeyLogLevel, sdk.MetaKeySubscriptionID,
	"io.modelcontextprotocol/related-task",
	"traceparent", "tracestate",
	CallMetaKey,
}

// DataMeta returns m without its hop keys (the protocol's keys for one
// hop): m itself when it has none (the common case, which costs a few map
// lookups), a copy otherwise, nil when nothing is left. It never changes m.
func DataMeta(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	var out map[string]any
	for _, k := range hopMetaKeys {
		if _, ok := m[k]; !ok {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(m))
			for k, v := range m {
				out[k] = v
			}
		}
		delete(out, k)
	}
	switch {
	case out == nil:
		return m
	case len(out) == 0:
		return nil
	}
	return out
}

// MetaBoundError is the reason a `_meta` is refused.
type MetaBoundError string

func (e MetaBoundError) Error() string { return string(e) }

// CheckMeta returns a MetaBoundError when m crosses a `_meta` bound. The
// `_meta` of a top-level object is at level 1.
func CheckMeta(m map[string]any) error {
	if m == nil {
		return nil
	}
	budget := MaxMetaBytes
	return walkMeta(m, 1, &budget)
}

// walkMeta walks v, at nesting level depth (objects and arrays count),
// taking its size from budget.
func walkMeta(v any, depth int, budget *int) error {
	switch v.(type) {
	case map[string]any, []any:
		if depth > MaxMetaDepth {
			return MetaBoundError("_meta nests more than " + strconv.Itoa(MaxMetaDepth) + " levels deep")
		}
	}
	take := func(n int) error {
		if *budget -= n; *budget < 0 {
			return MetaBoundError(fmt.Sprintf("_meta is larger than %d bytes", MaxMetaBytes))
		}
		return nil
	}
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if err := take(len(k) + 4); err != nil {
				return err
			}
			if err := walkMeta(x, depth+1, budget); err != nil {
				return err
			}
		}
		return take(2)
	case []any:
		for _, x := range v {
			if err := walkMeta(x, depth+1, budget); err != nil {
				return err
			}
		}
		return take(2)
	case string:
		return take(len(v) + 2)
	default:
		// Numbers, booleans and null.
		return take(8)
	}
}

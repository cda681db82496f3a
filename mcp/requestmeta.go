package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// callerMeta returns the `_meta` of the caller's request
// (bridge.RequestMetaFrom) that the connector sends on with the request it
// makes for the call: without the protocol's keys for one hop, which the
// connector sets itself. A `_meta` beyond the bounds (checkMeta) fails the
// call with errs.ErrBadParameter: what is sent is never unbounded, whoever
// put it in ctx.
func callerMeta(ctx context.Context) (map[string]any, error) {
	m := dataMeta(bridge.RequestMetaFrom(ctx))
	if err := checkMeta(m); err != nil {
		return nil, fmt.Errorf("%w: request _meta: %w", errs.ErrBadParameter, err)
	}
	return m, nil
}

// withCallerMeta adds the keys of m to the `_meta` of params, leaving
// those params already has (the connector's own) as they are. It never
// changes m.
func withCallerMeta(params sdk.Params, m map[string]any) {
	if len(m) == 0 {
		return
	}
	meta := params.GetMeta()
	if meta == nil {
		meta = make(map[string]any, len(m))
	}
	for k, v := range m {
		if _, ok := meta[k]; !ok {
			meta[k] = v
		}
	}
	params.SetMeta(meta)
}

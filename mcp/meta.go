package mcp

import "github.com/llmkit/toolkit/mcp/internal/wire"

// A server's `_meta` (on a tool, prompt, resource or template, on a call
// result, a prompts/get result or resource contents) is data the connector
// keeps and a gateway serves on (resource.MetaCarrier), bounded like every
// other field a server sends (wire.CheckMeta): a listed item with a
// `_meta` beyond the bounds is skipped alone (the listing's warning says
// why); a result with one fails the call. The protocol's keys for one hop
// (progress token, trace context, the connector's call tag, ...) are never
// kept (wire.DataMeta).
//
// The other way, a caller's request `_meta` (bridge.WithRequestMeta: a
// gateway's client's, or an embedding program's) is sent on with the
// request the connector makes for the call, its hop keys left out, under
// the same bounds (requestmeta.go).
const (
	maxMetaDepth = wire.MaxMetaDepth
	maxMetaBytes = wire.MaxMetaBytes
)

var (
	checkMeta = wire.CheckMeta
	dataMeta  = wire.DataMeta
)

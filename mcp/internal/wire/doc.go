// Package wire rewrites what an MCP server sends on its way to the go-sdk
// client, where the SDK would otherwise misbehave: it clamps JSON nested
// deeper than the SDK's decoder accepts (depth.go), so that one hostile
// value fails one request instead of the whole session, and it tags the
// server's requests in a call's event stream with that call
// (tagstream.go), which the SDK's merged streams would lose. The answer
// stream of a call gets both from one reader in one pass (NewCallStream),
// and the readers take their buffers from a pool (scratch.go). Everything
// else passes byte for byte.
package wire

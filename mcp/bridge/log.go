package bridge

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// LogForwarder is implemented by toolkit sessions that can pass an MCP
// server's log notification on to their own client as it came: same level
// (all eight MCP levels, "emergency" included), logger name and data. The
// sessions an [github.com/llmkit/toolkit/mcp/mcpserver.Server] gives its
// clients' calls implement it, so that a gateway relays an upstream
// server's logs unchanged; a connector logs through the session's Logger
// when the session does not implement it or ForwardLog fails.
type LogForwarder interface {
	ForwardLog(ctx context.Context, params *sdk.LoggingMessageParams) error
}

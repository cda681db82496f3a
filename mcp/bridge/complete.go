package bridge

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Completer is implemented by prompts and resource templates that can
// suggest values for one of their arguments (a prompt's argument, a URI
// template's variable), as MCP's completion/complete does. arg names the
// argument, value is what the user typed so far, and args holds the values
// of the other arguments already chosen (nil when none). The prompts and
// templates a [github.com/llmkit/toolkit/mcp.Connector] brings in implement
// it by asking their server; an
// [github.com/llmkit/toolkit/mcp/mcpserver.Server] answers a client's
// completion/complete for such an item with what Complete returns.
//
// A Completer that has nothing to suggest returns an empty result, not an
// error.
type Completer interface {
	Complete(ctx context.Context, arg, value string, args map[string]string) (*sdk.CompletionResultDetails, error)
}

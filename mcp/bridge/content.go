package bridge

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/resource"
)

// ContentCarrier is implemented by resources that know their MCP content
// blocks. The server sends the blocks as they are, in a tool result or a
// prompt message, instead of deriving one block from the resource's MIME
// type. Tools that want full control of their MCP result return a
// *ToolContent (or any resource that implements this interface).
type ContentCarrier interface {
	MCPContent() []sdk.Content
}

// StructuredCarrier is implemented by resources that carry an MCP
// structuredContent value for a tool result.
type StructuredCarrier interface {
	MCPStructuredContent() any
}

// ToolContentType is the MIME type of a ToolContent resource: its Read
// returns the JSON array of its content blocks.
const ToolContentType = "application/vnd.mcp.content+json"

// ToolContent is a resource made of MCP content blocks (and an optional
// structured value). Returned from a tool's Run, it becomes the content of
// the MCP tool result exactly; used as a prompt message's content, each
// block becomes one message.
type ToolContent struct {
	// Content holds the blocks, in order.
	Content []sdk.Content
	// Structured, when non-nil, is sent as the result's structuredContent.
	Structured any
}

// NewToolContent returns a ToolContent holding the given blocks.
func NewToolContent(content ...sdk.Content) *ToolContent {
	return &ToolContent{Content: content}
}

var (
	_ resource.Resource = (*ToolContent)(nil)
	_ ContentCarrier    = (*ToolContent)(nil)
	_ StructuredCarrier = (*ToolContent)(nil)
)

// URI returns "mcp:content".
func (c *ToolContent) URI() string { return "mcp:content" }

// Name returns "content".
func (c *ToolContent) Name() string { return "content" }

// Description returns a short description.
func (c *ToolContent) Description() string { return "MCP content blocks" }

// Type returns ToolContentType.
func (c *ToolContent) Type() string { return ToolContentType }

// Read returns the content blocks as a JSON array.
func (c *ToolContent) Read(context.Context) ([]byte, error) {
	blocks := c.Content
	if blocks == nil {
		blocks = []sdk.Content{}
	}
	return json.Marshal(blocks)
}

// MCPContent returns the blocks.
func (c *ToolContent) MCPContent() []sdk.Content { return c.Content }

// MCPStructuredContent returns the structured value, or nil.
func (c *ToolContent) MCPStructuredContent() any { return c.Structured }

// Contents is what a read of a remote resource answered: the data, the
// MIME type the source gave it ("" when none) and the `_meta` of the
// contents (nil when none).
type Contents struct {
	Data     []byte
	MIMEType string
	Meta     map[string]any
}

// TypedReader is implemented by resources that learn their content's MIME
// type and `_meta` only when they are read (a remote resource, a resource
// of a remote template). ReadTyped is Read also returning those, so a
// server passes them on instead of the listed ones.
type TypedReader interface {
	ReadTyped(ctx context.Context) (Contents, error)
}

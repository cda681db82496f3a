package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

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

// srvMediaType returns the lower-case media type of a MIME type without its
// parameters ("" when t is empty or malformed).
func srvMediaType(t string) string {
	if t == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(t)
	if err != nil {
		// Keep what precedes any parameter; a malformed type is still a hint.
		mt, _, _ = strings.Cut(t, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	return mt
}

// srvContentOf maps the content of a resource to MCP content blocks: text
// and JSON become text, image/* and audio/* become image and audio blocks
// with their MIME type, anything else becomes an embedded resource (text
// when the data is textual UTF-8, a blob otherwise). It also returns the
// data that was read and its media type.
func srvContentOf(ctx context.Context, r resource.Resource) ([]sdk.Content, []byte, string, error) {
	if r == nil {
		return nil, nil, "", nil
	}
	if cc, ok := r.(ContentCarrier); ok {
		return cc.MCPContent(), nil, ToolContentType, nil
	}
	data, err := r.Read(ctx)
	if err != nil {
		return nil, nil, "", fmt.Errorf("reading %q: %w", r.URI(), err)
	}
	mt := srvMediaType(r.Type())
	switch {
	case strings.HasPrefix(mt, "image/"):
		return []sdk.Content{&sdk.ImageContent{Data: data, MIMEType: r.Type()}}, data, mt, nil
	case strings.HasPrefix(mt, "audio/"):
		return []sdk.Content{&sdk.AudioContent{Data: data, MIMEType: r.Type()}}, data, mt, nil
	case (mt == "" || strings.HasPrefix(mt, "text/") || resource.IsJSON(mt)) && utf8.Valid(data):
		return []sdk.Content{&sdk.TextContent{Text: string(data)}}, data, mt, nil
	}
	return []sdk.Content{&sdk.EmbeddedResource{Resource: srvResourceContents(r.URI(), r.Type(), mt, data)}}, data, mt, nil
}

// srvResourceContents builds the contents of a resource read: text for
// textual UTF-8 data, a blob otherwise.
func srvResourceContents(uri, typ, mt string, data []byte) *sdk.ResourceContents {
	rc := &sdk.ResourceContents{URI: uri, MIMEType: typ}
	if (resource.IsText(mt) || mt == "") && utf8.Valid(data) {
		rc.Text = string(data)
		if rc.MIMEType == "" {
			rc.MIMEType = "text/plain"
		}
		return rc
	}
	if rc.MIMEType == "" {
		rc.MIMEType = "application/octet-stream"
	}
	rc.Blob = data
	if rc.Blob == nil {
		rc.Blob = []byte{}
	}
	return rc
}

// srvToolResult turns the output of a toolkit call into an MCP tool result.
// structured asks for structuredContent (the tool has an output schema):
// JSON output is then sent both as text and as structuredContent.
func srvToolResult(ctx context.Context, out resource.Resource, structured bool) (*sdk.CallToolResult, error) {
	res := &sdk.CallToolResult{Content: []sdk.Content{}}
	if out == nil {
		return res, nil
	}
	content, data, mt, err := srvContentOf(ctx, out)
	if err != nil {
		return nil, err
	}
	if content != nil {
		res.Content = content
	}
	if sc, ok := out.(StructuredCarrier); ok {
		if v := sc.MCPStructuredContent(); v != nil {
			res.StructuredContent = v
		}
		return res, nil
	}
	if structured && resource.IsJSON(mt) && json.Valid(data) {
		res.StructuredContent = json.RawMessage(data)
	}
	return res, nil
}

// srvErrorResult returns a tool result that reports err to the model.
func srvErrorResult(err error) *sdk.CallToolResult {
	return &sdk.CallToolResult{
		Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}},
		IsError: true,
	}
}

package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/resource"
)

// mediaType returns the lower-case media type of a MIME type without its
// parameters ("" when t is empty or malformed).
func mediaType(t string) string {
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

// contentOf maps the content of a resource to MCP content blocks: text
// and JSON become text, image/* and audio/* become image and audio blocks
// with their MIME type, anything else becomes an embedded resource (text
// when the data is textual UTF-8, a blob otherwise). It also returns the
// data that was read and its media type.
func contentOf(ctx context.Context, r resource.Resource) ([]sdk.Content, []byte, string, error) {
	if r == nil {
		return nil, nil, "", nil
	}
	if cc, ok := r.(bridge.ContentCarrier); ok {
		return cc.MCPContent(), nil, bridge.ToolContentType, nil
	}
	data, err := r.Read(ctx)
	if err != nil {
		return nil, nil, "", fmt.Errorf("reading %q: %w", r.URI(), err)
	}
	mt := mediaType(r.Type())
	switch {
	case strings.HasPrefix(mt, "image/"):
		return []sdk.Content{&sdk.ImageContent{Data: data, MIMEType: r.Type()}}, data, mt, nil
	case strings.HasPrefix(mt, "audio/"):
		return []sdk.Content{&sdk.AudioContent{Data: data, MIMEType: r.Type()}}, data, mt, nil
	case (mt == "" || strings.HasPrefix(mt, "text/") || resource.IsJSON(mt)) && utf8.Valid(data):
		return []sdk.Content{&sdk.TextContent{Text: string(data)}}, data, mt, nil
	}
	return []sdk.Content{&sdk.EmbeddedResource{Resource: resourceContents(r.URI(), r.Type(), mt, data)}}, data, mt, nil
}

// resourceContents builds the contents of a resource read: text for
// textual UTF-8 data, a blob otherwise.
func resourceContents(uri, typ, mt string, data []byte) *sdk.ResourceContents {
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

// toolResult turns the output of a toolkit call into an MCP tool result.
// structured asks for structuredContent (the tool has an output schema):
// JSON output is then sent both as text and as structuredContent.
func toolResult(ctx context.Context, out resource.Resource, structured bool) (*sdk.CallToolResult, error) {
	res := &sdk.CallToolResult{Content: []sdk.Content{}}
	if out == nil {
		return res, nil
	}
	res.Meta = resource.MetaOf(out)
	content, data, mt, err := contentOf(ctx, out)
	if err != nil {
		return nil, err
	}
	if content != nil {
		res.Content = content
	}
	if sc, ok := out.(bridge.StructuredCarrier); ok {
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

// errorResult returns a tool result that reports err to the model.
func errorResult(err error) *sdk.CallToolResult {
	return &sdk.CallToolResult{
		Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}},
		IsError: true,
	}
}

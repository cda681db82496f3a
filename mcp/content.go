package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/mcp/internal/wire"
)

// MIME types of mapped contents.
const (
	typeText = "text/plain; charset=utf-8"
	typeJSON = "application/json"
)

// maxErrorText caps the server text carried by a tool error.
const maxErrorText = 4 << 10

// contentRes is a resource holding a mapped content in memory.
type contentRes struct {
	uri, name, desc, mime string
	data                  []byte
}

func (r *contentRes) URI() string         { return r.uri }
func (r *contentRes) Name() string        { return r.name }
func (r *contentRes) Description() string { return r.desc }
func (r *contentRes) Type() string        { return r.mime }

// Read returns a copy of the content.
func (r *contentRes) Read(context.Context) ([]byte, error) { return slices.Clone(r.data), nil }

// linkRes is a resource link: reading it fetches the resource from the
// server.
type linkRes struct {
	c                     *Connector
	uri, name, desc, mime string
}

func (r *linkRes) URI() string         { return r.uri }
func (r *linkRes) Name() string        { return r.name }
func (r *linkRes) Description() string { return r.desc }
func (r *linkRes) Type() string        { return r.mime }

// Read calls resources/read on the server.
func (r *linkRes) Read(ctx context.Context) ([]byte, error) {
	rc, err := r.c.readResource(ctx, r, r.uri)
	return rc.Data, err
}

// carried is the output of a remote tool or the content of a remote prompt
// message: the resource the guide docs/connectors.md describes, which also
// keeps the MCP content blocks (and structured content) it was mapped from.
// A toolkit served over MCP (a gateway) sends those on unchanged, so an
// embedded resource, a resource link or a mix of text and images reaches
// the downstream client as the upstream server sent it.
type carried struct {
	toolkit.Resource
	blocks     []sdk.Content
	structured any
	meta       map[string]any // the result's _meta
}

var (
	_ bridge.ContentCarrier    = (*carried)(nil)
	_ bridge.StructuredCarrier = (*carried)(nil)
	_ toolkit.MetaCarrier      = (*carried)(nil)
)

// MetaData returns the `_meta` of the upstream result, or nil.
func (r *carried) MetaData() map[string]any { return r.meta }

// MCPContent returns the content blocks of the upstream result.
func (r *carried) MCPContent() []sdk.Content { return r.blocks }

// MCPStructuredContent returns the upstream structured content, or nil.
func (r *carried) MCPStructuredContent() any { return r.structured }

// carry attaches the blocks r was mapped from, and the result's `_meta`,
// to r.
func carry(r toolkit.Resource, blocks []sdk.Content, structured any, meta map[string]any) toolkit.Resource {
	if r == nil {
		return nil
	}
	if blocks == nil {
		blocks = []sdk.Content{}
	}
	return &carried{Resource: r, blocks: blocks, structured: structured, meta: meta}
}

// resultURI names a result that has no URI of its own:
// mcp://SERVER/KIND/NAME.
func (c *Connector) resultURI(kind, name string) string {
	host := c.names.resultHost.Load()
	if host == nil {
		h := uriHost(c.serverName())
		host = &h
	}
	return "mcp://" + *host + "/" + kind + "/" + url.PathEscape(name)
}

// uriHost turns a server name into the host part of result URIs.
func uriHost(server string) string {
	host := []byte(strings.ToLower(server))
	for i, b := range host {
		if !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-' || b == '.') {
			host[i] = '-'
		}
	}
	if len(host) == 0 {
		return "server"
	}
	return string(host)
}

// toolResult maps a tools/call result to the tool's output (see the
// guide docs/connectors.md, "Results").
func (c *Connector) toolResult(name string, res *sdk.CallToolResult) (any, error) {
	if res == nil {
		return nil, nil
	}
	if res.IsError {
		var texts []string
		for _, ct := range res.Content {
			if t, ok := ct.(*sdk.TextContent); ok && t.Text != "" {
				texts = append(texts, t.Text)
			}
		}
		msg := strings.Join(texts, "\n")
		if msg == "" {
			msg = "the tool reported an error"
		}
		if len(msg) > maxErrorText {
			msg = msg[:maxErrorText] + "…"
		}
		return nil, fmt.Errorf("%w: tool %q of server %s: %s", errs.ErrToolFailed, name, c.serverName(), msg)
	}
	what := reqName{"tool", name}
	size := contentSize(res.Content...)
	if err := c.checkSize(what, size); err != nil {
		return nil, err
	}
	if err := checkMeta(res.Meta); err != nil {
		return nil, fmt.Errorf("%w: tool %q of server %s: %w", errs.ErrToolFailed, name, c.serverName(), err)
	}
	meta := dataMeta(res.Meta)
	uri := c.resultURI("tool", name)
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("%w: tool %q of server %s: structured content: %v", errs.ErrToolFailed, name, c.serverName(), err)
		}
		if bytes.Contains(b, wire.TooDeepJSON) {
			// A value clamped on its way in (package internal/wire).
			return nil, fmt.Errorf("%w: tool %q of server %s: the answer nests more than %d levels deep", errs.ErrToolFailed, name, c.serverName(), wire.MaxDepth)
		}
		if err := c.checkSize(what, size+int64(len(b))); err != nil {
			return nil, err
		}
		return carry(&contentRes{uri: uri, name: name, mime: typeJSON, data: b}, res.Content, res.StructuredContent, meta), nil
	}
	switch len(res.Content) {
	case 0:
		if meta != nil {
			// No output, but a _meta to pass on: an empty text.
			return carry(&contentRes{uri: uri, name: name, mime: typeText}, res.Content, nil, meta), nil
		}
		return nil, nil
	case 1:
		r, err := c.contentResource(res.Content[0], uri, name)
		if err != nil {
			return nil, fmt.Errorf("%w: tool %q of server %s: %v", errs.ErrToolFailed, name, c.serverName(), err)
		}
		return carry(r, res.Content, nil, meta), nil
	}
	texts := make([]string, 0, len(res.Content))
	for _, ct := range res.Content {
		t, ok := ct.(*sdk.TextContent)
		if !ok {
			texts = nil
			break
		}
		texts = append(texts, t.Text)
	}
	if texts != nil {
		return carry(&contentRes{uri: uri, name: name, mime: typeText, data: []byte(strings.Join(texts, "\n"))}, res.Content, nil, meta), nil
	}
	b, err := json.Marshal(res.Content)
	if err != nil {
		return nil, fmt.Errorf("%w: tool %q of server %s: content: %v", errs.ErrToolFailed, name, c.serverName(), err)
	}
	return carry(&contentRes{uri: uri, name: name, mime: typeJSON, data: b}, res.Content, nil, meta), nil
}

// contentResource maps one content to a resource; uri and name are used
// when the content has none of its own.
func (c *Connector) contentResource(ct sdk.Content, uri, name string) (toolkit.Resource, error) {
	switch v := ct.(type) {
	case *sdk.TextContent:
		return &contentRes{uri: uri, name: name, mime: typeText, data: []byte(v.Text)}, nil
	case *sdk.ImageContent:
		return &contentRes{uri: uri, name: name, mime: v.MIMEType, data: v.Data}, nil
	case *sdk.AudioContent:
		return &contentRes{uri: uri, name: name, mime: v.MIMEType, data: v.Data}, nil
	case *sdk.EmbeddedResource:
		rc := v.Resource
		if rc == nil {
			return nil, errors.New("embedded resource without contents")
		}
		r := &contentRes{uri: uri, name: name, mime: rc.MIMEType}
		if validURI(rc.URI) {
			r.uri = rc.URI
		}
		if rc.Blob != nil {
			r.data = rc.Blob
		} else {
			r.data = []byte(rc.Text)
			if r.mime == "" {
				r.mime = typeText
			}
		}
		return r, nil
	case *sdk.ResourceLink:
		if !validURI(v.URI) {
			return nil, fmt.Errorf("resource link with an invalid URI %.200q", v.URI)
		}
		n := v.Name
		if n == "" {
			n = v.URI
		}
		return &linkRes{c: c, uri: v.URI, name: n, desc: v.Description, mime: v.MIMEType}, nil
	case nil:
		return nil, errors.New("empty content")
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return &contentRes{uri: uri, name: name, mime: typeJSON, data: b}, nil
	}
}

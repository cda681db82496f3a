package testserver

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The `_meta` catalogue (AddMetaItems): items and answers that carry
// `_meta`, shaped like an MCP Apps server's. MetaJSON gives each one's
// `_meta` as the compact JSON encoding/json writes (keys sorted).
const (
	// MetaViewURI is the UI resource of the "app_view" tool.
	MetaViewURI = "ui://test/view.html"
	// MetaAppMIME is the MIME type of an MCP App's HTML.
	MetaAppMIME = "text/html;profile=mcp-app"
	// MetaViewHTML is the content of MetaViewURI.
	MetaViewHTML = "<!doctype html><p>view</p>"
)

// MetaJSON is the `_meta` of each item and answer of the `_meta`
// catalogue, by what carries it.
var MetaJSON = map[string]string{
	"tool app_view":        `{"ui":{"resourceUri":"ui://test/view.html"},"x.example/tag":"tool"}`,
	"tool app_only":        `{"ui":{"resourceUri":"ui://test/view.html","visibility":["app"]},"ui/resourceUri":"ui://test/view.html"}`,
	"result app_view":      `{"ui":{"state":{"n":1}},"x.example/tag":"result"}`,
	"result meta_empty":    `{"x.example/tag":"empty"}`,
	"prompt meta_prompt":   `{"x.example/tag":"prompt"}`,
	"rendered meta_prompt": `{"x.example/tag":"rendered"}`,
	"block meta_prompt":    `{"x.example/tag":"block"}`,
	"resource view":        `{"ui":{"prefersBorder":true}}`,
	"contents view":        `{"ui":{"csp":{"connectDomains":["https://api.example"]},"prefersBorder":true}}`,
	"template meta":        `{"x.example/tag":"template"}`,
	"contents meta":        `{"x.example/tag":"templated"}`,
}

// MetaServerExtensions is the JSON of the extensions MetaOptions declares.
const MetaServerExtensions = `{"io.modelcontextprotocol/ui":{"version":"test"}}`

// MetaOptions returns server options that declare the extensions of
// MetaServerExtensions (and logging, as the SDK's default does).
func MetaOptions() *sdk.ServerOptions {
	var ext map[string]any
	if err := json.Unmarshal([]byte(MetaServerExtensions), &ext); err != nil {
		panic(err)
	}
	return &sdk.ServerOptions{Capabilities: &sdk.ServerCapabilities{Extensions: ext, Logging: &sdk.LoggingCapabilities{}}}
}

// metaOf decodes the `_meta` of MetaJSON[key].
func metaOf(key string) sdk.Meta {
	var m sdk.Meta
	if err := json.Unmarshal([]byte(MetaJSON[key]), &m); err != nil {
		panic(err)
	}
	return m
}

// AddMetaItems adds the `_meta` catalogue: tools app_view (text "shown")
// and app_only (text "app"), both naming MetaViewURI, and meta_empty (no
// content); prompt meta_prompt (one user message "meta"); resource
// MetaViewURI (MetaAppMIME, MetaViewHTML); template "meta://{id}" (text
// of the id). Each carries the `_meta` MetaJSON gives it. The tool
// client_extensions answers the JSON of the extensions the calling client
// declares ("null" for none).
func (s *Server) AddMetaItems() {
	s.AddTool(&sdk.Tool{Name: "client_extensions", InputSchema: ObjectSchema()},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var ext map[string]any
			if caps := req.ClientCapabilities(); caps != nil {
				ext = caps.Extensions
			}
			b, err := json.Marshal(ext)
			if err != nil {
				return nil, err
			}
			return text(string(b)), nil
		})
	s.AddTool(&sdk.Tool{Name: "app_view", InputSchema: ObjectSchema(), Meta: metaOf("tool app_view")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res := text("shown")
			res.Meta = metaOf("result app_view")
			return res, nil
		})
	s.AddTool(&sdk.Tool{Name: "app_only", InputSchema: ObjectSchema(), Meta: metaOf("tool app_only")},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("app"), nil })
	s.AddTool(&sdk.Tool{Name: "meta_empty", InputSchema: ObjectSchema()},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{}, Meta: metaOf("result meta_empty")}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "meta_prompt", Meta: metaOf("prompt meta_prompt")},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{
				Meta:     metaOf("rendered meta_prompt"),
				Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "meta", Meta: metaOf("block meta_prompt")}}},
			}, nil
		})
	s.AddResource(&sdk.Resource{URI: MetaViewURI, Name: "view", MIMEType: MetaAppMIME, Meta: metaOf("resource view")},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{
				URI: req.Params.URI, MIMEType: MetaAppMIME, Text: MetaViewHTML, Meta: metaOf("contents view"),
			}}}, nil
		})
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "meta://{id}", Name: "meta", Meta: metaOf("template meta")},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{
				URI: req.Params.URI, MIMEType: "text/plain", Text: req.Params.URI[len("meta://"):], Meta: metaOf("contents meta"),
			}}}, nil
		})
}

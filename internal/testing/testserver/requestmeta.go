package testserver

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// RequestMetaURI is the resource of AddRequestMetaItems.
const RequestMetaURI = "reqmeta://echo"

// AddRequestMetaItems adds the tool and the prompt "request_meta" and the
// resource RequestMetaURI, each of which answers (the tool's text, the
// prompt's one user message, the resource's text) the JSON of the `_meta`
// its request carried, as the SDK decoded it ("null" for none).
func (s *Server) AddRequestMetaItems() {
	echo := func(m sdk.Meta) string {
		b, err := json.Marshal(m)
		if err != nil {
			return err.Error()
		}
		return string(b)
	}
	s.AddTool(&sdk.Tool{Name: "request_meta", InputSchema: ObjectSchema()},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(echo(req.Params.Meta)), nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "request_meta"},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: echo(req.Params.Meta)}}}}, nil
		})
	s.AddResource(&sdk.Resource{URI: RequestMetaURI, Name: "request_meta", MIMEType: "application/json"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{
				URI: req.Params.URI, MIMEType: "application/json", Text: echo(req.Params.Meta),
			}}}, nil
		})
}

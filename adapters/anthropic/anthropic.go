package anthropic

import (
	"context"
	"encoding/base64"
	"encoding/json"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/llmkit/toolkit/adapters/adapter"
	"github.com/llmkit/toolkit/adapters/internal/adapt"
	"github.com/llmkit/toolkit/model"
)

// MaxImageBytes bounds an image sent to the model (the Messages API's
// limit per image); a larger one is described in text instead.
const MaxImageBytes = 5 << 20

// MaxDocumentBytes bounds a PDF document sent to the model (the Messages
// API's limit per request); a larger one is described in text instead.
const MaxDocumentBytes = 32 << 20

// media are the types a tool_result accepts: images and PDF documents.
var media = adapt.WebImages(MaxImageBytes).WithPDF(MaxDocumentBytes)

// Tools offers a toolkit's tools to Claude and runs the calls it makes. It
// is safe for concurrent use.
type Tools struct {
	core   *adapt.Core
	params *adapt.Converter[anthropic.ToolUnionParam]
	beta   *adapt.Converter[anthropic.BetaTool]
}

// New returns Tools over tk, configured by opts (the options of package
// [adapter]).
func New(tk adapter.Toolkit, opts ...adapter.Option) *Tools {
	core := adapt.NewCore(tk, opts...)
	beta := func(d model.Definition) (anthropic.BetaTool, error) { return newBetaTool(core, d) }
	return &Tools{core: core, params: adapt.NewConverter(core, toolParam), beta: adapt.NewConverter(core, beta)}
}

// Catalog returns the catalog Tools reads, for searching (see
// model.Catalog.Search and ToolParamsOf).
func (t *Tools) Catalog() *model.Catalog { return t.core.Catalog }

// ToolParams returns the toolkit's current tools as Messages API tool
// definitions (MessageNewParams.Tools). Tools that cannot be converted are
// left out and reported in the error; the others are returned and usable.
// The values returned are shared: do not modify them.
func (t *Tools) ToolParams(ctx context.Context) ([]anthropic.ToolUnionParam, error) {
	return t.params.Current(ctx)
}

// ToolParamsOf converts definitions (from the catalog's Definitions or
// Search) to Messages API tool definitions.
func (t *Tools) ToolParamsOf(defs []model.Definition) ([]anthropic.ToolUnionParam, error) {
	return t.params.Of(defs)
}

// ToolChoice returns the tool choice (MessageNewParams.ToolChoice) that
// makes Claude call the tool key stands for: a toolkit key ("ns.name",
// toolkit.Item.Key) or a bare name, as toolkit Lookup resolves it, under
// the model-safe name the tool is offered as. An error wrapping
// toolkit.ErrNotFound says that key names no tool offered to the model
// (unknown, or left out by the filter).
func (t *Tools) ToolChoice(ctx context.Context, key string) (anthropic.ToolChoiceUnionParam, error) {
	name, err := t.core.NameFor(ctx, key)
	if err != nil {
		return anthropic.ToolChoiceUnionParam{}, err
	}
	return anthropic.ToolChoiceParamOfTool(name), nil
}

func toolParam(d model.Definition) (anthropic.ToolUnionParam, error) {
	in, err := encode(d)
	if err != nil {
		return anthropic.ToolUnionParam{}, err
	}
	tp := anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{
		Properties: in.properties, Required: in.required, ExtraFields: in.extra,
	}, in.name)
	if in.description != "" {
		tp.OfTool.Description = anthropic.String(in.description)
	}
	return tp, nil
}

// encoded is a definition as the Messages API takes it, in the terms of
// the SDK's input schema types (ToolInputSchemaParam, and
// BetaToolInputSchemaParam for the tool runner): the schema's properties
// and required list, its other members (raw JSON, written unchanged), and
// the tool's name and description.
type encoded struct {
	name, description string
	properties        any
	required          []string
	extra             map[string]any
}

// encode encodes d as model.Encode does for Anthropic.
func encode(d model.Definition) (encoded, error) {
	e, err := adapt.Encode(model.Anthropic, d)
	if err != nil {
		return encoded{}, err
	}
	schema, err := e.Object("input_schema")
	if err != nil {
		return encoded{}, err
	}
	out := encoded{name: e.String("name"), description: e.String("description")}
	if p, ok := schema["properties"]; ok {
		out.properties = p
	}
	if r, ok := schema["required"]; ok {
		if err := json.Unmarshal(r, &out.required); err != nil {
			return encoded{}, err
		}
	}
	for k, v := range schema {
		switch k {
		case "type", "properties", "required":
			continue
		}
		if out.extra == nil {
			out.extra = map[string]any{}
		}
		out.extra[k] = v
	}
	return out, nil
}

// Run runs the tool_use blocks of msg (an assistant message) and returns
// the user message to send next, holding one tool_result per call in call
// order. ok is false when msg has no tool_use block.
func (t *Tools) Run(ctx context.Context, msg *anthropic.Message) (reply anthropic.MessageParam, ok bool) {
	blocks := t.Results(ctx, msg.Content)
	if len(blocks) == 0 {
		return anthropic.MessageParam{}, false
	}
	return anthropic.NewUserMessage(blocks...), true
}

// Results runs the tool_use blocks of content and returns their
// tool_result blocks, in call order (nil when there is none). Other blocks
// are ignored.
func (t *Tools) Results(ctx context.Context, content []anthropic.ContentBlockUnion) []anthropic.ContentBlockParamUnion {
	var calls []model.ToolCall
	for _, b := range content {
		if b.Type == "tool_use" {
			calls = append(calls, adapt.ToolCall(b.ID, b.Name, b.Input))
		}
	}
	results := t.core.Dispatch(ctx, calls)
	if len(results) == 0 {
		return nil
	}
	out := make([]anthropic.ContentBlockParamUnion, 0, len(results))
	for _, r := range results {
		tr := &anthropic.ToolResultBlockParam{ToolUseID: r.ID}
		if r.IsError {
			tr.IsError = anthropic.Bool(true)
		}
		for _, p := range adapt.Parts(ctx, r, media) {
			var c anthropic.ToolResultBlockParamContentUnion
			if p.IsMedia() && p.MIME == adapt.PDF {
				c.OfDocument = &anthropic.DocumentBlockParam{
					Source: anthropic.DocumentBlockParamSourceUnion{OfBase64: &anthropic.Base64PDFSourceParam{
						Data: base64.StdEncoding.EncodeToString(p.Data),
					}},
					Title: anthropic.String(p.FileName()),
				}
			} else if p.IsMedia() {
				c.OfImage = &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{
					OfBase64: &anthropic.Base64ImageSourceParam{
						Data:      base64.StdEncoding.EncodeToString(p.Data),
						MediaType: anthropic.Base64ImageSourceMediaType(p.MIME),
					},
				}}
			} else if p.Text != "" {
				// The API refuses empty text blocks; a tool_result
				// without content is allowed.
				c.OfText = &anthropic.TextBlockParam{Text: p.Text}
			} else {
				continue
			}
			tr.Content = append(tr.Content, c)
		}
		out = append(out, anthropic.ContentBlockParamUnion{OfToolResult: tr})
	}
	return out
}

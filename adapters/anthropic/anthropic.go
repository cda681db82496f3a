package anthropic

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"

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

// WithToolReferences makes the Disclosed views of Tools let Claude load
// the tools their search finds itself: a view's ToolParams are then the
// search tool, the always-offered tools, and every other tool with
// defer_loading (the same list on every request, which keeps the prompt
// cache), and the result of a search call holds, after its text, a
// tool_reference block for each tool found, which loads that tool's
// definition into Claude's context. The search is still the toolkit's
// (its ranking, its policy). Without it, a view sends the tools found as
// ordinary tools from the next request on. It does not change the tool
// runner's tools (BetaTools), which cannot be deferred.
func WithToolReferences(on bool) adapter.Option {
	return func(c *adapter.Config) { c.ToolReferences = on }
}

// Tools offers a toolkit's tools to Claude and runs the calls it makes. It
// is safe for concurrent use.
type Tools struct {
	core   *adapt.Core
	params *adapt.Converter[anthropic.ToolUnionParam]
	beta   *adapt.Converter[anthropic.BetaTool]
	// deferred converts the tools DeferredToolParams sends, apart from
	// params so that the two lists do not evict each other's values.
	deferred *adapt.Converter[anthropic.ToolUnionParam]
	// refs is set in a Disclosed view of Tools made WithToolReferences.
	refs bool
	// toolRefs is WithToolReferences.
	toolRefs bool
}

// New returns Tools over tk, configured by opts (the options of package
// [adapter]).
func New(tk adapter.Toolkit, opts ...adapter.Option) *Tools {
	core := adapt.NewCore(tk, opts...)
	params := func(_ *adapt.Core, d model.Definition) (anthropic.ToolUnionParam, error) { return toolParam(d) }
	return &Tools{core: core, params: adapt.NewConverter(core, params), beta: adapt.NewConverter(core, newBetaTool),
		deferred: adapt.NewConverter(core, params), toolRefs: adapter.NewConfig(opts...).ToolReferences}
}

// Disclosed returns the view of t's tools for one conversation whose
// model finds its tools by searching (progressive disclosure, see
// model.Disclosure and adapter.WithDisclosure): its ToolParams and
// BetaTools offer the search tool, the always-offered tools and the tools
// l holds, and its Run, Results and tool runner tools answer the search
// tool's calls, the tools found joining l and so the next request, and
// run the other calls as t does. Keep one l per conversation (nil is a
// new one); views share t's catalog and conversions and are cheap to
// make. (Claude can also search on the server side, the whole catalogue
// sent deferred: see [Tools.DeferredToolParams].)
//
// The SDK's tool runner runs a turn's tool calls just before it sends the
// next request, with no pause in between for [RunnerTools.Update]: with
// a view's BetaTools, the tools a search finds reach Claude one request
// after the search's answer. Prefer the Messages loop (ToolParams and
// Run) for a Disclosed view.
func (t *Tools) Disclosed(l *model.Loaded) *Tools {
	core := t.core.Disclosed(l)
	return &Tools{core: core, params: t.params.For(core), beta: t.beta.For(core), deferred: t.deferred,
		refs: t.toolRefs, toolRefs: t.toolRefs}
}

// DeferredToolParams returns the tools of a request in which Claude
// searches the toolkit's tools itself, on the server (Anthropic's tool
// search): first the tool search tool (tool_search_tool_bm25; put
// tool_search_tool_regex in its place to search by pattern), then the
// always-offered tools (adapter.WithDisclosure with model.WithAlways) as
// usual, then every other tool the filter keeps with defer_loading, whose
// definition reaches Claude only when its search finds it (a
// tool_reference in a tool_search_tool_result). The calls of the tools
// found are ordinary tool_use blocks: [Tools.Run] runs them. The whole
// catalogue travels in every request, but only the tools found count in
// Claude's context. Tools that cannot be converted are left out and
// reported in the error; the others are returned and usable. The values
// returned are shared: do not modify them.
func (t *Tools) DeferredToolParams(ctx context.Context) ([]anthropic.ToolUnionParam, error) {
	return t.deferredParams(ctx, anthropic.ToolUnionParam{OfToolSearchToolBm25_20251119: &anthropic.ToolSearchToolBm25_20251119Param{
		Type: anthropic.ToolSearchToolBm25_20251119TypeToolSearchToolBm25_20251119,
	}})
}

// deferredParams returns search, the always-offered tools, and every
// other tool deferred.
func (t *Tools) deferredParams(ctx context.Context, search anthropic.ToolUnionParam) ([]anthropic.ToolUnionParam, error) {
	always, deferred, err := t.core.Disclosure.Split(ctx)
	if always == nil && deferred == nil && err != nil {
		return nil, err
	}
	a, aerr := t.params.Of(always)
	d, derr := t.deferred.Of(deferred)
	out := append(append([]anthropic.ToolUnionParam{search}, a...), d...)
	return out, errors.Join(err, aerr, derr)
}

// Catalog returns the catalog Tools reads, for searching (see
// model.Catalog.Search and ToolParamsOf).
func (t *Tools) Catalog() *model.Catalog { return t.core.Catalog }

// ToolParams returns the toolkit's current tools as Messages API tool
// definitions (MessageNewParams.Tools). Tools that cannot be converted are
// left out and reported in the error; the others are returned and usable.
// The values returned are shared: do not modify them.
func (t *Tools) ToolParams(ctx context.Context) ([]anthropic.ToolUnionParam, error) {
	if t.refs {
		search, err := t.params.Of([]model.Definition{t.core.Disclosure.SearchTool()})
		if err != nil {
			return nil, err
		}
		return t.deferredParams(ctx, search[0])
	}
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
	if in.deferLoading {
		tp.OfTool.DeferLoading = anthropic.Bool(true)
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
	deferLoading      bool
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
	out := encoded{name: e.String("name"), description: e.String("description"), deferLoading: e.Bool("defer_loading")}
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
	searches := map[string]bool{}
	if t.refs {
		for _, c := range calls {
			if t.core.Disclosure.IsSearch(c) {
				searches[c.ID] = true
			}
		}
	}
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
		if searches[r.ID] && !r.IsError {
			for _, name := range foundNames(r) {
				tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{
					OfToolReference: &anthropic.ToolReferenceBlockParam{ToolName: name},
				})
			}
		}
		out = append(out, anthropic.ContentBlockParamUnion{OfToolResult: tr})
	}
	return out
}

// foundNames returns the names of the tools a search call's result found.
func foundNames(r model.Result) []string {
	var ans struct {
		Tools []model.FoundTool `json:"tools"`
	}
	if err := json.Unmarshal([]byte(r.Content), &ans); err != nil {
		return nil
	}
	names := make([]string, 0, len(ans.Tools))
	for _, f := range ans.Tools {
		names = append(names, f.Name)
	}
	return names
}

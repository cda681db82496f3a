package openai

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/llmkit/toolkit/adapters/adapter"
	"github.com/llmkit/toolkit/adapters/internal/adapt"
	"github.com/llmkit/toolkit/model"
)

// MaxImageBytes bounds an image sent to the model; a larger one is
// described in text instead.
const MaxImageBytes = 20 << 20

// MaxDocumentBytes bounds a PDF document sent to the model in a Responses
// function call output; a larger one is described in text instead.
const MaxDocumentBytes = 32 << 20

// images are the image types OpenAI models accept; documents adds the PDF
// documents a Responses function call output takes.
var (
	images    = adapt.WebImages(MaxImageBytes)
	documents = images.WithPDF(MaxDocumentBytes)
)

// WithStrict sets whether tools go in OpenAI's strict mode (Structured
// Outputs for function calling: the model's arguments always match the
// schema). It is on by default, for every tool whose schema qualifies
// (see model.IsStrictSchema: typically a Go struct's schema with every
// field required); the others are sent with "strict": false, as are all
// tools with WithStrict(false). A definition that already has Strict set
// (model.WithStrict on a catalog of one's own) stays strict unless
// WithStrict(false) is given.
func WithStrict(on bool) adapter.Option {
	return func(c *adapter.Config) { c.Strict = &on }
}

// Tools offers a toolkit's tools to OpenAI models and runs the calls they
// make. It is safe for concurrent use.
type Tools struct {
	core  *adapt.Core
	chat  *adapt.Converter[openai.ChatCompletionToolUnionParam]
	resps *adapt.Converter[responses.ToolUnionParam]
}

// New returns Tools over tk, configured by opts (the options of package
// [adapter], and [WithStrict]).
func New(tk adapter.Toolkit, opts ...adapter.Option) *Tools {
	core := adapt.NewCore(tk, opts...)
	strict := true
	if s := adapter.NewConfig(opts...).Strict; s != nil {
		strict = *s
	}
	chat := func(_ *adapt.Core, d model.Definition) (openai.ChatCompletionToolUnionParam, error) {
		return chatTool(strictness(d, strict))
	}
	resps := func(_ *adapt.Core, d model.Definition) (responses.ToolUnionParam, error) {
		return responseTool(strictness(d, strict))
	}
	return &Tools{core: core, chat: adapt.NewConverter(core, chat), resps: adapt.NewConverter(core, resps)}
}

// Disclosed returns the view of t's tools for one conversation whose
// model finds its tools by searching (progressive disclosure, see
// model.Disclosure and adapter.WithDisclosure): its ChatTools and
// ResponseTools offer the search tool, the always-offered tools and the
// tools l holds, and its RunChat and RunResponse answer the search tool's
// calls, the tools found joining l and so the next request, and run the
// other calls as t does. Keep one l per conversation (nil is a new one);
// views share t's catalog and conversions and are cheap to make.
func (t *Tools) Disclosed(l *model.Loaded) *Tools {
	core := t.core.Disclosed(l)
	return &Tools{core: core, chat: t.chat.For(core), resps: t.resps.For(core)}
}

// strictness returns d with Strict set as WithStrict says.
func strictness(d model.Definition, on bool) model.Definition {
	d.Strict = on && (d.Strict || model.IsStrictSchema(d.Parameters))
	return d
}

// Catalog returns the catalog Tools reads, for searching (see
// model.Catalog.Search and ChatToolsOf).
func (t *Tools) Catalog() *model.Catalog { return t.core.Catalog }

// ChatTools returns the toolkit's current tools as Chat Completions tool
// parameters (ChatCompletionNewParams.Tools). Tools that cannot be
// converted are left out and reported in the error; the others are
// returned and usable. The values returned are shared: do not modify
// them.
func (t *Tools) ChatTools(ctx context.Context) ([]openai.ChatCompletionToolUnionParam, error) {
	return t.chat.Current(ctx)
}

// ChatToolsOf converts definitions (from the catalog's Definitions or
// Search) to Chat Completions tool parameters.
func (t *Tools) ChatToolsOf(defs []model.Definition) ([]openai.ChatCompletionToolUnionParam, error) {
	return t.chat.Of(defs)
}

// ResponseTools returns the toolkit's current tools as Responses API
// function tools (ResponseNewParams.Tools), like ChatTools.
func (t *Tools) ResponseTools(ctx context.Context) ([]responses.ToolUnionParam, error) {
	return t.resps.Current(ctx)
}

// ResponseToolsOf converts definitions to Responses API function tools.
func (t *Tools) ResponseToolsOf(defs []model.Definition) ([]responses.ToolUnionParam, error) {
	return t.resps.Of(defs)
}

// ChatToolChoice returns the Chat Completions tool choice
// (ChatCompletionNewParams.ToolChoice) that makes the model call the tool
// key stands for: a toolkit key ("ns.name", toolkit.Item.Key) or a bare
// name, as toolkit Lookup resolves it, under the model-safe name the
// tool is offered as. An error wrapping toolkit.ErrNotFound says that key
// names no tool offered to the model (unknown, or left out by the filter).
func (t *Tools) ChatToolChoice(ctx context.Context, key string) (openai.ChatCompletionToolChoiceOptionUnionParam, error) {
	name, err := t.core.NameFor(ctx, key)
	if err != nil {
		return openai.ChatCompletionToolChoiceOptionUnionParam{}, err
	}
	return openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: name}), nil
}

// ResponseToolChoice returns the Responses API tool choice
// (ResponseNewParams.ToolChoice) that makes the model call the tool key
// stands for, like ChatToolChoice.
func (t *Tools) ResponseToolChoice(ctx context.Context, key string) (responses.ResponseNewParamsToolChoiceUnion, error) {
	name, err := t.core.NameFor(ctx, key)
	if err != nil {
		return responses.ResponseNewParamsToolChoiceUnion{}, err
	}
	return responses.ResponseNewParamsToolChoiceUnion{OfFunctionTool: &responses.ToolChoiceFunctionParam{Name: name}}, nil
}

// function encodes d in format f and reads it as a function definition.
func function(f model.Format, d model.Definition) (shared.FunctionDefinitionParam, error) {
	fn, err := adapt.OpenAIFunction(f, d)
	if err != nil {
		return shared.FunctionDefinitionParam{}, err
	}
	params, err := fn.ParameterMembers()
	if err != nil {
		return shared.FunctionDefinitionParam{}, err
	}
	fd := shared.FunctionDefinitionParam{Name: fn.Name, Parameters: params, Strict: openai.Bool(fn.Strict)}
	if fn.Description != "" {
		fd.Description = openai.String(fn.Description)
	}
	return fd, nil
}

func chatTool(d model.Definition) (openai.ChatCompletionToolUnionParam, error) {
	fd, err := function(model.OpenAIChat, d)
	if err != nil {
		return openai.ChatCompletionToolUnionParam{}, err
	}
	return openai.ChatCompletionFunctionTool(fd), nil
}

func responseTool(d model.Definition) (responses.ToolUnionParam, error) {
	fd, err := function(model.OpenAIResponses, d)
	if err != nil {
		return responses.ToolUnionParam{}, err
	}
	return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
		Name:        fd.Name,
		Description: fd.Description,
		Parameters:  fd.Parameters,
		Strict:      fd.Strict,
	}}, nil
}

// RunChat runs the function calls of an assistant message (the message of
// a ChatCompletion choice) and returns the messages to append after it:
// one tool message per call, in call order, then, when calls returned
// images, one user message showing them. Tool calls of another type
// (custom tools) are not the toolkit's and are left to the caller. It
// returns nil when the message has no function call.
func (t *Tools) RunChat(ctx context.Context, msg openai.ChatCompletionMessage) []openai.ChatCompletionMessageParamUnion {
	var calls []model.ToolCall
	for _, tc := range msg.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		calls = append(calls, adapt.ToolCall(tc.ID, tc.Function.Name, []byte(tc.Function.Arguments)))
	}
	results := t.core.Dispatch(ctx, calls)
	if len(results) == 0 {
		return nil
	}
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(results)+1)
	var shown []openai.ChatCompletionContentPartUnionParam
	for _, r := range results {
		var texts []openai.ChatCompletionContentPartTextParam
		for _, p := range adapt.Parts(ctx, r, images) {
			if p.IsMedia() {
				shown = append(shown,
					openai.TextContentPart(fmt.Sprintf("Image returned by the tool call %s (%s):", r.ID, r.Name)),
					openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL(p)}))
				continue
			}
			texts = append(texts, openai.ChatCompletionContentPartTextParam{Text: p.Text})
		}
		if len(texts) == 1 {
			out = append(out, openai.ToolMessage(texts[0].Text, r.ID))
		} else {
			out = append(out, openai.ToolMessage(texts, r.ID))
		}
	}
	if len(shown) > 0 {
		out = append(out, openai.UserMessage(shown))
	}
	return out
}

// RunResponse runs the function_call items of a Responses output
// (Response.Output) and returns one function_call_output item per call,
// in call order, for the next request's input (with
// PreviousResponseID set, or after the output items turned into input).
// Items of other types are ignored. It returns nil when there is no
// function call.
func (t *Tools) RunResponse(ctx context.Context, output []responses.ResponseOutputItemUnion) []responses.ResponseInputItemUnionParam {
	var calls []model.ToolCall
	for _, it := range output {
		if it.Type != "function_call" {
			continue
		}
		fc := it.AsFunctionCall()
		calls = append(calls, adapt.ToolCall(fc.CallID, fc.Name, []byte(fc.Arguments)))
	}
	results := t.core.Dispatch(ctx, calls)
	if len(results) == 0 {
		return nil
	}
	out := make([]responses.ResponseInputItemUnionParam, 0, len(results))
	for _, r := range results {
		parts := adapt.Parts(ctx, r, documents)
		var item responses.ResponseInputItemUnionParam
		if len(parts) == 1 && !parts[0].IsMedia() {
			item = responses.ResponseInputItemParamOfFunctionCallOutput(parts[0].Text)
		} else {
			list := make(responses.ResponseFunctionCallOutputItemListParam, 0, len(parts))
			for _, p := range parts {
				if p.IsMedia() && p.MIME == adapt.PDF {
					list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{
						OfInputFile: &responses.ResponseInputFileContentParam{FileData: openai.String(dataURL(p)), Filename: openai.String(p.FileName())},
					})
				} else if p.IsMedia() {
					list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{
						OfInputImage: &responses.ResponseInputImageContentParam{ImageURL: openai.String(dataURL(p))},
					})
				} else {
					list = append(list, responses.ResponseFunctionCallOutputItemParamOfInputText(p.Text))
				}
			}
			item = responses.ResponseInputItemParamOfFunctionCallOutput(list)
		}
		item.OfFunctionCallOutput.CallID = openai.String(r.ID)
		out = append(out, item)
	}
	return out
}

// dataURL returns a media part as a data: URL.
func dataURL(p adapt.Part) string {
	return "data:" + p.MIME + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
}

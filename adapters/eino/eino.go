package eino

import (
	"context"
	"encoding/base64"

	einomodel "github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"github.com/llmkit/toolkit/adapters/adapter"
	"github.com/llmkit/toolkit/adapters/internal/adapt"
	"github.com/llmkit/toolkit/model"
)

// WithMultimodal makes Tools return tool.EnhancedInvokableTool values,
// whose results are schema.ToolResult parts: image outputs (PNG, JPEG, GIF,
// WebP, up to MaxImageBytes) then travel as base64 image parts after their
// description, for chat models that take images in tool results. Without
// it the tools are tool.InvokableTool values and images are described in
// text.
func WithMultimodal(on bool) adapter.Option {
	return func(c *adapter.Config) { c.Multimodal = on }
}

// MaxImageBytes bounds an image part of a multimodal result; a larger
// image is described in text instead.
const MaxImageBytes = 20 << 20

// images are the image types a multimodal result carries as parts.
var images = adapt.WebImages(MaxImageBytes)

// Tools turns a toolkit's tools into Eino tools. It is safe for
// concurrent use.
type Tools struct {
	core  *adapt.Core
	tools *adapt.Converter[tool.BaseTool]
}

// New returns Tools over tk, configured by opts (the options of package
// [adapter], and [WithMultimodal]).
func New(tk adapter.Toolkit, opts ...adapter.Option) *Tools {
	core := adapt.NewCore(tk, opts...)
	return &Tools{core: core, tools: adapt.NewConverter(core, newTool)}
}

// Disclosed returns the view of t's tools for one conversation whose
// model finds its tools by searching (progressive disclosure, see
// model.Disclosure and adapter.WithDisclosure): its Tools, Infos,
// ComposeOptions and AgentOptions offer the search tool, the
// always-offered tools and the tools l holds; the search tool's runs
// load what they find into l. Keep one l per conversation (nil is a new
// one); views share t's catalog and conversions and are cheap to make.
//
// A graph or agent run binds its tools when it starts, so the tools a
// search finds are offered from the next run on: take the view's
// AgentOptions (or ComposeOptions) again for each Generate or Stream.
func (t *Tools) Disclosed(l *model.Loaded) *Tools {
	core := t.core.Disclosed(l)
	return &Tools{core: core, tools: t.tools.For(core)}
}

// Catalog returns the catalog Tools reads, for searching (see
// model.Catalog.Search and ToolsOf).
func (t *Tools) Catalog() *model.Catalog { return t.core.Catalog }

// Tools returns the toolkit's current tools as Eino tools (each a
// tool.InvokableTool, or with WithMultimodal a tool.EnhancedInvokableTool),
// for compose.ToolsNodeConfig.Tools. Tools that
// cannot be converted are left out and reported in the error; the others
// are returned and usable.
func (t *Tools) Tools(ctx context.Context) ([]tool.BaseTool, error) {
	return t.tools.Current(ctx)
}

// ToolsOf converts definitions (from the catalog's Definitions or Search)
// to Eino tools.
func (t *Tools) ToolsOf(defs []model.Definition) ([]tool.BaseTool, error) {
	return t.tools.Of(defs)
}

// Infos returns the infos of the toolkit's current tools, for a chat
// model's WithTools. The infos are shared: do not modify them.
func (t *Tools) Infos(ctx context.Context) ([]*schema.ToolInfo, error) {
	ts, err := t.tools.Current(ctx)
	if ts == nil {
		return nil, err
	}
	out := make([]*schema.ToolInfo, len(ts))
	for i, v := range ts {
		// Info of the tools here never fails.
		out[i], _ = v.Info(ctx)
	}
	return out, err
}

// ToolChoice returns the chat model option that makes the model call the
// tool key stands for (einomodel.WithToolChoice with
// schema.ToolChoiceForced and that one tool allowed, for a chat model's
// Generate or Stream, or react.WithChatModelOptions): key is a toolkit
// key ("ns.name", toolkit.Item.Key) or a bare name, as toolkit Lookup
// resolves it, and the option names the model-safe name the tool is
// offered as. An error wrapping toolkit.ErrNotFound says that key names no
// tool offered to the model (unknown, or left out by the filter).
func (t *Tools) ToolChoice(ctx context.Context, key string) (einomodel.Option, error) {
	name, err := t.core.NameFor(ctx, key)
	if err != nil {
		return einomodel.Option{}, err
	}
	return einomodel.WithToolChoice(schema.ToolChoiceForced, name), nil
}

// ComposeOptions returns the options that make one run of a graph offer
// the toolkit's current tools to its chat models (model.WithTools with
// their infos) and run them in its tools nodes (compose.WithToolList):
// pass them to the run's Invoke or Stream, and a graph built once follows
// the toolkit. Tools that cannot be converted are left out and reported in
// the error; the options hold the others.
func (t *Tools) ComposeOptions(ctx context.Context) ([]compose.Option, error) {
	ts, err := t.tools.Current(ctx)
	if ts == nil && err != nil {
		return nil, err
	}
	infos := make([]*schema.ToolInfo, len(ts))
	for i, v := range ts {
		// Info of the tools here never fails.
		infos[i], _ = v.Info(ctx)
	}
	return []compose.Option{
		compose.WithChatModelOption(einomodel.WithTools(infos)),
		compose.WithToolsNodeOption(compose.WithToolList(ts...)),
	}, err
}

// AgentOptions returns the options that make one Generate or Stream of a
// ReAct agent (flow/agent/react) offer the toolkit's current tools to its
// chat model and run them in its tools node, whatever tools the agent was
// built with: a ReAct agent binds its tools when it is built, so an agent
// built once follows the toolkit only with these options on each call:
//
//	opts, err := tools.AgentOptions(ctx)
//	if err != nil { ... }
//	msg, err := agent.Generate(ctx, messages, opts...)
//
// They are the options react.WithTools gives for the toolkit's current
// tools. The chat model must take its tools from the call's options
// (model.WithTools), as Eino's chat models do. Tools that cannot be
// converted are left out and reported in the error; the options hold the
// others.
func (t *Tools) AgentOptions(ctx context.Context) ([]agent.AgentOption, error) {
	opts, err := t.ComposeOptions(ctx)
	if opts == nil {
		return nil, err
	}
	return []agent.AgentOption{agent.WithComposeOptions(opts...)}, err
}

// newTool returns the Eino tool of d, which runs through core: an
// invokable, or with WithMultimodal an enhanced.
func newTool(core *adapt.Core, d model.Definition) (tool.BaseTool, error) {
	fn, err := adapt.OpenAIFunction(model.OpenAIChat, d)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := s.UnmarshalJSON(fn.Parameters); err != nil {
		return nil, err
	}
	v := &invokable{core: core, info: &schema.ToolInfo{
		Name:        d.Name,
		Desc:        d.Description,
		ParamsOneOf: schema.NewParamsOneOfByJSONSchema(&s),
	}}
	if core.Multimodal {
		return (*enhanced)(v), nil
	}
	return v, nil
}

// invokable is one toolkit tool as an Eino tool.
type invokable struct {
	core *adapt.Core
	info *schema.ToolInfo
}

var _ tool.InvokableTool = (*invokable)(nil)

// Info returns the tool's name, description and parameters.
func (v *invokable) Info(context.Context) (*schema.ToolInfo, error) { return v.info, nil }

// InvokableRun runs the tool through the toolkit. Failures are returned as
// text for the model, with a nil error.
func (v *invokable) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	call := adapt.ToolCall(compose.GetToolCallID(ctx), v.info.Name, []byte(args))
	r := v.core.Dispatch(ctx, []model.ToolCall{call})[0]
	return adapt.Text(ctx, r), nil
}

// enhanced is one toolkit tool as a multimodal Eino tool.
type enhanced invokable

var _ tool.EnhancedInvokableTool = (*enhanced)(nil)

// Info returns the tool's name, description and parameters.
func (v *enhanced) Info(context.Context) (*schema.ToolInfo, error) { return v.info, nil }

// InvokableRun runs the tool through the toolkit and returns its output as
// text and image parts. Failures are returned as text for the model, with
// a nil error.
func (v *enhanced) InvokableRun(ctx context.Context, arg *schema.ToolArgument, _ ...tool.Option) (*schema.ToolResult, error) {
	var args []byte
	if arg != nil {
		args = []byte(arg.Text)
	}
	call := adapt.ToolCall(compose.GetToolCallID(ctx), v.info.Name, args)
	r := v.core.Dispatch(ctx, []model.ToolCall{call})[0]
	res := &schema.ToolResult{}
	for _, p := range adapt.Parts(ctx, r, images) {
		if !p.IsMedia() {
			res.Parts = append(res.Parts, schema.ToolOutputPart{Type: schema.ToolPartTypeText, Text: p.Text})
			continue
		}
		data := base64.StdEncoding.EncodeToString(p.Data)
		res.Parts = append(res.Parts, schema.ToolOutputPart{Type: schema.ToolPartTypeImage, Image: &schema.ToolOutputImage{
			MessagePartCommon: schema.MessagePartCommon{Base64Data: &data, MIMEType: p.MIME},
		}})
	}
	return res, nil
}

package langchaingo

import (
	"context"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/llmkit/toolkit/adapters/adapter"
	"github.com/llmkit/toolkit/adapters/internal/adapt"
	"github.com/llmkit/toolkit/model"
)

// Tools offers a toolkit's tools to LangChainGo models and runs the calls
// they make. It is safe for concurrent use.
type Tools struct {
	core   *adapt.Core
	llm    *adapt.Converter[llms.Tool]
	agents *adapt.Converter[tools.Tool]
}

// New returns Tools over tk, configured by opts (the options of package
// [adapter]).
func New(tk adapter.Toolkit, opts ...adapter.Option) *Tools {
	core := adapt.NewCore(tk, opts...)
	return &Tools{core: core, llm: adapt.NewConverter(core, llmTool), agents: adapt.NewConverter(core, newAgentTool)}
}

// Disclosed returns the view of t's tools for one conversation whose
// model finds its tools by searching (progressive disclosure, see
// model.Disclosure and adapter.WithDisclosure): its LLMTools and
// AgentTools offer the search tool, the always-offered tools and the
// tools l holds, and its Run and agent tools answer the search tool's
// calls, the tools found joining l and so the next request, and run the
// other calls as t does. Keep one l per conversation (nil is a new one);
// views share t's catalog and conversions and are cheap to make. An agent
// takes its tools when it is made: make it again with AgentTools to
// offer the tools found.
func (t *Tools) Disclosed(l *model.Loaded) *Tools {
	core := t.core.Disclosed(l)
	return &Tools{core: core, llm: t.llm.For(core), agents: t.agents.For(core)}
}

// Catalog returns the catalog Tools reads, for searching (see
// model.Catalog.Search and LLMToolsOf).
func (t *Tools) Catalog() *model.Catalog { return t.core.Catalog }

// LLMTools returns the toolkit's current tools for llms.WithTools. Tools
// that cannot be converted are left out and reported in the error; the
// others are returned and usable. The values returned are shared: do not
// modify them.
func (t *Tools) LLMTools(ctx context.Context) ([]llms.Tool, error) {
	return t.llm.Current(ctx)
}

// LLMToolsOf converts definitions (from the catalog's Definitions or
// Search) to llms.Tool values.
func (t *Tools) LLMToolsOf(defs []model.Definition) ([]llms.Tool, error) {
	return t.llm.Of(defs)
}

// ToolChoice returns the tool choice (for llms.WithToolChoice) that makes
// the model call the tool key stands for: a toolkit key ("ns.name",
// toolkit.Item.Key) or a bare name, as toolkit Lookup resolves it, under
// the model-safe name the tool is offered as. An error wrapping
// toolkit.ErrNotFound says that key names no tool offered to the model
// (unknown, or left out by the filter).
func (t *Tools) ToolChoice(ctx context.Context, key string) (llms.ToolChoice, error) {
	name, err := t.core.NameFor(ctx, key)
	if err != nil {
		return llms.ToolChoice{}, err
	}
	return llms.ToolChoice{Type: "function", Function: &llms.FunctionReference{Name: name}}, nil
}

func llmTool(_ *adapt.Core, d model.Definition) (llms.Tool, error) {
	fn, err := adapt.OpenAIFunction(model.OpenAIChat, d)
	if err != nil {
		return llms.Tool{}, err
	}
	return llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
		Name:        fn.Name,
		Description: fn.Description,
		Parameters:  fn.Parameters,
		Strict:      fn.Strict,
	}}, nil
}

// Run runs the function calls of choice and returns the messages to append
// to the conversation: the assistant message with the calls (and the
// choice's text, if any), then one tool message per call in call order. It
// returns nil when the choice has no function call.
func (t *Tools) Run(ctx context.Context, choice *llms.ContentChoice) []llms.MessageContent {
	if choice == nil {
		return nil
	}
	var calls []model.ToolCall
	ai := llms.MessageContent{Role: llms.ChatMessageTypeAI}
	if choice.Content != "" {
		ai.Parts = append(ai.Parts, llms.TextPart(choice.Content))
	}
	for _, tc := range choice.ToolCalls {
		if tc.FunctionCall == nil || tc.Type != "" && tc.Type != "function" {
			continue
		}
		ai.Parts = append(ai.Parts, tc)
		calls = append(calls, adapt.ToolCall(tc.ID, tc.FunctionCall.Name, []byte(tc.FunctionCall.Arguments)))
	}
	results := t.core.Dispatch(ctx, calls)
	if len(results) == 0 {
		return nil
	}
	out := make([]llms.MessageContent, 0, len(results)+1)
	out = append(out, ai)
	for _, r := range results {
		out = append(out, llms.MessageContent{
			Role:  llms.ChatMessageTypeTool,
			Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: r.ID, Name: r.Name, Content: adapt.Text(ctx, r)}},
		})
	}
	return out
}

// AgentTools returns the toolkit's current tools as tools.Tool values for
// LangChainGo agents, which pass a tool one input string: each tool's
// description ends with the JSON Schema its input must follow, and Call
// runs the input as the call's arguments (with WithDispatch and
// model.WithRepair, almost-JSON is mended). Failures are returned as text
// with a nil error, so the agent goes on.
func (t *Tools) AgentTools(ctx context.Context) ([]tools.Tool, error) {
	return t.agents.Current(ctx)
}

// newAgentTool returns the agent tool of d, which runs through core.
func newAgentTool(core *adapt.Core, d model.Definition) (tools.Tool, error) {
	fn, err := adapt.OpenAIFunction(model.OpenAIChat, d)
	if err != nil {
		return nil, err
	}
	desc := fn.Description
	if desc != "" && !strings.HasSuffix(desc, ".") {
		desc += "."
	}
	if desc != "" {
		desc += " "
	}
	desc += "Input: a JSON object following this JSON Schema: " + string(fn.Parameters)
	return &agentTool{core: core, name: fn.Name, desc: desc}, nil
}

// agentTool is one toolkit tool as a LangChainGo agent tool.
type agentTool struct {
	core       *adapt.Core
	name, desc string
}

// Name returns the tool's model-safe name.
func (a *agentTool) Name() string { return a.name }

// Description tells the agent what the tool does and what its input is.
func (a *agentTool) Description() string { return a.desc }

// Call runs the tool with input as its arguments.
func (a *agentTool) Call(ctx context.Context, input string) (string, error) {
	r := a.core.Dispatch(ctx, []model.ToolCall{adapt.ToolCall("", a.name, []byte(input))})[0]
	return adapt.Text(ctx, r), nil
}

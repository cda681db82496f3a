package anthropic

import (
	"context"
	"encoding/base64"
	"encoding/json"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/llmkit/toolkit/adapters/internal/adapt"
	"github.com/llmkit/toolkit/model"
)

// BetaTools returns the toolkit's current tools as tools of the SDK's tool
// runner (client.Beta.Messages.NewToolRunner and NewToolRunnerStreaming),
// each one's Execute running the call through the toolkit like [Tools.Run]
// does: a failed call is an error, which the runner sends as a tool_result
// with is_error and the message. Tools that cannot be converted are left
// out and reported in the error; the others are returned and usable. The
// values are shared, and the same value is returned for a tool until it
// changes (see [Tools.Follow]).
func (t *Tools) BetaTools(ctx context.Context) ([]anthropic.BetaTool, error) {
	return t.beta.Current(ctx)
}

// BetaToolsOf converts definitions (from the catalog's Definitions or
// Search) to tool runner tools.
func (t *Tools) BetaToolsOf(defs []model.Definition) ([]anthropic.BetaTool, error) {
	return t.beta.Of(defs)
}

// BetaToolChoice returns the tool choice (BetaMessageNewParams.ToolChoice,
// for a tool runner's Params) that makes Claude call the tool key stands
// for, like [Tools.ToolChoice].
func (t *Tools) BetaToolChoice(ctx context.Context, key string) (anthropic.BetaToolChoiceUnionParam, error) {
	name, err := t.core.NameFor(ctx, key)
	if err != nil {
		return anthropic.BetaToolChoiceUnionParam{}, err
	}
	return anthropic.BetaToolChoiceParamOfTool(name), nil
}

// betaTool is one toolkit tool as a tool runner tool.
type betaTool struct {
	core        *adapt.Core
	name, desc  string
	inputSchema anthropic.BetaToolInputSchemaParam
}

var _ anthropic.BetaTool = (*betaTool)(nil)

func newBetaTool(core *adapt.Core, d model.Definition) (anthropic.BetaTool, error) {
	in, err := encode(d)
	if err != nil {
		return nil, err
	}
	return &betaTool{core: core, name: in.name, desc: in.description, inputSchema: anthropic.BetaToolInputSchemaParam{
		Properties: in.properties, Required: in.required, ExtraFields: in.extra,
	}}, nil
}

// Name returns the tool's model-safe name.
func (b *betaTool) Name() string { return b.name }

// Description returns the tool's description.
func (b *betaTool) Description() string { return b.desc }

// InputSchema returns the tool's input schema, adapted as model.Encode
// does for Anthropic.
func (b *betaTool) InputSchema() anthropic.BetaToolInputSchemaParam { return b.inputSchema }

// Execute runs the call through the toolkit and returns its result as
// content blocks: text, images and PDF documents as in a tool_result of
// [Tools.Results]. A failed call returns an error whose message tells the
// model what went wrong (and which wraps the call's error).
func (b *betaTool) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	r := b.core.Dispatch(ctx, []model.ToolCall{adapt.ToolCall("", b.name, input)})[0]
	if r.IsError {
		return nil, &callError{msg: r.Content, err: r.Err}
	}
	var out []anthropic.BetaToolResultBlockParamContentUnion
	for _, p := range adapt.Parts(ctx, r, media) {
		var c anthropic.BetaToolResultBlockParamContentUnion
		switch {
		case p.IsMedia() && p.MIME == adapt.PDF:
			c.OfDocument = &anthropic.BetaRequestDocumentBlockParam{
				Source: anthropic.BetaRequestDocumentBlockSourceUnionParam{OfBase64: &anthropic.BetaBase64PDFSourceParam{
					Data: base64.StdEncoding.EncodeToString(p.Data),
				}},
				Title: anthropic.String(p.FileName()),
			}
		case p.IsMedia():
			c.OfImage = &anthropic.BetaImageBlockParam{Source: anthropic.BetaImageBlockParamSourceUnion{
				OfBase64: &anthropic.BetaBase64ImageSourceParam{
					Data:      base64.StdEncoding.EncodeToString(p.Data),
					MediaType: anthropic.BetaBase64ImageSourceMediaType(p.MIME),
				},
			}}
		case p.Text != "":
			c.OfText = &anthropic.BetaTextBlockParam{Text: p.Text}
		default:
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// callError is a failed call as Execute returns it: its message is what
// the model reads, and it wraps the call's error.
type callError struct {
	msg string
	err error
}

func (e *callError) Error() string { return e.msg }
func (e *callError) Unwrap() error { return e.err }

// BetaToolSet is the part of a tool runner that takes tool changes during
// a run. *anthropic.BetaToolRunner and *anthropic.BetaToolRunnerStreaming
// implement it.
type BetaToolSet interface {
	AddTools(tools ...anthropic.BetaTool)
	RemoveToolsByNames(names ...string)
}

// RunnerTools keeps the tools of one tool runner in step with the
// toolkit. Make one with [Tools.Follow].
type RunnerTools struct {
	tools  *Tools
	runner BetaToolSet
	given  map[string]anthropic.BetaTool
}

// Follow returns the RunnerTools that keeps runner's tools in step with
// the toolkit; given are the tools the runner was created with (what
// [Tools.BetaTools] returned).
//
// A runner sends its tools with its first request and, on a message
// thread (the default), cannot send a different list afterwards: it
// tells the model of later changes with tool_addition and tool_removal
// blocks, which the Messages API takes under the
// anthropic.AnthropicBetaInlineTools2026_09_15 beta (put it in the
// runner's Params.Betas). [RunnerTools.Update] hands the runner those
// changes.
func (t *Tools) Follow(runner BetaToolSet, given []anthropic.BetaTool) *RunnerTools {
	r := &RunnerTools{tools: t, runner: runner, given: make(map[string]anthropic.BetaTool, len(given))}
	for _, b := range given {
		r.given[b.Name()] = b
	}
	return r
}

// Update hands the runner the changes of the toolkit's tools since the
// runner was given its tools or since the last Update: a tool added to the
// toolkit, or changed, goes to the runner's AddTools, a tool removed to its
// RemoveToolsByNames, and the runner tells the model with its next
// request. Call it between turns, on the goroutine that drives the runner
// (a runner is not safe for concurrent use): before each NextMessage, or
// each NextStreaming. It costs a comparison per tool when nothing changed.
// Tools that cannot be converted count as removed and are reported in the
// error.
//
// Whatever Update was last called, a call always runs the toolkit's
// current tool of its name, and a call to a tool that is gone is answered
// that it is no longer available.
func (r *RunnerTools) Update(ctx context.Context) error {
	current, err := r.tools.BetaTools(ctx)
	if current == nil && err != nil {
		return err
	}
	now := make(map[string]anthropic.BetaTool, len(current))
	var added []anthropic.BetaTool
	for _, b := range current {
		now[b.Name()] = b
		if r.given[b.Name()] != b {
			added = append(added, b)
		}
	}
	var removed []string
	for name := range r.given {
		if _, ok := now[name]; !ok {
			removed = append(removed, name)
		}
	}
	if len(removed) > 0 {
		r.runner.RemoveToolsByNames(removed...)
	}
	if len(added) > 0 {
		r.runner.AddTools(added...)
	}
	r.given = now
	return err
}

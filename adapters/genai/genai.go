package genai

import (
	"context"
	"encoding/json"
	"strings"

	"google.golang.org/genai"

	"github.com/llmkit/toolkit/adapters/adapter"
	"github.com/llmkit/toolkit/adapters/internal/adapt"
	"github.com/llmkit/toolkit/model"
)

// MaxMediaBytes bounds one inline media part of a function response; a
// larger output is described in text instead.
const MaxMediaBytes = 20 << 20

// media are the types Gemini accepts inline in a function response.
var media = adapt.Media{
	Types:    []string{"image/png", "image/jpeg", "image/webp", "application/pdf"},
	MaxBytes: MaxMediaBytes,
}

// Tools offers a toolkit's tools to Gemini and runs the calls it makes. It
// is safe for concurrent use.
type Tools struct {
	core  *adapt.Core
	decls *adapt.Converter[*genai.FunctionDeclaration]
}

// New returns Tools over tk, configured by opts (the options of package
// [adapter]).
func New(tk adapter.Toolkit, opts ...adapter.Option) *Tools {
	core := adapt.NewCore(tk, opts...)
	return &Tools{core: core, decls: adapt.NewConverter(core, declaration)}
}

// Disclosed returns the view of t's tools for one conversation whose
// model finds its tools by searching (progressive disclosure, see
// model.Disclosure and adapter.WithDisclosure): its Tools and
// Declarations offer the search tool, the always-offered tools and the
// tools l holds, and its Run and Responses answer the search tool's
// calls, the tools found joining l and so the next request, and run the
// other calls as t does. Keep one l per conversation (nil is a new one);
// views share t's catalog and conversions and are cheap to make.
func (t *Tools) Disclosed(l *model.Loaded) *Tools {
	core := t.core.Disclosed(l)
	return &Tools{core: core, decls: t.decls.For(core)}
}

// Catalog returns the catalog Tools reads, for searching (see
// model.Catalog.Search and DeclarationsOf).
func (t *Tools) Catalog() *model.Catalog { return t.core.Catalog }

// Tools returns the toolkit's current tools for
// GenerateContentConfig.Tools: one genai.Tool with all the function
// declarations, or none when there is no tool. Tools that cannot be
// converted are left out and reported in the error; the others are
// returned and usable. The declarations are shared: do not modify them.
func (t *Tools) Tools(ctx context.Context) ([]*genai.Tool, error) {
	decls, err := t.Declarations(ctx)
	if len(decls) == 0 {
		return []*genai.Tool{}, err
	}
	return []*genai.Tool{{FunctionDeclarations: decls}}, err
}

// Declarations returns the toolkit's current tools as function
// declarations, like Tools.
func (t *Tools) Declarations(ctx context.Context) ([]*genai.FunctionDeclaration, error) {
	return t.decls.Current(ctx)
}

// DeclarationsOf converts definitions (from the catalog's Definitions or
// Search) to function declarations.
func (t *Tools) DeclarationsOf(defs []model.Definition) ([]*genai.FunctionDeclaration, error) {
	return t.decls.Of(defs)
}

// ToolConfig returns the tool config (GenerateContentConfig.ToolConfig)
// that makes Gemini call the tool key stands for: function calling in ANY
// mode with that one function allowed. key is a toolkit key ("ns.name",
// toolkit.Item.Key) or a bare name, as toolkit Lookup resolves it; the
// config names the model-safe name the tool is offered as. An error
// wrapping toolkit.ErrNotFound says that key names no tool offered to the
// model (unknown, or left out by the filter).
func (t *Tools) ToolConfig(ctx context.Context, key string) (*genai.ToolConfig, error) {
	name, err := t.core.NameFor(ctx, key)
	if err != nil {
		return nil, err
	}
	return &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{
		Mode:                 genai.FunctionCallingConfigModeAny,
		AllowedFunctionNames: []string{name},
	}}, nil
}

func declaration(_ *adapt.Core, d model.Definition) (*genai.FunctionDeclaration, error) {
	b, err := model.EncodeTool(model.Gemini, d)
	if err != nil {
		return nil, err
	}
	var fd genai.FunctionDeclaration
	if err := json.Unmarshal(b, &fd); err != nil {
		return nil, err
	}
	return &fd, nil
}

// Run runs the function calls of resp's first candidate and returns the
// user content to send next (after the candidate's own content), holding
// one function response per call in call order. ok is false when there is
// no function call.
func (t *Tools) Run(ctx context.Context, resp *genai.GenerateContentResponse) (reply *genai.Content, ok bool) {
	if resp == nil {
		return nil, false
	}
	parts := t.Responses(ctx, resp.FunctionCalls())
	if len(parts) == 0 {
		return nil, false
	}
	return genai.NewContentFromParts(parts, genai.RoleUser), true
}

// Responses runs calls and returns their function response parts, in call
// order (nil when there is none).
func (t *Tools) Responses(ctx context.Context, calls []*genai.FunctionCall) []*genai.Part {
	mc := make([]model.ToolCall, 0, len(calls))
	for _, c := range calls {
		if c == nil {
			continue
		}
		var args []byte
		if c.Args != nil {
			var err error
			if args, err = json.Marshal(c.Args); err != nil {
				args = []byte("not JSON")
			}
		}
		mc = append(mc, adapt.ToolCall(c.ID, c.Name, args))
	}
	results := t.core.Dispatch(ctx, mc)
	if len(results) == 0 {
		return nil
	}
	out := make([]*genai.Part, 0, len(results))
	for _, r := range results {
		fr := &genai.FunctionResponse{ID: r.ID, Name: r.Name}
		parts := adapt.Parts(ctx, r, media)
		switch {
		case r.IsError:
			fr.Response = map[string]any{"error": r.Content}
		case r.JSON && len(parts) == 1 && !parts[0].IsMedia() && parts[0].Text == r.Content:
			fr.Response = map[string]any{"output": json.RawMessage(r.Content)}
		default:
			var texts []string
			for _, p := range parts {
				if p.IsMedia() {
					fr.Parts = append(fr.Parts, genai.NewFunctionResponsePartFromBytes(p.Data, p.MIME))
				} else {
					texts = append(texts, p.Text)
				}
			}
			fr.Response = map[string]any{"output": strings.Join(texts, "\n")}
		}
		out = append(out, &genai.Part{FunctionResponse: fr})
	}
	return out
}

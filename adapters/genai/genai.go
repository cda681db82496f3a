package genai

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"google.golang.org/genai"

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

// Toolkit is what Tools needs of a toolkit. *toolkit.Toolkit implements
// it, and also the optional Generation and LookupItem methods that make
// an unchanged toolkit cost nothing to list and each call run the
// toolkit's current item.
type Toolkit interface {
	model.Lister
	model.Caller
}

// Option configures a Tools.
type Option func(*adapt.Config)

// WithFilter selects the items offered to the model (default: every tool,
// no prompt).
func WithFilter(f model.Filter) Option { return func(c *adapt.Config) { c.Filter = f } }

// WithCatalog makes Tools use cat, which must be a catalog over the same
// toolkit (for example one shared with another adapter, so that both
// give the same names).
func WithCatalog(cat *model.Catalog) Option { return func(c *adapt.Config) { c.Catalog = cat } }

// WithDispatch configures how calls run: model.WithConcurrency,
// model.WithTimeout, model.WithRepair.
func WithDispatch(opts ...model.DispatchOption) Option {
	return func(c *adapt.Config) { c.Dispatch = append(c.Dispatch, opts...) }
}

// WithOnResult makes every call's model.Result (with its Go error, for
// logs) go to f before it is turned into a function response.
func WithOnResult(f func(context.Context, model.Result)) Option {
	return func(c *adapt.Config) { c.OnResult = f }
}

// Tools offers a toolkit's tools to Gemini and runs the calls it makes. It
// is safe for concurrent use.
type Tools struct {
	core  *adapt.Core
	cache adapt.Cache[*genai.FunctionDeclaration]
}

// New returns Tools over tk.
func New(tk Toolkit, opts ...Option) *Tools {
	var c adapt.Config
	for _, o := range opts {
		o(&c)
	}
	return &Tools{core: adapt.NewCore(tk, c)}
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
	defs, err := t.core.Definitions(ctx)
	if defs == nil && err != nil {
		return nil, err
	}
	decls, cerr := t.DeclarationsOf(defs)
	return decls, errors.Join(err, cerr)
}

// DeclarationsOf converts definitions (from the catalog's Definitions or
// Search) to function declarations.
func (t *Tools) DeclarationsOf(defs []model.Definition) ([]*genai.FunctionDeclaration, error) {
	return t.cache.Convert(defs, declaration)
}

func declaration(d model.Definition) (*genai.FunctionDeclaration, error) {
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

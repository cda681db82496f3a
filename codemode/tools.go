package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/model"
)

// Names of the code-mode tools (see Mode.Tools).
const (
	RunCodeName      = "run_code"
	DeclareToolsName = "declare_tools"
)

// Bounds of declare_tools.
const (
	// MaxDeclare bounds the tools one declare_tools call declares.
	MaxDeclare = 50
	// DefaultDeclareLimit is how many tools a query declares when the
	// model gives no limit.
	DefaultDeclareLimit = 10
)

// Tools returns the two tools through which a model uses code mode, to
// add to the toolkit as builtins (tk.AddTool(m.Tools()...)): both faces
// then serve them like any tool, the server face to its clients (beside
// tool search's meta-tools, which compose with them) and package model to
// an application's model, under the same policy and audit.
//
//   - declare_tools takes tool names, or a query (what the model wants to
//     do, in words), and answers with the TypeScript declarations of the
//     tools (see Declare): only those, so that a large catalogue costs
//     the model the few declarations it asks for.
//   - run_code takes a script (see Mode.Run) and answers with what it
//     returned: a string as text, any other value as JSON (structured
//     content); with console output, an object {"result": ..., "console":
//     "..."}. A script that fails is the tool's failure, its message the
//     script's line and column and what went wrong.
//
// Scripts cannot call these two tools.
func (m *Mode) Tools() []toolkit.Tool {
	return []toolkit.Tool{&runCodeTool{m}, &declareTool{m}}
}

// own marks the code-mode tools, which scripts do not call.
type own interface{ codeMode() }

func isOwn(v any) bool { _, ok := v.(own); return ok }

type runCodeTool struct{ m *Mode }

func (*runCodeTool) codeMode()    {}
func (*runCodeTool) Name() string { return RunCodeName }
func (t *runCodeTool) Description() string {
	return fmt.Sprintf("Run a JavaScript program that calls tools as functions, and get back only what it returns. "+
		"The code is the body of an async function: call a tool with `await tools.NAME(args)` (the declarations from %s "+
		"name the tools and type their arguments and results), filter and join the results in code, and `return` what you need "+
		"(an object, or a string). A tool's failure, a refused call included, throws an Error whose name is \"ToolError\" "+
		"(with .tool and .outcome), which the code may catch. Calls awaited together (Promise.all) run in parallel, %d at a time. "+
		"console.log output is returned too. No timers, modules, files or network: only the tools. "+
		"Bounds: %v, %d tool calls, a %d-byte result.",
		DeclareToolsName, t.m.lim.MaxParallelCalls, t.m.lim.Timeout, t.m.lim.MaxToolCalls, t.m.lim.MaxOutput)
}
func (*runCodeTool) InputSchema() (*jsonschema.Schema, error) {
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"code": {Type: "string", Description: "The body of an async JavaScript function: await tool calls, return the result."},
		},
		Required:             []string{"code"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}, nil
}
func (*runCodeTool) OutputSchema() (*jsonschema.Schema, error) { return nil, nil }
func (*runCodeTool) Meta() toolkit.ToolMeta                    { return toolkit.ToolMeta{Title: "Run code"} }

func (t *runCodeTool) Run(ctx context.Context, input json.RawMessage) (any, error) {
	var in struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", toolkit.ErrBadParameter, RunCodeName, err)
	}
	out, err := t.m.Run(ctx, in.Code)
	if err != nil {
		if se, ok := asScriptError(err); ok && se.Console != "" {
			return nil, fmt.Errorf("%w\nconsole:\n%s", err, se.Console)
		}
		return nil, err
	}
	return Result(out), nil
}

// Result returns what run_code answers for a script's output: its text
// when it returned a string, its JSON otherwise; with console output, an
// object holding both.
func Result(out *Output) any {
	if out.Console == "" {
		if out.IsText {
			return out.Text
		}
		return out.JSON
	}
	var v any = out.JSON
	if out.IsText {
		v = out.Text
	}
	return struct {
		Result  any    `json:"result"`
		Console string `json:"console"`
	}{v, out.Console}
}

type declareTool struct{ m *Mode }

func (*declareTool) codeMode()    {}
func (*declareTool) Name() string { return DeclareToolsName }
func (*declareTool) Description() string {
	return fmt.Sprintf("Get TypeScript declarations of tools to call from %s: give their names, or a query saying what you "+
		"want to do in a few words (for example \"read files\"), which finds the best matching tools.", RunCodeName)
}
func (*declareTool) InputSchema() (*jsonschema.Schema, error) {
	maxN := float64(MaxDeclare)
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"names": {Type: "array", Items: &jsonschema.Schema{Type: "string"}, MaxItems: ptr(MaxDeclare), Description: "The tools' names."},
			"query": {Type: "string", Description: "What you want to do, in a few words."},
			"limit": {Type: "integer", Minimum: ptr(1.0), Maximum: &maxN, Description: fmt.Sprintf("How many tools a query declares (default %d).", DefaultDeclareLimit)},
		},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}, nil
}
func (*declareTool) OutputSchema() (*jsonschema.Schema, error) { return nil, nil }
func (*declareTool) Meta() toolkit.ToolMeta {
	return toolkit.ToolMeta{Title: "Declare tools", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
}

func (t *declareTool) Run(ctx context.Context, input json.RawMessage) (any, error) {
	var in struct {
		Names []string `json:"names"`
		Query string   `json:"query"`
		Limit int      `json:"limit"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", toolkit.ErrBadParameter, DeclareToolsName, err)
	}
	if len(in.Names) == 0 && in.Query == "" {
		return nil, fmt.Errorf("%w: %s: give names or a query", toolkit.ErrBadParameter, DeclareToolsName)
	}
	decls, unknown, err := t.m.Declarations(ctx, in.Names, in.Query, in.Limit)
	if err != nil {
		return nil, err
	}
	text := Declare(decls)
	if len(unknown) > 0 {
		b, _ := json.Marshal(unknown)
		text += "// unknown tools: " + string(b) + "\n"
	}
	return text, nil
}

// Declarations returns the declarations of the tools named (as scripts
// call them: model names, or under Config.Names) and of the tools query finds (up to limit;
// DefaultDeclareLimit when 0), that the principal of ctx may see: the
// toolkit's policy holds. Names it cannot declare are returned as
// unknown.
func (m *Mode) Declarations(ctx context.Context, names []string, query string, limit int) (decls []Declaration, unknown []string, err error) {
	if len(names) > MaxDeclare {
		return nil, nil, fmt.Errorf("%w: %d names, at most %d", toolkit.ErrBadParameter, len(names), MaxDeclare)
	}
	if limit <= 0 {
		limit = DefaultDeclareLimit
	}
	limit = min(limit, MaxDeclare)
	seen := map[string]bool{}
	add := func(name string, it toolkit.Item) bool {
		tool, ok := it.Value.(toolkit.Tool)
		if !ok || isOwn(tool) || seen[name] || !m.tk.Visible(ctx, it) {
			return false
		}
		seen[name] = true
		d := Declaration{Name: name, Description: tool.Description()}
		if d.Description == "" {
			d.Description = tool.Meta().Title
		}
		d.Input, _ = tool.InputSchema()
		d.Output, _ = tool.OutputSchema()
		decls = append(decls, d)
		return true
	}
	for _, n := range names {
		it, ok := m.resolve(ctx, n)
		if !ok || it.Type != toolkit.ListTypeTools || !add(n, it) {
			if !seen[n] {
				unknown = append(unknown, n)
			}
		}
	}
	if query != "" {
		defs, err := m.cat.Search(ctx, query, limit+len(m.Tools()), model.Filter{})
		if err != nil && len(defs) == 0 {
			return nil, nil, err
		}
		for _, d := range defs {
			if len(decls) >= len(names)+limit {
				break
			}
			if name, ok := m.nameOf(d.Item, d.Name); ok {
				add(name, d.Item)
			}
		}
	}
	return decls, slices.Clip(unknown), nil
}

// Filter selects code mode's two tools, to offer a model only them
// (adapter.WithFilter(codemode.Filter()), or a model.Catalog's
// Definitions): the model then reaches every other tool through scripts.
func Filter() model.Filter {
	return model.Filter{Namespaces: []string{toolkit.BuiltinNamespace}, Names: []string{RunCodeName, DeclareToolsName}}
}

func ptr[T any](v T) *T { return &v }

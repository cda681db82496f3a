package prompt

import (
	"slices"
	"text/template"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit/internal/schemaguard"
)

// Agent is a prompt read from a markdown file with YAML front matter: the
// front matter names the prompt and says how to run it (model, provider,
// system prompt, schemas, allowed tools, thinking, token limits), and the
// body is a text/template that renders the user message from the input.
//
// The template sees the input as decoded JSON (see Render) and may use,
// besides the text/template builtins:
//
//	json <value>             the value as JSON
//	default <fallback> <v>   v, or fallback when v is nil or empty ("", [], {})
//	join <list> <sep>        the elements of any list as text, joined by sep
//	upper, lower, trim <v>   v as text, upper-cased, lower-cased or trimmed
//
// An absent value (a property the input schema declares but the input
// omits, or a JSON null) can be tested and defaulted but not printed: see
// the package documentation.
//
// Sub-templates ({{ define }}, {{ template }}, {{ block }}) are not
// supported, and all {{ range }} loops of one rendering together may run at
// most MaxRangeIterations times, so rendering always ends.
//
// An Agent is immutable once read and safe for concurrent use. It
// implements Prompt and Renderer; Prepare gathers everything a model
// runner needs in one Request.
type Agent struct {
	file                     string
	name, title, description string
	model, provider, system  string
	input, output            *jsonschema.Schema
	inputResolved            *jsonschema.Resolved
	inputPlan                *schemaguard.Plan // see schemaguard.Check
	tools                    []string
	thinking                 bool
	thinkingBudget           int
	maxTokens                int
	body                     string
	tmpl                     *template.Template // nil for an empty body
}

var (
	_ Prompt   = (*Agent)(nil)
	_ Renderer = (*Agent)(nil)
)

// Name returns the prompt's name: the front matter's name, or the file
// name without its extension.
func (a *Agent) Name() string { return a.name }

// Title returns the title: the front matter's title, or the body's first
// "# Heading".
func (a *Agent) Title() string { return a.title }

// Description returns the front matter's description.
func (a *Agent) Description() string { return a.description }

// InputSchema returns the resolved schema of the input, or nil when the
// front matter has none. It is shared: do not modify it.
func (a *Agent) InputSchema() (*jsonschema.Schema, error) { return a.input, nil }

// OutputSchema returns the resolved schema of the structured output, or nil
// for free-form output. It is shared: do not modify it.
func (a *Agent) OutputSchema() (*jsonschema.Schema, error) { return a.output, nil }

// Model returns the requested model name, or "" for the runner's default.
func (a *Agent) Model() string { return a.model }

// Provider returns the requested provider name, or "".
func (a *Agent) Provider() string { return a.provider }

// SystemPrompt returns the system prompt, or "". It is used as written: it
// is not a template.
func (a *Agent) SystemPrompt() string { return a.system }

// Tools returns the names of the tools the prompt may use, in the order
// given, or nil. The slice is a copy.
func (a *Agent) Tools() []string { return slices.Clone(a.tools) }

// Thinking reports whether the model should think (reason) before
// answering.
func (a *Agent) Thinking() bool { return a.thinking }

// ThinkingBudget returns the token budget for thinking, or 0 for the
// provider's default.
func (a *Agent) ThinkingBudget() int { return a.thinkingBudget }

// MaxTokens returns the limit on output tokens, or 0 for the provider's
// default.
func (a *Agent) MaxTokens() int { return a.maxTokens }

// Template returns the template source: the body after the front matter,
// without leading and trailing white space.
func (a *Agent) Template() string { return a.body }

// File returns the name of the file the prompt was read from, or "" when
// the reader had no name.
func (a *Agent) File() string { return a.file }

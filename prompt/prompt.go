// Package prompt defines the Prompt contract of the toolkit and parses
// prompts ("agents") kept as markdown files with YAML front matter.
//
// # Missing and optional variables
//
// The body of a markdown prompt is a text/template rendered with the
// decoded JSON input, checked against the input schema first. The rule for
// variables that have no value is:
//
//   - A name the input schema does not declare (or, without a schema, that
//     the input does not hold) is an error wherever it is used.
//   - A property the schema declares but the input omits is nil, and so is
//     a JSON null. Such a value may be tested ({{ if .name }},
//     {{ with .name }}, and, or, not), replaced ({{ default "you" .name }}),
//     assigned to a variable, and passed to json (null) or join (an empty
//     list).
//   - Printing such a value — {{ .name }}, or upper, lower or trim of it —
//     is an error that names the action. A template never renders
//     "<no value>".
//
// Mark a property required in the schema when the template prints it
// unconditionally; the input is then refused before rendering with an
// error that wraps ErrSchema.
package prompt

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit/resource"
)

// Prompt is a reusable, named prompt template with JSON input. A model run
// by the toolkit's delegate turns it into output.
type Prompt interface {
	// Name returns the unique identifier of the prompt.
	Name() string
	// Title returns a human-readable title.
	Title() string
	// Description returns a longer description of the prompt's purpose.
	Description() string
	// InputSchema returns the JSON Schema of the input, or nil.
	InputSchema() (*jsonschema.Schema, error)
}

// Role is the author of a rendered message.
type Role string

// Roles of rendered messages.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one message of a rendered prompt.
type Message struct {
	Role    Role
	Content resource.Resource
}

// Rendered is a prompt turned into messages, ready for a model.
type Rendered struct {
	// Description describes the rendered prompt (may be empty).
	Description string
	// Messages are the messages to send, in order.
	Messages []Message
	// Meta is the MCP `_meta` of the rendering (a remote prompt's
	// prompts/get result), served on as it is; nil for none. See
	// resource.MetaCarrier for what it may hold.
	Meta map[string]any
}

// Renderer is implemented by prompts that can render their messages from an
// input without running a model: markdown prompts render their template;
// remote MCP prompts call prompts/get. input is a JSON value (usually an
// object of arguments), or nil for none.
type Renderer interface {
	Render(ctx context.Context, input json.RawMessage) (*Rendered, error)
}

// Package prompt defines the Prompt contract of the toolkit and parses
// prompts ("agents") kept as markdown files with YAML front matter.
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
}

// Renderer is implemented by prompts that can render their messages from an
// input without running a model: markdown prompts render their template;
// remote MCP prompts call prompts/get. input is a JSON value (usually an
// object of arguments), or nil for none.
type Renderer interface {
	Render(ctx context.Context, input json.RawMessage) (*Rendered, error)
}

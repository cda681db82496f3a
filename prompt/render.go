package prompt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/resource"
)

// Request is a prompt prepared for a model: everything a runner needs to
// make one model request, with the template already rendered.
type Request struct {
	// Prompt is the prompt the request was prepared from.
	Prompt *Agent
	// System is the system prompt ("" for none).
	System string
	// User is the rendered user message.
	User string
	// Input is the JSON input the template was rendered with (nil for none).
	Input json.RawMessage
	// Model and Provider select the model ("" for the runner's default).
	Model, Provider string
	// OutputSchema is the schema of a structured answer, or nil.
	OutputSchema *jsonschema.Schema
	// Tools are the names of the tools the model may use.
	Tools []string
	// Thinking, ThinkingBudget and MaxTokens tune the request (0 for the
	// provider's default).
	Thinking       bool
	ThinkingBudget int
	MaxTokens      int
	// Attachments are the resources after the input, to attach to the user
	// message in order.
	Attachments []resource.Resource
}

// Render renders the user message from input, a JSON value (nil or empty
// for none), and returns it as one user message holding a text resource
// named after the prompt.
//
// The input is validated against the input schema first (errors wrap
// ErrSchema). An empty input counts as {} when the input schema is absent
// or describes an object, and as null otherwise. The template sees the
// decoded JSON value: objects as maps, so {{ .field }} works; a JSON
// string as a string, so {{ . }} prints it; numbers print as JSON prints
// them. A field the input schema declares but the input omits is nil, and
// so is a JSON null: it may be tested ({{ if .field }}, {{ with .field }}),
// defaulted ({{ default "x" .field }}) or passed to json and join, but
// printing it, directly or through upper, lower or trim, is an error, never
// "<no value>". A field the schema does not declare is an error wherever it
// is used.
//
// A prompt with an empty body sends its input itself: a JSON string as its
// text, any other value as indented JSON. Rendering that yields only white
// space is an error, as is output larger than MaxRenderSize.
func (a *Agent) Render(ctx context.Context, input json.RawMessage) (*Rendered, error) {
	text, err := a.render(ctx, input)
	if err != nil {
		return nil, err
	}
	content, err := resource.Text(a.name, text)
	if err != nil {
		return nil, fmt.Errorf("%w: prompt %q: %w", errs.ErrBadParameter, a.name, err)
	}
	return &Rendered{
		Description: a.description,
		Messages:    []Message{{Role: RoleUser, Content: content}},
	}, nil
}

// Prepare renders the prompt for a model run. The first resource, if any,
// is the input and the others are attachments, as in ToolkitDelegate.Call.
//
// The input resource becomes JSON as follows: a JSON type
// (application/json, *+json) must hold valid JSON and is used as is; any
// other text type (text/plain, markdown, XML, ...) becomes a JSON string of
// its text, so {{ . }} prints it; a resource with no type is JSON when it
// parses as JSON and a string otherwise. Binary input is an error: pass it
// as an attachment after the input.
func (a *Agent) Prepare(ctx context.Context, resources ...resource.Resource) (*Request, error) {
	var input json.RawMessage
	var attachments []resource.Resource
	if len(resources) > 0 {
		if resources[0] != nil {
			var err error
			if input, err = a.inputJSON(ctx, resources[0]); err != nil {
				return nil, err
			}
		}
		for _, r := range resources[1:] {
			if r != nil {
				attachments = append(attachments, r)
			}
		}
	}
	text, err := a.render(ctx, input)
	if err != nil {
		return nil, err
	}
	return &Request{
		Prompt:         a,
		System:         a.system,
		User:           text,
		Input:          input,
		Model:          a.model,
		Provider:       a.provider,
		OutputSchema:   a.output,
		Tools:          slices.Clone(a.tools),
		Thinking:       a.thinking,
		ThinkingBudget: a.thinkingBudget,
		MaxTokens:      a.maxTokens,
		Attachments:    attachments,
	}, nil
}

// inputJSON reads the input resource and turns it into JSON.
func (a *Agent) inputJSON(ctx context.Context, r resource.Resource) (json.RawMessage, error) {
	data, err := r.Read(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: prompt %q: read input %q: %w", errs.ErrBadParameter, a.name, r.URI(), err)
	}
	typ := r.Type()
	switch {
	case resource.IsJSON(typ):
		if !json.Valid(data) {
			return nil, fmt.Errorf("%w: prompt %q: input %q of type %s is not valid JSON", errs.ErrBadParameter, a.name, r.URI(), typ)
		}
		return data, nil
	case typ == "" && json.Valid(data):
		return data, nil
	case typ == "" && utf8.Valid(data), resource.IsText(typ):
		b, err := json.Marshal(string(data))
		if err != nil {
			return nil, fmt.Errorf("%w: prompt %q: input %q: %w", errs.ErrBadParameter, a.name, r.URI(), err)
		}
		return b, nil
	}
	if typ == "" {
		typ = "unknown type"
	}
	return nil, fmt.Errorf("%w: prompt %q: input %q (%s) is neither JSON nor text: pass binary data as an attachment after the input", errs.ErrBadParameter, a.name, r.URI(), typ)
}

// render validates input and renders the user message.
func (a *Agent) render(ctx context.Context, input json.RawMessage) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	input = bytes.TrimSpace(input)
	var v any
	if len(input) == 0 {
		if a.input == nil || a.input.Type == "object" {
			v = map[string]any{}
		}
	} else if err := json.Unmarshal(input, &v); err != nil {
		return "", fmt.Errorf("%w: prompt %q: input is not valid JSON: %v", errs.ErrBadParameter, a.name, err)
	}
	if a.inputResolved != nil {
		if err := a.inputPlan.Check(v); err != nil {
			return "", fmt.Errorf("%w: prompt %q: input: %w", errs.ErrBadParameter, a.name, err)
		}
		if err := a.inputResolved.Validate(v); err != nil {
			return "", fmt.Errorf("%w: prompt %q: input: %v", errs.ErrSchema, a.name, err)
		}
	}

	var text string
	if a.tmpl == nil {
		switch v := v.(type) {
		case string:
			text = v
		case nil:
		default:
			if m, ok := v.(map[string]any); ok && len(m) == 0 && len(input) == 0 {
				break // no input at all
			}
			b, err := json.MarshalIndent(v, "", "  ")
			if err != nil {
				return "", fmt.Errorf("%w: prompt %q: %v", errs.ErrBadParameter, a.name, err)
			}
			text = string(b)
		}
	} else {
		data := templateData(v)
		declareProperties(data, a.input)
		var err error
		if text, err = execute(a.tmpl, data); err != nil {
			if errors.Is(err, errTooLarge) || errors.Is(err, errTooManyIterations) {
				return "", fmt.Errorf("%w: prompt %q: %v", errs.ErrBadParameter, a.name, err)
			}
			return "", fmt.Errorf("%w: prompt %q: render: %v", errs.ErrBadParameter, a.name, err)
		}
	}
	text = strings.TrimSpace(text)
	if text == "" {
		if a.tmpl == nil {
			return "", fmt.Errorf("%w: prompt %q: the body is empty and so is the input: nothing to send", errs.ErrBadParameter, a.name)
		}
		return "", fmt.Errorf("%w: prompt %q: the template rendered an empty message", errs.ErrBadParameter, a.name)
	}
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	return text, nil
}

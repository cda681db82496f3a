package main

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/mcp/mcpserver"
	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

// pngPixel is a 1x1 red PNG.
var pngPixel, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")

// wavSilence returns a short 8 kHz mono 16-bit PCM WAV file of silence.
func wavSilence() []byte {
	const rate, samples = 8000, 80
	data := make([]byte, samples*2)
	b := make([]byte, 0, 44+len(data))
	le := binary.LittleEndian
	b = append(b, "RIFF"...)
	b = le.AppendUint32(b, uint32(36+len(data)))
	b = append(b, "WAVEfmt "...)
	b = le.AppendUint32(b, 16)
	b = le.AppendUint16(b, 1) // PCM
	b = le.AppendUint16(b, 1) // mono
	b = le.AppendUint32(b, rate)
	b = le.AppendUint32(b, rate*2)
	b = le.AppendUint16(b, 2)
	b = le.AppendUint16(b, 16)
	b = append(b, "data"...)
	b = le.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// fixtureTool is a tool with an explicit schema and a function body.
type fixtureTool struct {
	tool.Base
	name, desc string
	schema     *jsonschema.Schema
	run        func(ctx context.Context, args map[string]any) (any, error)
}

func (t *fixtureTool) Name() string        { return t.name }
func (t *fixtureTool) Description() string { return t.desc }
func (t *fixtureTool) InputSchema() (*jsonschema.Schema, error) {
	if t.schema == nil {
		return &jsonschema.Schema{Type: "object"}, nil
	}
	return t.schema, nil
}

func (t *fixtureTool) Run(ctx context.Context, input json.RawMessage) (any, error) {
	args := map[string]any{}
	if len(input) > 0 {
		if err := json.Unmarshal(input, &args); err != nil {
			return nil, err
		}
	}
	return t.run(ctx, args)
}

func stringArg(name, desc string) *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:       "object",
		Properties: map[string]*jsonschema.Schema{name: {Type: "string", Description: desc}},
		Required:   []string{name},
	}
}

// pause waits d or until ctx is done.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// session returns what asks the calling MCP client: the session of the
// call, which sends a client of 2025-11-25 requests and turns them into
// input-required results for one of 2026-07-28.
func session(ctx context.Context) (bridge.ServerRequestHandler, error) {
	ss, ok := toolkit.SessionAs[bridge.ServerRequestHandler](toolkit.SessionFromContext(ctx))
	if !ok {
		return nil, errors.New("not called through MCP")
	}
	return ss, nil
}

func elicit(ctx context.Context, message string, schema map[string]any) (string, error) {
	ss, err := session(ctx)
	if err != nil {
		return "", err
	}
	if caps := toolkit.SessionFromContext(ctx).Capabilities(); caps == nil || caps.Elicitation == nil {
		return "", errors.New("the client does not support elicitation")
	}
	res, err := ss.Elicit(ctx, &sdk.ElicitParams{Message: message, RequestedSchema: schema})
	if err != nil {
		return "", err
	}
	content, _ := json.Marshal(res.Content)
	return fmt.Sprintf("Elicitation completed: action=%s, content=%s", res.Action, content), nil
}

func tools() []toolkit.Tool {
	return []toolkit.Tool{
		&fixtureTool{name: "test_simple_text", desc: "Returns simple text", run: func(context.Context, map[string]any) (any, error) {
			return "This is a simple text response for testing.", nil
		}},
		&fixtureTool{name: "test_image_content", desc: "Returns an image", run: func(context.Context, map[string]any) (any, error) {
			return resource.Blob("image", "image/png", pngPixel)
		}},
		&fixtureTool{name: "test_audio_content", desc: "Returns audio", run: func(context.Context, map[string]any) (any, error) {
			return resource.Blob("audio", "audio/wav", wavSilence())
		}},
		&fixtureTool{name: "test_embedded_resource", desc: "Returns an embedded resource", run: func(context.Context, map[string]any) (any, error) {
			return bridge.NewToolContent(&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{
				URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content.",
			}}), nil
		}},
		&fixtureTool{name: "test_multiple_content_types", desc: "Returns text, an image and a resource", run: func(context.Context, map[string]any) (any, error) {
			return bridge.NewToolContent(
				&sdk.TextContent{Text: "Multiple content types test:"},
				&sdk.ImageContent{Data: pngPixel, MIMEType: "image/png"},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{
					URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`,
				}},
			), nil
		}},
		&fixtureTool{name: "test_tool_with_logging", desc: "Logs while it runs", run: func(ctx context.Context, _ map[string]any) (any, error) {
			log := toolkit.SessionFromContext(ctx).Logger()
			log.Info("Tool execution started")
			if err := pause(ctx, 50*time.Millisecond); err != nil {
				return nil, err
			}
			log.Info("Tool processing data")
			if err := pause(ctx, 50*time.Millisecond); err != nil {
				return nil, err
			}
			log.Info("Tool execution completed")
			return "Tool with logging executed successfully", nil
		}},
		&fixtureTool{name: "test_tool_with_progress", desc: "Reports progress", run: func(ctx context.Context, _ map[string]any) (any, error) {
			sess := toolkit.SessionFromContext(ctx)
			for i, p := range []float64{0, 50, 100} {
				if i > 0 {
					if err := pause(ctx, 50*time.Millisecond); err != nil {
						return nil, err
					}
				}
				if err := sess.Progress(p, 100); err != nil {
					return nil, err
				}
			}
			return "Tool with progress executed successfully", nil
		}},
		&fixtureTool{name: "test_error_handling", desc: "Always fails", run: func(context.Context, map[string]any) (any, error) {
			return nil, errors.New("This tool intentionally returns an error for testing")
		}},
		&fixtureTool{name: "test_sampling", desc: "Asks the client's model", schema: stringArg("prompt", "The prompt to send to the LLM"),
			run: func(ctx context.Context, args map[string]any) (any, error) {
				ss, err := session(ctx)
				if err != nil {
					return nil, err
				}
				if caps := toolkit.SessionFromContext(ctx).Capabilities(); caps == nil || caps.Sampling == nil {
					return nil, errors.New("the client does not support sampling")
				}
				text, _ := args["prompt"].(string)
				res, err := ss.CreateMessage(ctx, &sdk.CreateMessageParams{
					Messages:  []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: text}}},
					MaxTokens: 100,
				})
				if err != nil {
					return nil, err
				}
				answer := ""
				if tc, ok := res.Content.(*sdk.TextContent); ok {
					answer = tc.Text
				}
				return "LLM response: " + answer, nil
			}},
		&fixtureTool{name: "test_elicitation", desc: "Asks the user", schema: stringArg("message", "The message to show the user"),
			run: func(ctx context.Context, args map[string]any) (any, error) {
				msg, _ := args["message"].(string)
				out, err := elicit(ctx, msg, map[string]any{
					"type": "object",
					"properties": map[string]any{
						"username": map[string]any{"type": "string", "description": "User's response"},
						"email":    map[string]any{"type": "string", "description": "User's email address"},
					},
					"required": []string{"username", "email"},
				})
				if err != nil {
					return nil, err
				}
				return "User response: " + out, nil
			}},
		&fixtureTool{name: "test_elicitation_sep1034_defaults", desc: "Asks the user, with defaults", run: func(ctx context.Context, _ map[string]any) (any, error) {
			return elicit(ctx, "Please review your information", map[string]any{
				"type": "object",
				"properties": map[string]any{
					"name":     map[string]any{"type": "string", "default": "John Doe"},
					"age":      map[string]any{"type": "integer", "default": 30},
					"score":    map[string]any{"type": "number", "default": 95.5},
					"status":   map[string]any{"type": "string", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
					"verified": map[string]any{"type": "boolean", "default": true},
				},
			})
		}},
		&fixtureTool{name: "test_elicitation_sep1330_enums", desc: "Asks the user to choose", run: func(ctx context.Context, _ map[string]any) (any, error) {
			opt := func(v, title string) map[string]any { return map[string]any{"const": v, "title": title} }
			return elicit(ctx, "Please choose", map[string]any{
				"type": "object",
				"properties": map[string]any{
					"untitledSingle": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}},
					"titledSingle": map[string]any{"type": "string", "oneOf": []any{
						opt("value1", "First Option"), opt("value2", "Second Option"), opt("value3", "Third Option"),
					}},
					"legacyEnum": map[string]any{"type": "string", "enum": []string{"opt1", "opt2", "opt3"},
						"enumNames": []string{"Option One", "Option Two", "Option Three"}},
					"untitledMulti": map[string]any{"type": "array", "items": map[string]any{
						"type": "string", "enum": []string{"option1", "option2", "option3"},
					}},
					"titledMulti": map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{
						opt("value1", "First Choice"), opt("value2", "Second Choice"), opt("value3", "Third Choice"),
					}}},
				},
			})
		}},
		&fixtureTool{name: "test_reconnection", desc: "Closes its event stream before answering", run: func(ctx context.Context, _ map[string]any) (any, error) {
			if extra := mcpserver.RequestExtraFromContext(ctx); extra != nil && extra.CloseSSEStream != nil {
				extra.CloseSSEStream(sdk.CloseSSEStreamArgs{RetryAfter: 100 * time.Millisecond})
			}
			if err := pause(ctx, 200*time.Millisecond); err != nil {
				return nil, err
			}
			return "Reconnection test completed", nil
		}},
		&fixtureTool{name: "json_schema_2020_12_tool", desc: "Tool with JSON Schema 2020-12 features",
			schema: &jsonschema.Schema{
				Schema: "https://json-schema.org/draft/2020-12/schema",
				Type:   "object",
				Defs: map[string]*jsonschema.Schema{"address": {
					Type: "object",
					Properties: map[string]*jsonschema.Schema{
						"street": {Type: "string"}, "city": {Type: "string"},
					},
				}},
				Properties: map[string]*jsonschema.Schema{
					"name":    {Type: "string"},
					"address": {Ref: "#/$defs/address"},
				},
				AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
			},
			run: func(_ context.Context, args map[string]any) (any, error) {
				b, _ := json.Marshal(args)
				return "Received: " + string(b), nil
			}},
	}
}

// fixturePrompt renders fixed messages from its arguments.
type fixturePrompt struct {
	name, desc string
	schema     *jsonschema.Schema
	render     func(args map[string]any) []prompt.Message
}

func (p *fixturePrompt) Name() string                             { return p.name }
func (p *fixturePrompt) Title() string                            { return "" }
func (p *fixturePrompt) Description() string                      { return p.desc }
func (p *fixturePrompt) InputSchema() (*jsonschema.Schema, error) { return p.schema, nil }

func (p *fixturePrompt) Render(_ context.Context, input json.RawMessage) (*prompt.Rendered, error) {
	args := map[string]any{}
	if len(input) > 0 {
		if err := json.Unmarshal(input, &args); err != nil {
			return nil, fmt.Errorf("%w: %v", toolkit.ErrBadParameter, err)
		}
	}
	if p.schema != nil {
		for _, r := range p.schema.Required {
			if _, ok := args[r]; !ok {
				return nil, fmt.Errorf("%w: missing argument %q", toolkit.ErrBadParameter, r)
			}
		}
	}
	return &prompt.Rendered{Messages: p.render(args)}, nil
}

func text(s string) toolkit.Resource { return resource.Must("message", s) }

func prompts() []toolkit.Prompt {
	return []toolkit.Prompt{
		&fixturePrompt{name: "test_simple_prompt", desc: "A simple prompt without arguments",
			render: func(map[string]any) []prompt.Message {
				return []prompt.Message{{Role: prompt.RoleUser, Content: text("This is a simple prompt for testing.")}}
			}},
		&fixturePrompt{name: "test_prompt_with_arguments", desc: "A prompt with two arguments",
			schema: &jsonschema.Schema{
				Type: "object",
				Properties: map[string]*jsonschema.Schema{
					"arg1": {Type: "string", Description: "First test argument"},
					"arg2": {Type: "string", Description: "Second test argument"},
				},
				PropertyOrder: []string{"arg1", "arg2"},
				Required:      []string{"arg1", "arg2"},
			},
			render: func(a map[string]any) []prompt.Message {
				return []prompt.Message{{Role: prompt.RoleUser, Content: text(fmt.Sprintf("Prompt with arguments: arg1='%v', arg2='%v'", a["arg1"], a["arg2"]))}}
			}},
		&fixturePrompt{name: "test_prompt_with_embedded_resource", desc: "A prompt that embeds a resource",
			schema: stringArg("resourceUri", "URI of the resource to embed"),
			render: func(a map[string]any) []prompt.Message {
				uri, _ := a["resourceUri"].(string)
				return []prompt.Message{
					{Role: prompt.RoleUser, Content: bridge.NewToolContent(&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{
						URI: uri, MIMEType: "text/plain", Text: "Embedded resource content for testing.",
					}})},
					{Role: prompt.RoleUser, Content: text("Please process the embedded resource above.")},
				}
			}},
		&fixturePrompt{name: "test_prompt_with_image", desc: "A prompt with an image",
			render: func(map[string]any) []prompt.Message {
				img, _ := resource.Blob("image", "image/png", pngPixel)
				return []prompt.Message{
					{Role: prompt.RoleUser, Content: img},
					{Role: prompt.RoleUser, Content: text("Please analyze the image above.")},
				}
			}},
	}
}

// resources returns the builtin resources, each with fixed content (the
// suite reads them by URI).
func resources() []toolkit.Resource {
	static := func(uri, name, desc, mimeType string, data []byte) toolkit.Resource {
		r, err := resource.Blob(name, mimeType, data)
		if err != nil {
			panic(err) // the fixtures are constants
		}
		return resource.WithDescription(desc, resource.WithURI(uri, r))
	}
	return []toolkit.Resource{
		static("test://static-text", "static_text", "A static text resource", "text/plain", []byte("This is the content of the static text resource.")),
		static("test://static-binary", "static_binary", "A static binary resource", "image/png", pngPixel),
		static("test://watched-resource", "watched_resource", "A resource clients may subscribe to", "text/plain", []byte("Watched resource content.")),
	}
}

// templates returns the builtin resource template test://template/{id}/data,
// whose resources are JSON naming their id.
func templates() []toolkit.ResourceTemplate {
	t, err := resource.NewTemplate("test://template/{id}/data", "template-data", "Data for an id", "application/json",
		func(_ context.Context, _ string, vars map[string]string) ([]byte, error) {
			id := vars["id"]
			return json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
		})
	if err != nil {
		panic(err)
	}
	return []toolkit.ResourceTemplate{t}
}

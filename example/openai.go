package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/model"
	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/resource"
)

// Environment variables that name an OpenAI-compatible endpoint (OpenAI
// itself, a local Ollama or llama.cpp server, a proxy...). Prompts run on
// it when OPENAI_BASE_URL or OPENAI_API_KEY is set.
const (
	envBaseURL = "OPENAI_BASE_URL" // e.g. http://localhost:11434/v1; default https://api.openai.com/v1
	envAPIKey  = "OPENAI_API_KEY"  // sent as a bearer token when set
	envModel   = "OPENAI_MODEL"    // the model; else the prompt's model; else gpt-4o-mini
)

const (
	defaultOpenAIBaseURL = "https://api.openai.com/v1"
	defaultOpenAIModel   = "gpt-4o-mini"
	// maxModelTurns bounds the model requests of one prompt run.
	maxModelTurns = 8
	// maxErrorBody bounds how much of an error response is quoted.
	maxErrorBody = 512
)

// openAI runs prompts on an OpenAI-compatible Chat Completions endpoint,
// with the prompt's allowed tools, in a tool-calling loop: the model's tool
// calls are dispatched through the toolkit and their results sent back
// until the model answers in text.
type openAI struct {
	baseURL, apiKey, model string
	client                 *http.Client
}

// openAIFromEnv returns the endpoint named by the environment, or nil when
// none is.
func openAIFromEnv(getenv func(string) string) *openAI {
	base, key := getenv(envBaseURL), getenv(envAPIKey)
	if base == "" && key == "" {
		return nil
	}
	return &openAI{
		baseURL: strings.TrimSuffix(cmp.Or(base, defaultOpenAIBaseURL), "/"),
		apiKey:  key,
		model:   getenv(envModel),
		client:  &http.Client{Timeout: 5 * time.Minute},
	}
}

// String describes the endpoint (without the key).
func (o *openAI) String() string {
	return o.baseURL + " (model " + cmp.Or(o.model, "from the prompt, else "+defaultOpenAIModel) + ")"
}

// Chat Completions wire types: only the fields this runner uses.
type (
	chatMessage struct {
		Role       string     `json:"role"`
		Content    *string    `json:"content"`
		ToolCalls  []chatCall `json:"tool_calls,omitempty"`
		ToolCallID string     `json:"tool_call_id,omitempty"`
	}
	chatCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	chatRequest struct {
		Model     string          `json:"model"`
		Messages  []chatMessage   `json:"messages"`
		Tools     json.RawMessage `json:"tools,omitempty"`
		MaxTokens int             `json:"max_tokens,omitempty"`
	}
	chatResponse struct {
		Choices []struct {
			Message chatMessage `json:"message"`
		} `json:"choices"`
	}
)

// Run runs prompt p with resources (the first is the input) and returns the
// model's final answer as text.
func (o *openAI) Run(ctx context.Context, tk *toolkit.Toolkit, p toolkit.Prompt, resources ...toolkit.Resource) (toolkit.Resource, error) {
	messages, err := promptMessages(ctx, p, resources)
	if err != nil {
		return nil, err
	}
	modelName := o.model
	maxTokens := 0
	if a, ok := p.(*prompt.Agent); ok {
		modelName = cmp.Or(modelName, a.Model())
		maxTokens = a.MaxTokens()
	}
	modelName = cmp.Or(modelName, defaultOpenAIModel)

	// The prompt's allowed tools, under model-safe names ("remote.countdown"
	// becomes "countdown", or "remote__countdown" if the bare name is
	// taken); the dispatcher maps the names back and runs the calls through
	// the toolkit's pipeline.
	items, err := tk.PromptTools(ctx, p)
	if err != nil {
		return nil, err
	}
	namer := model.NewNamer()
	names := namer.Names(items)
	defs := make([]model.Definition, 0, len(items))
	for i, it := range items {
		def, err := model.NewDefinition(names[i], it)
		if err != nil {
			return nil, err
		}
		defs = append(defs, def)
	}
	var tools json.RawMessage
	if len(defs) > 0 {
		if tools, err = model.Encode(model.OpenAIChat, defs); err != nil {
			return nil, err
		}
	}
	dispatcher := model.NewDispatcher(tk, namer, model.WithRepair(true))

	for range maxModelTurns {
		reply, err := o.complete(ctx, chatRequest{Model: modelName, Messages: messages, Tools: tools, MaxTokens: maxTokens})
		if err != nil {
			return nil, fmt.Errorf("prompt %q: %w", p.Name(), err)
		}
		messages = append(messages, reply)
		if len(reply.ToolCalls) == 0 {
			var text string
			if reply.Content != nil {
				text = *reply.Content
			}
			return resource.Text(p.Name(), text)
		}
		calls := make([]model.ToolCall, len(reply.ToolCalls))
		for i, c := range reply.ToolCalls {
			calls[i] = model.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments}
		}
		for _, r := range dispatcher.Dispatch(ctx, calls...) {
			if r.Repaired {
				// The call went through, but the model sent arguments that
				// were not JSON: worth knowing when choosing a model.
				tk.Logger().InfoContext(ctx, "repaired the arguments of a tool call",
					"prompt", p.Name(), "tool", r.Name, "call_id", r.ID, "repairs", r.Repairs)
			}
			messages = append(messages, chatMessage{Role: "tool", ToolCallID: r.ID, Content: &r.Content})
		}
	}
	return nil, fmt.Errorf("%w: prompt %q: no answer after %d model turns", toolkit.ErrToolFailed, p.Name(), maxModelTurns)
}

// complete makes one Chat Completions request and returns the reply.
func (o *openAI) complete(ctx context.Context, req chatRequest) (chatMessage, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return chatMessage{}, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, o.baseURL+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return chatMessage{}, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	if o.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+o.apiKey)
	}
	resp, err := o.client.Do(hreq)
	if err != nil {
		return chatMessage{}, fmt.Errorf("%w: model endpoint: %v", toolkit.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return chatMessage{}, fmt.Errorf("%w: model endpoint: %s: %s", toolkit.ErrUnavailable, resp.Status, bytes.TrimSpace(snippet))
	}
	var out chatResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return chatMessage{}, fmt.Errorf("%w: model endpoint: bad response: %v", toolkit.ErrUnavailable, err)
	}
	if len(out.Choices) == 0 {
		return chatMessage{}, fmt.Errorf("%w: model endpoint: response without choices", toolkit.ErrUnavailable)
	}
	msg := out.Choices[0].Message
	msg.Role = "assistant"
	return msg, nil
}

// promptMessages turns a prompt and its resources into the opening
// messages: a markdown prompt is prepared (system prompt, rendered user
// message, text attachments); any other prompt that can render itself (a
// remote MCP prompt) gives its rendered messages.
func promptMessages(ctx context.Context, p toolkit.Prompt, resources []toolkit.Resource) ([]chatMessage, error) {
	text := func(role, s string) chatMessage { return chatMessage{Role: role, Content: &s} }
	if a, ok := p.(*prompt.Agent); ok {
		req, err := a.Prepare(ctx, resources...)
		if err != nil {
			return nil, err
		}
		var out []chatMessage
		if req.System != "" {
			out = append(out, text("system", req.System))
		}
		out = append(out, text("user", req.User))
		for _, r := range req.Attachments {
			s, err := readText(ctx, r)
			if err != nil {
				return nil, err
			}
			out = append(out, text("user", s))
		}
		return out, nil
	}
	r, ok := p.(prompt.Renderer)
	if !ok {
		return nil, fmt.Errorf("%w: prompt %q cannot be rendered", toolkit.ErrNotImplemented, p.Name())
	}
	var input json.RawMessage
	if len(resources) > 0 {
		data, err := resources[0].Read(ctx)
		if err != nil {
			return nil, err
		}
		input = data
	}
	rendered, err := r.Render(ctx, input)
	if err != nil {
		return nil, err
	}
	var out []chatMessage
	for _, m := range rendered.Messages {
		s, err := readText(ctx, m.Content)
		if err != nil {
			return nil, err
		}
		out = append(out, text(string(m.Role), s))
	}
	return out, nil
}

// readText reads a text resource; other types are refused.
func readText(ctx context.Context, r toolkit.Resource) (string, error) {
	if !resource.IsText(r.Type()) && !resource.IsJSON(r.Type()) {
		return "", fmt.Errorf("%w: %s resource %q cannot be sent as text", toolkit.ErrNotImplemented, r.Type(), r.URI())
	}
	data, err := r.Read(ctx)
	if err != nil {
		return "", err
	}
	return string(data), nil
}

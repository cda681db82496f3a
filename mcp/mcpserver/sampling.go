package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/resource"
)

// DefaultSamplingMaxTokens is the maxTokens of a sampling request when
// neither the prompt (a MaxTokens method) nor WithSamplingMaxTokens sets one.
const DefaultSamplingMaxTokens = 1024

// SamplingOption configures SamplingDelegate.
type SamplingOption func(*samplingConfig)

type samplingConfig struct {
	maxTokens int64
}

// WithSamplingMaxTokens sets the maxTokens of sampling requests for prompts
// that do not set their own. n <= 0 leaves it unset, the default.
func WithSamplingMaxTokens(n int64) SamplingOption {
	return func(c *samplingConfig) {
		if n > 0 {
			c.maxTokens = n
		}
	}
}

// RunPromptWithSampling runs prompt p with the model of the MCP client whose
// request is being served (found in ctx; see ServerSessionFromContext),
// through sampling/createMessage. It renders p (which must implement
// prompt.Renderer) with the first resource as input when that resource is
// JSON; the other resources (all of them, when the first is not JSON) are
// attached as user messages. The prompt's SystemPrompt, Model and MaxTokens
// methods, when it has them, fill the request. The client's answer comes
// back as a text, image or audio resource.
//
// It fails with toolkit.ErrNotImplemented outside an MCP request, when the
// client does not offer sampling, when p cannot be rendered, and on
// protocol versions from 2026-07-28 on outside a tools/call (where a
// server may no longer send requests to the client while it serves one;
// within a tools/call the client is asked in rounds of input-required
// results).
func RunPromptWithSampling(ctx context.Context, p toolkit.Prompt, resources ...toolkit.Resource) (toolkit.Resource, error) {
	return runSampling(ctx, samplingConfig{}, p, resources...)
}

func runSampling(ctx context.Context, cfg samplingConfig, p toolkit.Prompt, resources ...toolkit.Resource) (toolkit.Resource, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: nil prompt", toolkit.ErrBadParameter)
	}
	ss, ok := toolkit.SessionAs[bridge.ServerRequestHandler](toolkit.SessionFromContext(ctx))
	if !ok || ServerSessionFromContext(ctx) == nil {
		return nil, fmt.Errorf("%w: prompt %q: no MCP client session to sample from", toolkit.ErrNotImplemented, p.Name())
	}
	if err := canSample(toolkit.SessionFromContext(ctx)); err != nil {
		return nil, fmt.Errorf("prompt %q: %w", p.Name(), err)
	}
	r, ok := p.(prompt.Renderer)
	if !ok {
		return nil, fmt.Errorf("%w: prompt %q cannot be rendered", toolkit.ErrNotImplemented, p.Name())
	}
	var input json.RawMessage
	attachments := resources
	if len(resources) > 0 && resources[0] != nil && resource.IsJSON(resources[0].Type()) {
		data, err := resources[0].Read(ctx)
		if err != nil {
			return nil, fmt.Errorf("prompt %q: reading input: %w", p.Name(), err)
		}
		input, attachments = data, resources[1:]
	}
	rendered, err := r.Render(ctx, input)
	if err != nil {
		return nil, err
	}
	params := &sdk.CreateMessageParams{MaxTokens: cfg.maxTokens}
	if params.MaxTokens <= 0 {
		params.MaxTokens = DefaultSamplingMaxTokens
	}
	if m, ok := p.(interface{ MaxTokens() int }); ok && m.MaxTokens() > 0 {
		params.MaxTokens = int64(m.MaxTokens())
	}
	if sp, ok := p.(interface{ SystemPrompt() string }); ok {
		params.SystemPrompt = sp.SystemPrompt()
	}
	if m, ok := p.(interface{ Model() string }); ok && m.Model() != "" {
		params.ModelPreferences = &sdk.ModelPreferences{Hints: []*sdk.ModelHint{{Name: m.Model()}}}
	}
	add := func(role sdk.Role, res toolkit.Resource) error {
		content, _, _, err := contentOf(ctx, res)
		if err != nil {
			return err
		}
		for _, c := range content {
			c, err := samplingContent(c)
			if err != nil {
				return fmt.Errorf("prompt %q: %w", p.Name(), err)
			}
			params.Messages = append(params.Messages, &sdk.SamplingMessage{Role: role, Content: c})
		}
		return nil
	}
	for _, m := range rendered.Messages {
		role := sdk.Role(m.Role)
		if role == "" {
			role = "user"
		}
		if err := add(role, m.Content); err != nil {
			return nil, err
		}
	}
	for _, a := range attachments {
		if a == nil {
			continue
		}
		if err := add("user", a); err != nil {
			return nil, err
		}
	}
	res, err := ss.CreateMessage(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("%w: prompt %q: sampling: %v", toolkit.ErrUnavailable, p.Name(), err)
	}
	switch c := res.Content.(type) {
	case *sdk.TextContent:
		return resource.Text("output", c.Text)
	case *sdk.ImageContent:
		return resource.Blob("output", c.MIMEType, c.Data)
	case *sdk.AudioContent:
		return resource.Blob("output", c.MIMEType, c.Data)
	}
	return nil, fmt.Errorf("%w: prompt %q: sampling returned %T content", toolkit.ErrNotImplemented, p.Name(), res.Content)
}

// canSample reports why the client of sess cannot be asked to sample
// now, or nil when it can: it must offer sampling and speak a protocol
// version that allows server requests during a request (canRequest).
func canSample(sess toolkit.Session) error {
	return canSendRequest(sess, "sampling", func(c *sdk.ClientCapabilities) bool { return c.Sampling != nil })
}

// canSendRequest reports why the client of sess cannot be sent a request of the
// capability what (which offers tells whether the client has), or nil
// when it can.
func canSendRequest(sess toolkit.Session, what string, offers func(*sdk.ClientCapabilities) bool) error {
	if caps := sess.Capabilities(); caps == nil || !offers(caps) {
		return fmt.Errorf("%w: the MCP client does not offer %s", toolkit.ErrNotImplemented, what)
	}
	return canRequest(sess)
}

// canRequest reports why the client of sess may not be sent a request
// while it waits for the answer to its own, or nil when it may: protocol
// versions from 2026-07-28 on forbid it (multi round-trip requests replace
// such requests), unless the session asks in rounds (inputrounds.go).
func canRequest(sess toolkit.Session) error {
	if _, ok := toolkit.SessionAs[*roundSession](sess); ok {
		return nil
	}
	if pv, ok := toolkit.SessionAs[interface{ ProtocolVersion() string }](sess); ok && pv.ProtocolVersion() >= "2026-07-28" {
		return fmt.Errorf("%w: the MCP client speaks protocol %s, which forbids server requests during a request", toolkit.ErrNotImplemented, pv.ProtocolVersion())
	}
	return nil
}

// samplingContent converts content to a kind sampling messages may hold:
// text, image or audio. Textual embedded resources become text.
func samplingContent(c sdk.Content) (sdk.Content, error) {
	switch x := c.(type) {
	case *sdk.TextContent, *sdk.ImageContent, *sdk.AudioContent:
		return c, nil
	case *sdk.EmbeddedResource:
		if x.Resource != nil && x.Resource.Blob == nil {
			return &sdk.TextContent{Text: x.Resource.Text}, nil
		}
	}
	return nil, fmt.Errorf("%w: %T content cannot be sent for sampling", toolkit.ErrNotImplemented, c)
}

// samplingDelegate runs prompts through client sampling when it can.
type samplingDelegate struct {
	inner toolkit.ToolkitDelegate
	cfg   samplingConfig
}

// SamplingDelegate returns a delegate whose Call runs a prompt with the
// model of the MCP client being served (RunPromptWithSampling) when the
// call happens inside an MCP request from a client that offers sampling,
// and otherwise passes it to inner. OnEvent and CreateConnector go to inner
// (which may be nil: calls then fail with toolkit.ErrNotImplemented).
func SamplingDelegate(inner toolkit.ToolkitDelegate, opts ...SamplingOption) toolkit.ToolkitDelegate {
	d := &samplingDelegate{inner: inner}
	for _, o := range opts {
		if o != nil {
			o(&d.cfg)
		}
	}
	return d
}

func (d *samplingDelegate) OnEvent(ev toolkit.ConnectorEvent) {
	if d.inner != nil {
		d.inner.OnEvent(ev)
	}
}

func (d *samplingDelegate) Call(ctx context.Context, p toolkit.Prompt, resources ...toolkit.Resource) (toolkit.Resource, error) {
	if ServerSessionFromContext(ctx) != nil && canSample(toolkit.SessionFromContext(ctx)) == nil {
		return runSampling(ctx, d.cfg, p, resources...)
	}
	if d.inner == nil {
		return nil, fmt.Errorf("%w: prompt %q: no MCP client sampling and no delegate", toolkit.ErrNotImplemented, p.Name())
	}
	return d.inner.Call(ctx, p, resources...)
}

func (d *samplingDelegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	if d.inner == nil {
		return nil, fmt.Errorf("%w: connector %q: no delegate creates connectors", toolkit.ErrNotImplemented, url)
	}
	return d.inner.CreateConnector(url, onEvent)
}

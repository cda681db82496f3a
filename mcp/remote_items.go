package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

// remoteTool is a tool served by the connector's server.
type remoteTool struct {
	c    *Connector
	name string
	fp   string
	in   schemaText // never zero
	out  schemaText // zero: none
	meta tool.Meta
	task TaskSupport
	desc string
	// extra is the tool's `_meta` (MetaData).
	extra map[string]any
}

// newRemoteTool makes the tool of a tools/list entry. A tool whose input
// schema is unusable (not a JSON Schema of an object, or one the schema
// guard refuses: too large, too deep, a $ref cycle) is refused: the error
// says why, and the listing skips the tool alone. An unusable output
// schema is dropped with a log line.
func (c *Connector) newRemoteTool(t *sdk.Tool, task TaskSupport, fp string) (*remoteTool, error) {
	if task == "" {
		task = TaskForbidden
	}
	rt := &remoteTool{c: c, name: t.Name, fp: fp, task: task, desc: t.Description, extra: t.Meta}
	if task == TaskRequired {
		if rt.desc != "" {
			rt.desc += "\n\n"
		}
		rt.desc += taskRequiredNote
	}
	var err error
	if rt.in, err = objectSchema(t.InputSchema, true); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	if t.OutputSchema != nil {
		if rt.out, err = objectSchema(t.OutputSchema, false); err != nil {
			c.logger.Warn("ignoring the unusable output schema of a remote tool", "tool", t.Name, "error", err)
		}
	}
	rt.meta.Title = t.Title
	if a := t.Annotations; a != nil {
		if rt.meta.Title == "" {
			rt.meta.Title = a.Title
		}
		rt.meta.ReadOnlyHint = a.ReadOnlyHint
		rt.meta.DestructiveHint = a.DestructiveHint
		rt.meta.IdempotentHint = a.IdempotentHint
		rt.meta.OpenWorldHint = a.OpenWorldHint
	}
	return rt, nil
}

func (t *remoteTool) Name() string        { return t.name }
func (t *remoteTool) Description() string { return t.desc }
func (t *remoteTool) Meta() tool.Meta     { return t.meta }

// MetaData returns the `_meta` the server gave the tool; see
// [toolkit.MetaCarrier].
func (t *remoteTool) MetaData() map[string]any { return t.extra }

// InputSchema decodes the tool's input schema; each call returns a new
// value.
func (t *remoteTool) InputSchema() (*jsonschema.Schema, error) { return t.in.decode() }

// OutputSchema decodes the tool's output schema (nil when it has none);
// each call returns a new value.
func (t *remoteTool) OutputSchema() (*jsonschema.Schema, error) { return t.out.decode() }

// SchemaJSON returns the compact JSON of the tool's input and output
// schemas (out is "" when the tool has none), as checked when the tool
// was listed; see [bridge.SchemaTexter].
func (t *remoteTool) SchemaJSON() (in, out string) { return t.in.String(), t.out.String() }

// TaskSupport returns how the server lets the tool run as a task; see
// TaskSupporter.
func (t *remoteTool) TaskSupport() TaskSupport { return t.task }

// Run calls the tool on the server; see the guide docs/connectors.md for how
// the result is mapped.
func (t *remoteTool) Run(ctx context.Context, input json.RawMessage) (any, error) {
	if t.task == TaskRequired {
		return nil, fmt.Errorf("tool %q of server %s: %w", t.name, t.c.serverName(), ErrTaskRequired)
	}
	return t.c.callTool(ctx, t, input)
}

// remotePrompt is a prompt served by the connector's server.
type remotePrompt struct {
	c      *Connector
	def    sdk.Prompt
	fp     string
	schema *jsonschema.Schema
}

func (c *Connector) newRemotePrompt(p *sdk.Prompt, fp string) (*remotePrompt, error) {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	for _, a := range p.Arguments {
		if a == nil || a.Name == "" {
			return nil, fmt.Errorf("argument without a name")
		}
		if _, dup := s.Properties[a.Name]; dup {
			return nil, fmt.Errorf("argument %q given twice", a.Name)
		}
		s.Properties[a.Name] = &jsonschema.Schema{Type: "string", Title: a.Title, Description: a.Description}
		if a.Required {
			s.Required = append(s.Required, a.Name)
		}
	}
	return &remotePrompt{c: c, def: *p, fp: fp, schema: s}, nil
}

func (p *remotePrompt) Name() string                             { return p.def.Name }
func (p *remotePrompt) Title() string                            { return p.def.Title }
func (p *remotePrompt) Description() string                      { return p.def.Description }
func (p *remotePrompt) InputSchema() (*jsonschema.Schema, error) { return p.schema, nil }

// MetaData returns the `_meta` the server gave the prompt.
func (p *remotePrompt) MetaData() map[string]any { return p.def.Meta }

// Render calls prompts/get with the arguments in input (a JSON object).
func (p *remotePrompt) Render(ctx context.Context, input json.RawMessage) (*prompt.Rendered, error) {
	return p.c.getPrompt(ctx, p, input)
}

var _ prompt.Renderer = (*remotePrompt)(nil)

// remoteResource is a resource served by the connector's server.
type remoteResource struct {
	c   *Connector
	def sdk.Resource
	fp  string
}

func (r *remoteResource) URI() string { return r.def.URI }

func (r *remoteResource) Name() string { return cmp.Or(r.def.Name, r.def.URI) }

func (r *remoteResource) Description() string { return r.def.Description }
func (r *remoteResource) Type() string        { return r.def.MIMEType }

// MetaData returns the `_meta` the server listed the resource with (nil
// for a resource of a template).
func (r *remoteResource) MetaData() map[string]any { return r.def.Meta }

// Read calls resources/read.
func (r *remoteResource) Read(ctx context.Context) ([]byte, error) {
	rc, err := r.c.readResource(ctx, r, r.def.URI)
	return rc.Data, err
}

// ReadTyped is Read also returning the MIME type and `_meta` the server
// gave the contents, so that a gateway passes them on: a resource of a
// template has no listed type of its own. See [bridge.TypedReader].
func (r *remoteResource) ReadTyped(ctx context.Context) (bridge.Contents, error) {
	return r.c.readResource(ctx, r, r.def.URI)
}

// remoteTemplate is a resource template served by the connector's server.
// Open makes a remoteResource for a matching URI, so reading it is a
// resources/read of that URI on the server, with the retries and errors
// of any remote resource.
type remoteTemplate struct {
	c    *Connector
	def  sdk.ResourceTemplate
	fp   string
	tmpl *resource.URITemplate
}

var _ toolkit.ResourceTemplate = (*remoteTemplate)(nil)

// URITemplate returns the server's URI template.
func (t *remoteTemplate) URITemplate() string { return t.def.URITemplate }

// Name returns the template's name, or its URI template when it has none.
func (t *remoteTemplate) Name() string { return cmp.Or(t.def.Name, t.def.URITemplate) }

// Description returns the template's description.
func (t *remoteTemplate) Description() string { return t.def.Description }

// Type returns the MIME type of the template's resources, if the server
// gave one.
func (t *remoteTemplate) Type() string { return t.def.MIMEType }

// MetaData returns the `_meta` the server gave the template.
func (t *remoteTemplate) MetaData() map[string]any { return t.def.Meta }

// Open returns the remote resource uri names. It does no I/O.
func (t *remoteTemplate) Open(uri string) (toolkit.Resource, error) {
	if !validURI(uri) {
		return nil, fmt.Errorf("%w: resource template %q of server %s: invalid URI %.200q", errs.ErrBadParameter, t.def.URITemplate, t.c.serverName(), uri)
	}
	if _, ok := t.tmpl.Match(uri); !ok {
		return nil, fmt.Errorf("%w: resource template %q of server %s does not match %q", errs.ErrNotFound, t.def.URITemplate, t.c.serverName(), uri)
	}
	return &remoteResource{c: t.c, def: sdk.Resource{
		URI:         uri,
		Name:        t.Name(),
		Title:       t.def.Title,
		Description: t.def.Description,
		MIMEType:    t.def.MIMEType,
	}}, nil
}

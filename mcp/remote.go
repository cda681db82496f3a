package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/internal/names"
	"github.com/llmkit/toolkit/prompt"
	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

// Limits on what one server may list.
const (
	maxListItems = 100_000 // items of one kind
	maxListPages = 10_000  // pages of one list
	maxURILength = 8 << 10 // bytes of a resource URI
)

// catalog is an immutable snapshot of a server's items.
type catalog struct {
	connected  bool // a connection was made at least once
	tools      []toolkit.Tool
	prompts    []toolkit.Prompt
	resources  []toolkit.Resource
	templates  []toolkit.ResourceTemplate
	toolFP     map[string]string // name → fingerprint
	promptFP   map[string]string // name → fingerprint
	resourceFP map[string]string // URI → fingerprint
	templateFP map[string]string // URI template → fingerprint
}

func sameFingerprints(a, b map[string]string) bool { return maps.Equal(a, b) }

// fingerprint hashes the JSON of the fields of an item that matter to its
// users.
func fingerprint(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		b = fmt.Appendf(nil, "unmarshalable %T: %v", v, err)
	}
	sum := sha256.Sum256(b)
	return string(sum[:])
}

// listAll lists every kind of item the server offers.
func (c *Connector) listAll(ctx context.Context, l *live, caps *sdk.ServerCapabilities, prev *catalog) (*catalog, error) {
	next := &catalog{}
	var err error
	if caps.Tools != nil {
		if next.tools, next.toolFP, err = c.listTools(ctx, l, prev); err != nil {
			return nil, err
		}
	}
	if caps.Prompts != nil {
		if next.prompts, next.promptFP, err = c.listPrompts(ctx, l, prev); err != nil {
			return nil, err
		}
	}
	if caps.Resources != nil {
		if next.resources, next.resourceFP, err = c.listResources(ctx, l, prev); err != nil {
			return nil, err
		}
		if next.templates, next.templateFP, err = c.listTemplates(ctx, l, prev); err != nil {
			return nil, err
		}
	}
	return next, nil
}

// paginate calls fetch with each cursor until the server gives no next
// cursor, refusing loops and endless lists.
func paginate(what string, fetch func(cursor string) (next string, err error)) error {
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		next, err := fetch(cursor)
		if err != nil {
			return fmt.Errorf("listing %s: %w", what, err)
		}
		if next == "" {
			return nil
		}
		if seen[next] || page+1 >= maxListPages {
			return fmt.Errorf("listing %s: the server's pagination does not end (cursor %.64q)", what, next)
		}
		seen[next] = true
		cursor = next
	}
}

// accept checks a remote item's key and counts it; it logs and reports
// false for an item to skip.
func (c *Connector) accept(kind, key string, valid bool, fps map[string]string) bool {
	switch {
	case !valid:
		c.logger.Warn("skipping a remote item with an invalid name", "kind", kind, "name", fmt.Sprintf("%.200q", key))
		return false
	case fps[key] != "":
		c.logger.Warn("skipping a remote item whose name repeats an earlier one", "kind", kind, "name", key)
		return false
	case len(fps) >= maxListItems:
		c.logger.Warn("skipping remote items past the limit", "kind", kind, "limit", maxListItems, "name", key)
		return false
	}
	return true
}

func (c *Connector) listTools(ctx context.Context, l *live, prev *catalog) ([]toolkit.Tool, map[string]string, error) {
	old := map[string]*remoteTool{}
	for _, t := range prev.tools {
		if rt, ok := t.(*remoteTool); ok {
			old[rt.def.Name] = rt
		}
	}
	var out []toolkit.Tool
	fps := map[string]string{}
	err := paginate("tools", func(cursor string) (string, error) {
		res, err := l.sess.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return "", err
		}
		for _, t := range res.Tools {
			if t == nil || !c.accept("tool", t.Name, names.IsRemoteName(t.Name), fps) {
				continue
			}
			fp := fingerprint(struct {
				Name, Title, Description string
				In, Out                  any
				Ann                      *sdk.ToolAnnotations
			}{t.Name, t.Title, t.Description, t.InputSchema, t.OutputSchema, t.Annotations})
			fps[t.Name] = fp
			if o := old[t.Name]; o != nil && o.fp == fp {
				out = append(out, o)
				continue
			}
			out = append(out, c.newRemoteTool(t, fp))
		}
		return res.NextCursor, nil
	})
	return out, fps, err
}

func (c *Connector) listPrompts(ctx context.Context, l *live, prev *catalog) ([]toolkit.Prompt, map[string]string, error) {
	old := map[string]*remotePrompt{}
	for _, p := range prev.prompts {
		if rp, ok := p.(*remotePrompt); ok {
			old[rp.def.Name] = rp
		}
	}
	var out []toolkit.Prompt
	fps := map[string]string{}
	err := paginate("prompts", func(cursor string) (string, error) {
		res, err := l.sess.ListPrompts(ctx, &sdk.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return "", err
		}
		for _, p := range res.Prompts {
			if p == nil || !c.accept("prompt", p.Name, names.IsRemoteName(p.Name), fps) {
				continue
			}
			fp := fingerprint(struct {
				Name, Title, Description string
				Args                     []*sdk.PromptArgument
			}{p.Name, p.Title, p.Description, p.Arguments})
			fps[p.Name] = fp
			if o := old[p.Name]; o != nil && o.fp == fp {
				out = append(out, o)
				continue
			}
			rp, err := c.newRemotePrompt(p, fp)
			if err != nil {
				c.logger.Warn("skipping a remote prompt", "name", p.Name, "error", err)
				continue
			}
			out = append(out, rp)
		}
		return res.NextCursor, nil
	})
	return out, fps, err
}

func (c *Connector) listResources(ctx context.Context, l *live, prev *catalog) ([]toolkit.Resource, map[string]string, error) {
	old := map[string]*remoteResource{}
	for _, r := range prev.resources {
		if rr, ok := r.(*remoteResource); ok {
			old[rr.def.URI] = rr
		}
	}
	var out []toolkit.Resource
	fps := map[string]string{}
	err := paginate("resources", func(cursor string) (string, error) {
		res, err := l.sess.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return "", err
		}
		for _, r := range res.Resources {
			if r == nil || !c.accept("resource", r.URI, validURI(r.URI), fps) {
				continue
			}
			fp := fingerprint(struct {
				URI, Name, Title, Description, MIMEType string
			}{r.URI, r.Name, r.Title, r.Description, r.MIMEType})
			fps[r.URI] = fp
			if o := old[r.URI]; o != nil && o.fp == fp {
				out = append(out, o)
				continue
			}
			out = append(out, &remoteResource{c: c, def: *r, fp: fp})
		}
		return res.NextCursor, nil
	})
	return out, fps, err
}

// listTemplates lists the server's resource templates (every page).
// Templates that do not parse (resource.ParseURITemplate: invalid, relative
// or longer than 8 KiB), repeat an earlier one or pass the item limit are
// skipped with a log line. A server that declares resources but answers
// resources/templates/list with an error (an older or partial
// implementation) has no templates; only a failure of the connection fails
// the listing.
func (c *Connector) listTemplates(ctx context.Context, l *live, prev *catalog) ([]toolkit.ResourceTemplate, map[string]string, error) {
	old := map[string]*remoteTemplate{}
	for _, t := range prev.templates {
		if rt, ok := t.(*remoteTemplate); ok {
			old[rt.def.URITemplate] = rt
		}
	}
	var out []toolkit.ResourceTemplate
	fps := map[string]string{}
	err := paginate("resource templates", func(cursor string) (string, error) {
		res, err := l.sess.ListResourceTemplates(ctx, &sdk.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return "", err
		}
		for _, t := range res.ResourceTemplates {
			if t == nil {
				continue
			}
			tmpl, perr := resource.ParseURITemplate(t.URITemplate)
			if perr != nil {
				c.logger.Warn("skipping a remote resource template", "error", perr)
				continue
			}
			if !c.accept("resource template", t.URITemplate, true, fps) {
				continue
			}
			fp := fingerprint(struct {
				URITemplate, Name, Title, Description, MIMEType string
			}{t.URITemplate, t.Name, t.Title, t.Description, t.MIMEType})
			fps[t.URITemplate] = fp
			if o := old[t.URITemplate]; o != nil && o.fp == fp {
				out = append(out, o)
				continue
			}
			out = append(out, &remoteTemplate{c: c, def: *t, fp: fp, tmpl: tmpl})
		}
		return res.NextCursor, nil
	})
	if err != nil && isRemoteError(err) {
		level := slog.LevelWarn
		if we := (*jsonrpc.Error)(nil); errors.As(err, &we) && we.Code == jsonrpc.CodeMethodNotFound {
			level = slog.LevelDebug
		}
		c.logger.Log(ctx, level, "the server did not list its resource templates", "error", err)
		return nil, nil, nil
	}
	return out, fps, err
}

// validURI reports whether s is an absolute URI of reasonable length.
func validURI(s string) bool {
	if s == "" || len(s) > maxURILength {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != ""
}

// remoteTool is a tool served by the connector's server.
type remoteTool struct {
	c     *Connector
	def   sdk.Tool
	fp    string
	in    *jsonschema.Schema
	inErr error
	out   *jsonschema.Schema
	meta  tool.Meta
}

func (c *Connector) newRemoteTool(t *sdk.Tool, fp string) *remoteTool {
	rt := &remoteTool{c: c, def: *t, fp: fp}
	rt.in, rt.inErr = objectSchema(t.InputSchema, true)
	if rt.inErr != nil {
		rt.inErr = fmt.Errorf("%w: tool %q of server %s: input schema: %v", errs.ErrSchema, t.Name, c.serverName(), rt.inErr)
		c.logger.Warn("remote tool has an unusable input schema; calls will fail", "tool", t.Name, "error", rt.inErr)
	}
	if t.OutputSchema != nil {
		out, err := objectSchema(t.OutputSchema, false)
		if err != nil {
			c.logger.Warn("ignoring the unusable output schema of a remote tool", "tool", t.Name, "error", err)
		} else {
			rt.out = out
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
	return rt
}

// objectSchema converts a schema as decoded by the SDK into a
// jsonschema.Schema that must describe an object. A missing input schema
// (allowNil) stands for an object with any properties.
func objectSchema(v any, allowNil bool) (*jsonschema.Schema, error) {
	if v == nil {
		if allowNil {
			return &jsonschema.Schema{Type: "object"}, nil
		}
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %v", err)
	}
	if s.Type != "object" {
		t := s.Type
		if t == "" && len(s.Types) > 0 {
			t = fmt.Sprint(s.Types)
		}
		return nil, fmt.Errorf("want a schema of type \"object\", got type %q", t)
	}
	if _, err := s.Resolve(nil); err != nil {
		return nil, fmt.Errorf("invalid schema: %v", err)
	}
	return s, nil
}

func (t *remoteTool) Name() string                              { return t.def.Name }
func (t *remoteTool) Description() string                       { return t.def.Description }
func (t *remoteTool) InputSchema() (*jsonschema.Schema, error)  { return t.in, t.inErr }
func (t *remoteTool) OutputSchema() (*jsonschema.Schema, error) { return t.out, nil }
func (t *remoteTool) Meta() tool.Meta                           { return t.meta }

// Run calls the tool on the server; see the package documentation for how
// the result is mapped.
func (t *remoteTool) Run(ctx context.Context, input json.RawMessage) (any, error) {
	if t.inErr != nil {
		return nil, t.inErr
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

func (r *remoteResource) Name() string {
	if r.def.Name != "" {
		return r.def.Name
	}
	return r.def.URI
}

func (r *remoteResource) Description() string { return r.def.Description }
func (r *remoteResource) Type() string        { return r.def.MIMEType }

// Read calls resources/read.
func (r *remoteResource) Read(ctx context.Context) ([]byte, error) {
	b, _, err := r.c.readResource(ctx, r.def.URI)
	return b, err
}

// ReadTyped is Read also returning the MIME type the server gave the
// content ("" if none), so that a gateway passes it on: a resource of a
// template has no listed type of its own. See [bridge.TypedReader].
func (r *remoteResource) ReadTyped(ctx context.Context) ([]byte, string, error) {
	return r.c.readResource(ctx, r.def.URI)
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
func (t *remoteTemplate) Name() string {
	if t.def.Name != "" {
		return t.def.Name
	}
	return t.def.URITemplate
}

// Description returns the template's description.
func (t *remoteTemplate) Description() string { return t.def.Description }

// Type returns the MIME type of the template's resources, if the server
// gave one.
func (t *remoteTemplate) Type() string { return t.def.MIMEType }

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

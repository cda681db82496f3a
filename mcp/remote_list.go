package mcp

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"maps"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/fingerprint"
	"github.com/llmkit/toolkit/internal/names"
	"github.com/llmkit/toolkit/resource"
)

// Limits on what one server may list, besides Limits.MaxListItems and
// Limits.MaxListBytes.
const (
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

// listAll lists every kind of item the server offers.
func (c *Connector) listAll(ctx context.Context, l *live, caps *sdk.ServerCapabilities, prev *catalog) (*catalog, error) {
	next := &catalog{}
	var err error
	if caps.Tools != nil {
		if next.tools, next.toolFP, err = listKind(ctx, c, l, toolSpec, prev.tools); err != nil {
			return nil, err
		}
	}
	if caps.Prompts != nil {
		if next.prompts, next.promptFP, err = listKind(ctx, c, l, promptSpec, prev.prompts); err != nil {
			return nil, err
		}
	}
	if caps.Resources != nil {
		if next.resources, next.resourceFP, err = listKind(ctx, c, l, resourceSpec, prev.resources); err != nil {
			return nil, err
		}
		if next.templates, next.templateFP, err = listKind(ctx, c, l, templateSpec, prev.templates); err != nil {
			return nil, err
		}
	}
	return next, nil
}

// kindSpec describes one kind of remote item to listKind: D is the SDK's
// definition of an item, I the toolkit's item made of it.
type kindSpec[D, I any] struct {
	kind toolkit.Kind
	what string // the kind in errors, plural: "tools"
	one  string // the kind in logs, singular: "tool"
	// page fetches the page at cursor.
	page func(ctx context.Context, s *sdk.ClientSession, cursor string) (defs []*D, next string, err error)
	// key returns the item's key (its name or URI) and, when the key is
	// unusable, why.
	key func(d *D) (key, invalid string)
	// fingerprint hashes the fields of the definition that matter to the
	// item's users (an item whose fingerprint did not change is kept), and
	// measures them (fingerprint.Sized).
	fingerprint func(d *D) (fp string, size int)
	// build makes the item, a [listedItem]; an error skips it.
	build func(c *Connector, d *D, fp string) (I, error)
	// optional: a server that answers the listing with an error (an older
	// or partial implementation) has no items of the kind; only a failure
	// of the connection fails the listing.
	optional bool
}

// A listedItem is an item a kindSpec's build made: it returns the key and
// the fingerprint of the definition it was made of, so that a later
// listing keeps it while the definition does not change.
type listedItem interface {
	listed() (key, fp string)
}

func (t *remoteTool) listed() (key, fp string)     { return t.name, t.fp }
func (p *remotePrompt) listed() (key, fp string)   { return p.def.Name, p.fp }
func (r *remoteResource) listed() (key, fp string) { return r.def.URI, r.fp }
func (t *remoteTemplate) listed() (key, fp string) { return t.def.URITemplate, t.fp }

// listPage makes a kindSpec's page of one of the session's list methods:
// params makes the method's parameters for a cursor, and unpack returns the
// items and the next cursor of its result.
func listPage[P, R, D any](list func(*sdk.ClientSession, context.Context, P) (R, error), params func(cursor string) P, unpack func(R) ([]*D, string)) func(context.Context, *sdk.ClientSession, string) ([]*D, string, error) {
	return func(ctx context.Context, s *sdk.ClientSession, cursor string) ([]*D, string, error) {
		res, err := list(s, ctx, params(cursor))
		if err != nil {
			return nil, "", err
		}
		items, next := unpack(res)
		return items, next, nil
	}
}

// maxSkipExamples bounds the skipped items a page's warning names.
const maxSkipExamples = 5

// listKind lists every item of one kind, page by page: it refuses loops
// and endless lists, skips items whose key is invalid or repeats an
// earlier one (with one warning per page, not per item), stops fetching
// once the server sent Limits.MaxListItems items or definitions of
// Limits.MaxListBytes, and keeps the items of prev whose fingerprint did not
// change. It returns the items and their fingerprints by key.
func listKind[D, I any](ctx context.Context, c *Connector, l *live, k *kindSpec[D, I], prev []I) ([]I, map[string]string, error) {
	type known struct {
		it I
		fp string
	}
	old := make(map[string]known, len(prev))
	for _, it := range prev {
		if li, ok := any(it).(listedItem); ok {
			key, fp := li.listed()
			old[key] = known{it, fp}
		}
	}
	var out []I
	fps := map[string]string{}
	// Cursors already followed, by hash: a server's cursors may be long.
	seed := maphash.MakeSeed()
	seen := map[uint64]bool{}
	received, kept := 0, 0 // items received, bytes of definitions kept
	cursor := ""
	for page := 1; ; page++ {
		defs, next, err := k.page(ctx, l.sess, cursor)
		if err != nil {
			if k.optional && isRemoteError(err) {
				level := slog.LevelWarn
				if we := (*jsonrpc.Error)(nil); errors.As(err, &we) && we.Code == jsonrpc.CodeMethodNotFound {
					level = slog.LevelDebug
				}
				c.logger.Log(ctx, level, "the server did not list its "+k.what, "error", err)
				return nil, nil, nil
			}
			return nil, nil, fmt.Errorf("listing %s: %w", k.what, err)
		}
		var skipped int
		var examples []string
		skip := func(key, why string) {
			skipped++
			if len(examples) < maxSkipExamples {
				examples = append(examples, fmt.Sprintf("%.64q: %.400s", key, why))
			}
		}
		full := false
		for i, d := range defs {
			if d == nil {
				continue
			}
			// What the item was made of goes once it is done with.
			defs[i] = nil
			if received >= c.o.maxItems {
				full = true
				break
			}
			received++
			key, invalid := k.key(d)
			if invalid != "" {
				skip(key, invalid)
				continue
			}
			if _, dup := fps[key]; dup {
				skip(key, "repeats an earlier one")
				continue
			}
			fp, size := k.fingerprint(d)
			if kept+size > c.o.maxListBytes {
				full = true
				break
			}
			kept += size
			if o, ok := old[key]; ok && o.fp == fp {
				fps[key] = fp
				out = append(out, o.it)
				continue
			}
			if m, ok := any(d).(metaHolder); ok {
				if err := checkMeta(m.GetMeta()); err != nil {
					skip(key, err.Error())
					continue
				}
				m.SetMeta(dataMeta(m.GetMeta()))
			}
			it, err := k.build(c, d, fp)
			if err != nil {
				skip(key, err.Error())
				continue
			}
			fps[key] = fp
			out = append(out, it)
		}
		if skipped > 0 {
			c.logger.Warn("skipping remote items", "kind", k.one, "page", page, "skipped", skipped, "examples", strings.Join(examples, "; "))
		}
		if full || (received >= c.o.maxItems && next != "") {
			c.logger.Warn("the server lists more than a connector keeps; keeping the first ones", "kind", k.one, "limit", c.o.maxItems, "limit_bytes", c.o.maxListBytes)
			return out, fps, nil
		}
		if next == "" {
			return out, fps, nil
		}
		h := maphash.String(seed, next)
		if seen[h] || page >= maxListPages {
			return nil, nil, fmt.Errorf("listing %s: the server's pagination does not end (cursor %.64q)", k.what, next)
		}
		seen[h] = true
		cursor = next
	}
}

// invalidName says why name is not a usable remote item name ("" when it
// is).
func invalidName(name string) string {
	if names.IsRemoteName(name) {
		return ""
	}
	return "invalid name"
}

// listedTool is a tool of a tools/list page with its task support, which
// the SDK's Tool does not keep (tasks.go), or, when def is nil, an entry
// of the page that does not decode and why (lenient_list.go). Until it is
// decoded, raw holds its JSON (tools_page.go).
type listedTool struct {
	def       *sdk.Tool
	task      TaskSupport
	undecoded string
	raw       []byte
	index     int // its place in the page
}

// metaHolder is an item definition with a `_meta` (the SDK's types and
// listedTool), which listKind bounds and strips of hop keys.
type metaHolder interface {
	GetMeta() map[string]any
	SetMeta(map[string]any)
}

// GetMeta returns the tool's `_meta`.
func (t *listedTool) GetMeta() map[string]any {
	if t.def == nil {
		return nil
	}
	return t.def.Meta
}

// SetMeta sets the tool's `_meta`.
func (t *listedTool) SetMeta(m map[string]any) {
	if t.def != nil {
		t.def.Meta = m
	}
}

var toolSpec = &kindSpec[listedTool, toolkit.Tool]{
	kind: toolkit.KindTool, what: "tools", one: "tool",
	page: func(ctx context.Context, s *sdk.ClientSession, cursor string) ([]*listedTool, string, error) {
		slot := &taskSlot{}
		res, err := s.ListTools(withTaskSlot(ctx, slot), &sdk.ListToolsParams{Cursor: cursor})
		slot.finish()
		if err != nil {
			return nil, "", err
		}
		if tools, ok := slot.page(); ok {
			// The connection took the page's tools (tools_page.go).
			return tools, res.NextCursor, nil
		}
		out := make([]*listedTool, 0, len(res.Tools))
		for _, t := range res.Tools {
			if t != nil {
				out = append(out, &listedTool{def: t, task: TaskForbidden})
			}
		}
		return out, res.NextCursor, nil
	},
	key: func(t *listedTool) (string, string) {
		if t.raw != nil {
			t.decode()
		}
		if t.def == nil {
			return "", t.undecoded
		}
		return t.def.Name, invalidName(t.def.Name)
	},
	fingerprint: func(lt *listedTool) (string, int) {
		t := lt.def
		return fingerprint.Sized(struct {
			Name, Title, Description string
			In, Out                  any
			Ann                      *sdk.ToolAnnotations
			Task                     TaskSupport
			Meta                     sdk.Meta
		}{t.Name, t.Title, t.Description, t.InputSchema, t.OutputSchema, t.Annotations, lt.task, t.Meta})
	},
	build: func(c *Connector, t *listedTool, fp string) (toolkit.Tool, error) {
		return c.newRemoteTool(t.def, t.task, fp)
	},
}

var promptSpec = &kindSpec[sdk.Prompt, toolkit.Prompt]{
	kind: toolkit.KindPrompt, what: "prompts", one: "prompt",
	page: listPage((*sdk.ClientSession).ListPrompts,
		func(cursor string) *sdk.ListPromptsParams { return &sdk.ListPromptsParams{Cursor: cursor} },
		func(r *sdk.ListPromptsResult) ([]*sdk.Prompt, string) { return r.Prompts, r.NextCursor }),
	key: func(p *sdk.Prompt) (string, string) { return p.Name, invalidName(p.Name) },
	fingerprint: func(p *sdk.Prompt) (string, int) {
		return fingerprint.Sized(struct {
			Name, Title, Description string
			Args                     []*sdk.PromptArgument
			Meta                     sdk.Meta
		}{p.Name, p.Title, p.Description, p.Arguments, p.Meta})
	},
	build: func(c *Connector, p *sdk.Prompt, fp string) (toolkit.Prompt, error) { return c.newRemotePrompt(p, fp) },
}

var resourceSpec = &kindSpec[sdk.Resource, toolkit.Resource]{
	kind: toolkit.KindResource, what: "resources", one: "resource",
	page: listPage((*sdk.ClientSession).ListResources,
		func(cursor string) *sdk.ListResourcesParams { return &sdk.ListResourcesParams{Cursor: cursor} },
		func(r *sdk.ListResourcesResult) ([]*sdk.Resource, string) { return r.Resources, r.NextCursor }),
	key: func(r *sdk.Resource) (string, string) {
		if !validURI(r.URI) {
			return r.URI, "invalid URI"
		}
		return r.URI, ""
	},
	fingerprint: func(r *sdk.Resource) (string, int) {
		return fingerprint.Sized(struct {
			URI, Name, Title, Description, MIMEType string
			Meta                                    sdk.Meta
		}{r.URI, r.Name, r.Title, r.Description, r.MIMEType, r.Meta})
	},
	build: func(c *Connector, r *sdk.Resource, fp string) (toolkit.Resource, error) {
		return &remoteResource{c: c, def: *r, fp: fp}, nil
	},
}

// templateSpec lists the server's resource templates. Templates that do
// not parse (resource.ParseURITemplate: invalid, relative or longer than 8
// KiB) are skipped like invalid names; a server that declares resources
// but answers resources/templates/list with an error has no templates.
var templateSpec = &kindSpec[sdk.ResourceTemplate, toolkit.ResourceTemplate]{
	kind: toolkit.KindTemplate, what: "resource templates", one: "resource template",
	page: listPage((*sdk.ClientSession).ListResourceTemplates,
		func(cursor string) *sdk.ListResourceTemplatesParams {
			return &sdk.ListResourceTemplatesParams{Cursor: cursor}
		},
		func(r *sdk.ListResourceTemplatesResult) ([]*sdk.ResourceTemplate, string) {
			return r.ResourceTemplates, r.NextCursor
		}),
	key: func(t *sdk.ResourceTemplate) (string, string) { return t.URITemplate, "" },
	fingerprint: func(t *sdk.ResourceTemplate) (string, int) {
		return fingerprint.Sized(struct {
			URITemplate, Name, Title, Description, MIMEType string
			Meta                                            sdk.Meta
		}{t.URITemplate, t.Name, t.Title, t.Description, t.MIMEType, t.Meta})
	},
	build: func(c *Connector, t *sdk.ResourceTemplate, fp string) (toolkit.ResourceTemplate, error) {
		tmpl, err := resource.ParseURITemplate(t.URITemplate)
		if err != nil {
			return nil, err
		}
		return &remoteTemplate{c: c, def: *t, fp: fp, tmpl: tmpl}, nil
	},
	optional: true,
}

// validURI reports whether s is an absolute URI of reasonable length.
func validURI(s string) bool {
	if s == "" || len(s) > maxURILength {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != ""
}

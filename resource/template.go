package resource

import (
	"context"
	"fmt"
	"maps"
	"unicode"
	"unicode/utf8"

	"github.com/llmkit/toolkit/internal/errs"
)

// Template describes a family of resources whose URIs follow an RFC 6570
// URI template, as MCP resource templates do: "weather://{city}/today"
// names one resource per city. A source that cannot list its resources
// (there may be infinitely many) offers a template instead, and a URI that
// matches it names a resource.
type Template interface {
	// URITemplate returns the RFC 6570 URI template; it starts with a
	// scheme (see [ParseURITemplate]).
	URITemplate() string
	// Name returns a human-readable name for the template.
	Name() string
	// Description returns an optional description of the template.
	Description() string
	// Type returns the MIME type of every resource of the template, or ""
	// if it is unknown or varies.
	Type() string
	// Open returns the resource that uri names. It does no I/O: the
	// resource's Read does. A uri the template does not match is refused.
	Open(uri string) (Resource, error)
}

// maxTemplateName bounds the length of a template's name.
const maxTemplateName = 128

// NewTemplate returns a template whose resources are read by read, which
// gets the resource's URI and the values of the template's variables in
// it (see [URITemplate.Match] for how they are decoded). Each resource's
// name, description and MIME type are the template's. Open refuses a URI
// that does not match the template (wrapping toolkit.ErrNotFound) or that
// is not an absolute URI ([CheckURI], wrapping toolkit.ErrBadParameter).
//
// uriTemplate must parse with [ParseURITemplate]; name must be non-empty
// printable text of at most 128 bytes; mimeType must be "" or a
// "type/subtype" that [mime.ParseMediaType] accepts; read must not be nil.
// Otherwise the error wraps toolkit.ErrBadParameter and names the template.
func NewTemplate(uriTemplate, name, description, mimeType string, read func(ctx context.Context, uri string, vars map[string]string) ([]byte, error)) (Template, error) {
	tmpl, err := ParseURITemplate(uriTemplate)
	if err != nil {
		return nil, err
	}
	if err := checkTemplateName(name); err != nil {
		return nil, fmt.Errorf("%w: resource template %q: %v", errs.ErrBadParameter, uriTemplate, err)
	}
	if mimeType != "" {
		if err := checkMIME(mimeType); err != nil {
			return nil, fmt.Errorf("%w: resource template %q: %w", errs.ErrBadParameter, uriTemplate, err)
		}
	}
	if read == nil {
		return nil, fmt.Errorf("%w: resource template %q: nil read function", errs.ErrBadParameter, uriTemplate)
	}
	return &template{tmpl: tmpl, name: name, desc: description, typ: mimeType, read: read}, nil
}

func checkTemplateName(name string) error {
	if name == "" {
		return fmt.Errorf("empty name")
	}
	if len(name) > maxTemplateName {
		return fmt.Errorf("name of %d bytes is longer than %d", len(name), maxTemplateName)
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("name %q: invalid UTF-8", name)
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("name %q: unprintable character %U", name, r)
		}
	}
	return nil
}

// template is the Template made by NewTemplate.
type template struct {
	tmpl *URITemplate
	name string
	desc string
	typ  string
	read func(ctx context.Context, uri string, vars map[string]string) ([]byte, error)
}

// URITemplate returns the URI template.
func (t *template) URITemplate() string { return t.tmpl.String() }

// Name returns the template's name.
func (t *template) Name() string { return t.name }

// Description returns the template's description.
func (t *template) Description() string { return t.desc }

// Type returns the MIME type of the template's resources.
func (t *template) Type() string { return t.typ }

// Open returns the resource uri names, or an error when uri does not match
// the template.
func (t *template) Open(uri string) (Resource, error) {
	if err := CheckURI(uri); err != nil {
		return nil, fmt.Errorf("resource template %q: %w", t.tmpl.String(), err)
	}
	vars, ok := t.tmpl.Match(uri)
	if !ok {
		return nil, fmt.Errorf("%w: resource template %q does not match %q", errs.ErrNotFound, t.tmpl.String(), uri)
	}
	return &templated{t: t, uri: uri, vars: vars}, nil
}

// templated is a resource of a template made by NewTemplate.
type templated struct {
	t    *template
	uri  string
	vars map[string]string
}

// URI returns the resource's URI.
func (r *templated) URI() string { return r.uri }

// Name returns the template's name.
func (r *templated) Name() string { return r.t.name }

// Description returns the template's description.
func (r *templated) Description() string { return r.t.desc }

// Type returns the template's MIME type.
func (r *templated) Type() string { return r.t.typ }

// Read calls the template's read function with a copy of the variables.
func (r *templated) Read(ctx context.Context) ([]byte, error) {
	b, err := r.t.read(ctx, r.uri, maps.Clone(r.vars))
	if err != nil {
		return nil, fmt.Errorf("resource %q (template %q): %w", r.uri, r.t.tmpl.String(), err)
	}
	return b, nil
}

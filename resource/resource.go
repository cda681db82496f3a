package resource

import "context"

// Resource is an addressable blob of data: a tool's output, a tool's or
// prompt's input, or a static item served by a source.
type Resource interface {
	// URI returns the unique identifier of the resource: an absolute URI
	// with a non-empty scheme.
	URI() string
	// Name returns a human-readable name for the resource.
	Name() string
	// Description returns an optional description of the resource.
	Description() string
	// Type returns the MIME type of the content, or "" if unknown.
	Type() string
	// Read returns the content.
	Read(ctx context.Context) ([]byte, error)
}

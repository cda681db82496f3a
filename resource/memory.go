package resource

import (
	"context"
	"strconv"
)

// memory is the immutable in-memory resource behind every constructor. The
// content is held as a string so it cannot change after construction.
type memory struct {
	uri  string
	name string
	desc string
	typ  string
	data string
}

var _ Resource = (*memory)(nil)

// newMemory returns a resource with a freshly generated URI. name must
// already be a valid identifier.
func newMemory(name, typ, data string) *memory {
	return &memory{uri: newURI(name), name: name, typ: typ, data: data}
}

// URI returns the resource's URI.
func (m *memory) URI() string { return m.uri }

// Name returns the resource's name.
func (m *memory) Name() string { return m.name }

// Description returns the resource's description.
func (m *memory) Description() string { return m.desc }

// Type returns the MIME type of the content.
func (m *memory) Type() string { return m.typ }

// Read returns a copy of the content. It never fails.
func (m *memory) Read(context.Context) ([]byte, error) { return []byte(m.data), nil }

// String describes the resource without its content, so that printing or
// logging a resource never dumps a large payload.
func (m *memory) String() string {
	return m.uri + " (" + m.typ + ", " + strconv.Itoa(len(m.data)) + " bytes)"
}

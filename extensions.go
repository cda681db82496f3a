package toolkit

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Extensions is the MCP `capabilities.extensions` object a peer declares
// (extension id, such as "io.modelcontextprotocol/ui", to its settings
// object), kept as its compact JSON text so that [ConnectorState] stays
// comparable and no one can change it in place. The zero value is no
// extensions. It marshals to JSON as the object itself.
type Extensions string

// maxExtensionID bounds the length of an extension id.
const maxExtensionID = 256

// NewExtensions returns the Extensions of m (nil or empty: none): each key
// an extension id of 1 to 256 bytes, each value its settings, a JSON
// object (nil is made {}). It fails, wrapping ErrBadParameter, when m is
// not such a map.
func NewExtensions(m map[string]any) (Extensions, error) {
	if len(m) == 0 {
		return "", nil
	}
	for id := range m {
		if id == "" || len(id) > maxExtensionID {
			return "", fmt.Errorf("%w: extension id %.64q: want 1 to %d bytes", ErrBadParameter, id, maxExtensionID)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("%w: extensions: %v", ErrBadParameter, err)
	}
	var objs map[string]map[string]any
	if err := json.Unmarshal(b, &objs); err != nil {
		return "", fmt.Errorf("%w: extensions: each one's settings must be an object", ErrBadParameter)
	}
	for id, v := range objs {
		if v == nil {
			objs[id] = map[string]any{}
		}
	}
	if b, err = json.Marshal(objs); err != nil {
		return "", fmt.Errorf("%w: extensions: %v", ErrBadParameter, err)
	}
	return Extensions(b), nil
}

// Map decodes the extensions: nil for none.
func (e Extensions) Map() (map[string]any, error) {
	if e == "" {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(e), &m); err != nil {
		return nil, fmt.Errorf("%w: extensions: %v", ErrBadParameter, err)
	}
	return m, nil
}

// MarshalJSON returns the JSON object (null for none).
func (e Extensions) MarshalJSON() ([]byte, error) {
	if e == "" {
		return []byte("null"), nil
	}
	return []byte(e), nil
}

// UnmarshalJSON keeps the compact text of a JSON object; null is none.
func (e *Extensions) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*e = ""
		return nil
	}
	if len(b) == 0 || b[0] != '{' {
		return fmt.Errorf("%w: extensions: want a JSON object", ErrBadParameter)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return fmt.Errorf("%w: extensions: %v", ErrBadParameter, err)
	}
	*e = Extensions(buf.String())
	return nil
}

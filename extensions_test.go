package toolkit

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Extensions keep a peer's declaration as compact JSON: settings made
// objects, marshalled as the object itself, and refused when not a map of
// objects.
func TestExtensions(t *testing.T) {
	e, err := NewExtensions(map[string]any{"b.example/x": nil, "a.example/y": map[string]any{"k": 1}})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"a.example/y":{"k":1},"b.example/x":{}}`
	if e != want {
		t.Errorf("NewExtensions = %s, want %s", e, want)
	}
	b, err := json.Marshal(ConnectorState{Extensions: e})
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Extensions Extensions `json:"extensions"`
	}
	if err := json.Unmarshal(b, &st); err != nil || st.Extensions != e {
		t.Errorf("round trip of %s: %q, %v", b, st.Extensions, err)
	}
	if b, _ := json.Marshal(ConnectorState{}); strings.Contains(string(b), "extensions") {
		t.Errorf("no extensions marshal as %s", b)
	}
	m, err := e.Map()
	if err != nil || len(m) != 2 {
		t.Errorf("Map = %v, %v", m, err)
	}
	for _, bad := range []map[string]any{{"": nil}, {"a.example/x": 3}, {"a.example/x": []any{}}} {
		if _, err := NewExtensions(bad); !errors.Is(err, ErrBadParameter) {
			t.Errorf("NewExtensions(%v) = %v, want ErrBadParameter", bad, err)
		}
	}
}

// FuzzExtensionsJSON: any text either is refused or becomes Extensions
// that decode and marshal back to the same text.
func FuzzExtensionsJSON(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `{"a/b":{"k":[1,2]}}`, ` { "x" : { } } `, `[]`, `{"a":`, `"s"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var e Extensions
		if err := e.UnmarshalJSON([]byte(s)); err != nil {
			return
		}
		if _, err := e.Map(); err != nil && e != "" {
			// A JSON object that is not a map of strings to values
			// cannot be: every object is.
			t.Fatalf("%q kept as %q does not decode: %v", s, e, err)
		}
		b, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var again Extensions
		if err := again.UnmarshalJSON(b); err != nil || again != e {
			t.Fatalf("%q: round trip %q, %v", s, again, err)
		}
	})
}

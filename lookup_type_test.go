package toolkit

import (
	"errors"
	"testing"
)

func TestLookupType(t *testing.T) {
	tk, _ := fixture(t)
	ctx := t.Context()
	tests := []struct {
		typ       ListType
		key       string
		ns, label string // label: the item's name or URI; "" for a miss
		err       error
	}{
		// "shared" is a tool of "one" and "two" and a prompt of "one": each
		// kind reaches its own item.
		{ListTypeTools, "shared", "one", "shared", nil},
		{ListTypePrompts, "shared", "one", "shared", nil},
		{ListTypeTools, "two.shared", "two", "shared", nil},
		{ListTypePrompts, "one.shared", "one", "shared", nil},
		// "echo" is a builtin tool and a builtin prompt.
		{ListTypeTools, "echo", "builtin", "echo", nil},
		{ListTypePrompts, "echo", "builtin", "echo", nil},
		{ListTypePrompts, "user.echo", "user", "echo", nil},
		// Resources by URI, qualified URI and name.
		{ListTypeResources, "file:///shared", "one", "file:///shared", nil},
		{ListTypeResources, "file:///shared#two", "two", "file:///shared", nil},
		{ListTypeResources, "shared_res", "one", "file:///shared", nil},
		// Misses: the key names an item of another kind, or nothing.
		{ListTypePrompts, "only_one", "", "", ErrNotFound},
		{ListTypePrompts, "two.shared", "", "", ErrNotFound},
		{ListTypeTools, "file:///shared", "", "", ErrNotFound},
		{ListTypeResources, "echo", "", "", ErrNotFound},
		{ListTypeTools, "user.user_tool", "", "", ErrNotFound}, // user never serves tools
		{ListTypeTools, "", "", "", ErrBadParameter},
		{"widget", "echo", "", "", ErrBadParameter},
	}
	for _, tt := range tests {
		t.Run(string(tt.typ)+"/"+tt.key, func(t *testing.T) {
			it, err := tk.LookupType(ctx, tt.typ, tt.key)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			label := it.Name
			if it.Type == ListTypeResources {
				label = it.URI
			}
			if it.Type != tt.typ || it.Namespace != tt.ns || label != tt.label {
				t.Errorf("got %s %s %s, want %s %s %s", it.Type, it.Namespace, label, tt.typ, tt.ns, tt.label)
			}
			// The item's own key reaches it again.
			again, err := tk.LookupType(ctx, tt.typ, it.Key())
			if err != nil || again.Value != it.Value {
				t.Errorf("LookupType(%q) = %v, %v: not the same item", it.Key(), again, err)
			}
		})
	}
	for _, key := range []string{"shared", "one.shared", "file:///shared#two"} {
		typ := ListTypePrompts
		if key[0] == 'f' {
			typ = ListTypeResources
		}
		if n := testing.AllocsPerRun(100, func() { _, _ = tk.LookupType(ctx, typ, key) }); n != 0 {
			t.Errorf("LookupType(%s, %q) allocates %v times", typ, key, n)
		}
	}
}

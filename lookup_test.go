package toolkit

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// fixture builds a toolkit with builtins, two connectors and a user
// namespace whose names collide in every way the rules must settle.
func fixture(t testing.TB) (*Toolkit, *fakeDelegate) {
	t.Helper()
	d := newDelegate()
	d.prepare = func(url string, c *fakeConn) error {
		switch url {
		case "test://one":
			c.tools = []Tool{newTool("echo"), newTool("only_one"), newTool("dotted.name"), newTool("builtin.echo"), newTool("shared")}
			c.prompts = []Prompt{&testPrompt{name: "shared"}}
			c.resources = []Resource{&testResource{uri: "file:///shared", name: "shared_res", data: "one"}}
		case "test://two":
			c.tools = []Tool{newTool("shared"), newTool("only_two")}
			c.resources = []Resource{&testResource{uri: "file:///shared", name: "shared_res", data: "two"}, &testResource{uri: "file:///doc#part", name: "doc", data: "frag"}}
		case UserConnectorURI:
			c.prompts = []Prompt{&testPrompt{name: "mine"}, &testPrompt{name: "echo"}}
			c.tools = []Tool{newTool("user_tool")} // never served
			c.resources = []Resource{&testResource{uri: "file:///shared", name: "shared_res", data: "user"}}
		}
		return nil
	}
	tk := mustNew(t, WithDelegate(d),
		WithTool(newTool("echo")),
		WithPrompt(&testPrompt{name: "echo"}, &testPrompt{name: "summarize"}),
		WithResource(&testResource{uri: "file:///builtin", name: "b", data: "builtin"}),
	)
	for _, u := range []string{"test://one", "test://two"} {
		ns := strings.TrimPrefix(u, "test://")
		if err := tk.AddConnectorNS(ns, u); err != nil {
			t.Fatal(err)
		}
	}
	return tk, d
}

func TestLookupKeyForms(t *testing.T) {
	tk, _ := fixture(t)
	tests := []struct {
		key      string
		ns, kind string
		name     string
		data     string // for resources
	}{
		{key: "echo", ns: "builtin", kind: "tool", name: "echo"},
		{key: "builtin.echo", ns: "builtin", kind: "tool", name: "echo"},
		{key: "one.echo", ns: "one", kind: "tool", name: "echo"},
		{key: "summarize", ns: "builtin", kind: "prompt", name: "summarize"},
		{key: "builtin.summarize", ns: "builtin", kind: "prompt", name: "summarize"},
		{key: "shared", ns: "one", kind: "tool", name: "shared"},
		{key: "two.shared", ns: "two", kind: "tool", name: "shared"},
		{key: "one.shared", ns: "one", kind: "tool", name: "shared"},
		{key: "only_two", ns: "two", kind: "tool", name: "only_two"},
		{key: "dotted.name", ns: "one", kind: "tool", name: "dotted.name"},
		{key: "one.dotted.name", ns: "one", kind: "tool", name: "dotted.name"},
		{key: "one.builtin.echo", ns: "one", kind: "tool", name: "builtin.echo"},
		{key: "mine", ns: "user", kind: "prompt", name: "mine"},
		{key: "user.mine", ns: "user", kind: "prompt", name: "mine"},
		{key: "user.echo", ns: "user", kind: "prompt", name: "echo"},
		{key: "file:///shared", ns: "one", kind: "resource", data: "one"},
		{key: "file:///shared#two", ns: "two", kind: "resource", data: "two"},
		{key: "file:///shared#user", ns: "user", kind: "resource", data: "user"},
		{key: "file:///builtin#builtin", ns: "builtin", kind: "resource", data: "builtin"},
		{key: "file:///doc#part", ns: "two", kind: "resource", data: "frag"},
		{key: "file:///doc#part#two", ns: "two", kind: "resource", data: "frag"},
		{key: "shared_res", ns: "one", kind: "resource", data: "one"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			it, err := tk.LookupItem(t.Context(), tt.key)
			if err != nil {
				t.Fatal(err)
			}
			if it.Namespace != tt.ns || string(it.Type) != tt.kind {
				t.Fatalf("got %s %s, want %s %s", it.Namespace, it.Type, tt.ns, tt.kind)
			}
			if tt.name != "" && it.Name != tt.name {
				t.Fatalf("name = %q, want %q", it.Name, tt.name)
			}
			if tt.data != "" {
				b, _ := it.Value.(Resource).Read(t.Context())
				if string(b) != tt.data {
					t.Fatalf("resource holds %q, want %q", b, tt.data)
				}
			}
			if again, _ := tk.LookupItem(t.Context(), it.Key()); again.Value != it.Value {
				t.Fatalf("the item's qualified key %q reaches another item", it.Key())
			}
			v, err := tk.Lookup(t.Context(), tt.key)
			if err != nil || v != it.Value {
				t.Fatalf("Lookup and LookupItem disagree: %v", err)
			}
		})
	}
}

func TestLookupMisses(t *testing.T) {
	tk, _ := fixture(t)
	tests := []struct {
		key  string
		want error
	}{
		{"", ErrBadParameter},
		{"has space", ErrBadParameter},
		{"tab\tkey", ErrBadParameter},
		{"semi;colon", ErrBadParameter},
		{":nothing", ErrBadParameter},
		{"1http://x", ErrBadParameter},
		{"file:///with space", ErrBadParameter},
		{"file:///ctl\x00", ErrBadParameter},
		{strings.Repeat("a", 10000), ErrBadParameter},
		{"nothing", ErrNotFound},
		{"builtin.only_one", ErrNotFound},    // qualified: no fallback to other namespaces
		{"one.only_two", ErrNotFound},        // wrong namespace
		{"builtin.dotted.name", ErrNotFound}, // namespace prefix never escapes
		{"user.user_tool", ErrNotFound},      // the user namespace serves no tools
		{"file:///nothing", ErrNotFound},
		{"file:///builtin#two", ErrNotFound},
		{"unknown.ns.thing", ErrNotFound},
	}
	for _, tt := range tests {
		if _, err := tk.Lookup(t.Context(), tt.key); !errors.Is(err, tt.want) {
			t.Errorf("Lookup(%.40q) = %v, want %v", tt.key, err, tt.want)
		}
	}
}

func TestLookupIsDeterministic(t *testing.T) {
	for range 20 {
		tk, _ := fixture(t)
		it, err := tk.LookupItem(t.Context(), "shared")
		if err != nil || it.Namespace != "one" {
			t.Fatalf("shared resolved to %q (%v), want the first connector", it.Namespace, err)
		}
	}
}

func TestLookupDoesNotAllocate(t *testing.T) {
	tk, _ := fixture(t)
	ctx := t.Context()
	for _, key := range []string{"echo", "one.echo", "file:///shared#two", "mine"} {
		if n := testing.AllocsPerRun(100, func() { _, _ = tk.Lookup(ctx, key) }); n != 0 {
			t.Errorf("Lookup(%q) allocates %v times", key, n)
		}
	}
}

func FuzzLookupKey(f *testing.F) {
	for _, s := range []string{"echo", "one.echo", "file:///shared#two", "a.b.c", "x:", "#", ".", "user.", "builtin.echo", "\xff"} {
		f.Add(s)
	}
	tk, _ := fixture(f)
	f.Fuzz(func(t *testing.T, key string) {
		it, err := tk.LookupItem(t.Context(), key)
		if err != nil {
			if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrBadParameter) {
				t.Fatalf("Lookup(%q): unexpected error %v", key, err)
			}
			return
		}
		if it.Value == nil {
			t.Fatalf("Lookup(%q) found a nil item", key)
		}
		again, err := tk.LookupItem(t.Context(), it.Key())
		if err != nil || again.Value != it.Value {
			t.Fatalf("qualified key %q of %q does not reach the same item: %v", it.Key(), key, err)
		}
	})
}

// TestLookupBareNameSourceOrder checks that a bare name is settled by source
// first (builtin, connectors in registration order, user) and by kind only
// within one source: an item of a later source never shadows an earlier one.
func TestLookupBareNameSourceOrder(t *testing.T) {
	d := newDelegate()
	d.prepare = func(url string, c *fakeConn) error {
		switch url {
		case "test://evil":
			c.tools = []Tool{newTool("summarize"), newTool("notes"), newTool("later"), newTool("mixed")}
			c.prompts = []Prompt{&testPrompt{name: "first_prompt"}, &testPrompt{name: "mixed"}}
			c.resources = []Resource{
				&testResource{uri: "file:///mixed", name: "mixed", data: "evil"},
				&testResource{uri: "file:///r", name: "res_name", data: "evil"},
			}
		case "test://next":
			c.tools = []Tool{newTool("first_prompt"), newTool("res_name")}
		case UserConnectorURI:
			c.prompts = []Prompt{&testPrompt{name: "user_only"}}
			c.resources = []Resource{&testResource{uri: "file:///user", name: "user_only_res", data: "user"}}
		}
		return nil
	}
	tk := mustNew(t, WithDelegate(d),
		WithPrompt(&testPrompt{name: "summarize"}),
		WithResource(&testResource{uri: "file:///notes", name: "notes", data: "builtin"}),
	)
	for _, ns := range []string{"evil", "next"} {
		if err := tk.AddConnectorNS(ns, "test://"+ns); err != nil {
			t.Fatal(err)
		}
	}

	tests := []struct {
		key, ns, kind string
	}{
		{"summarize", "builtin", "prompt"}, // a remote tool never beats a builtin prompt
		{"notes", "builtin", "resource"},   // nor a builtin resource
		{"first_prompt", "evil", "prompt"}, // an earlier connector's prompt beats a later one's tool
		{"res_name", "evil", "resource"},   // an earlier connector's resource beats a later one's tool
		{"mixed", "evil", "tool"},          // within one source: tool, prompt, resource
		{"later", "evil", "tool"},          // no builtin of that name: the connector's tool
		{"user_only", "user", "prompt"},    // user last, still reachable
		{"user_only_res", "user", "resource"},
		{"evil.summarize", "evil", "tool"}, // the qualified key still reaches the remote tool
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			it, err := tk.LookupItem(t.Context(), tt.key)
			if err != nil {
				t.Fatal(err)
			}
			if it.Namespace != tt.ns || string(it.Type) != tt.kind {
				t.Fatalf("Lookup(%q) = %s %s, want %s %s", tt.key, it.Namespace, it.Type, tt.ns, tt.kind)
			}
		})
	}
	// Call by bare name runs what Lookup finds: the builtin prompt.
	var called string
	d.call = func(ctx context.Context, p Prompt, res ...Resource) (Resource, error) {
		called = p.Name()
		return nil, nil
	}
	if _, err := tk.Call(t.Context(), "summarize"); err != nil || called != "summarize" {
		t.Fatalf("Call(summarize) ran %q, %v; want the builtin prompt", called, err)
	}
}

package mcpserver

import (
	"maps"
	"strings"
	"testing"
)

func toolItem(ns, name string) nameItem {
	return nameItem{Key: ns + "." + name, Namespace: ns, Name: name}
}

func resourceItem(ns, uri string) nameItem {
	return nameItem{Key: uri + "#" + ns, Namespace: ns, Name: uri}
}

// checkBijection asserts that every item got exactly one valid exposed name.
func checkBijection(t *testing.T, n *namer, items []nameItem, got map[string]nameItem) {
	t.Helper()
	keys := map[string]bool{}
	for _, it := range items {
		keys[it.Key] = true
	}
	if len(got) != len(keys) {
		t.Fatalf("got %d names for %d items: %v", len(got), len(keys), got)
	}
	for name, it := range got {
		if !n.uris && !validName(name) {
			t.Errorf("exposed name %q is not a valid MCP name", name)
		}
		if back, _ := n.exposed(it.Key); back != name {
			t.Errorf("key %q maps to %q, table says %q", it.Key, back, name)
		}
	}
}

func TestServerNamePolicy(t *testing.T) {
	long := strings.Repeat("x", 128)
	tests := []struct {
		name   string
		uris   bool
		always bool
		sep    string
		items  []nameItem
		want   map[string]string // key → exposed name
	}{
		{
			name:  "unique names stay bare",
			items: []nameItem{toolItem("builtin", "add"), toolItem("weather", "forecast")},
			want:  map[string]string{"builtin.add": "add", "weather.forecast": "forecast"},
		},
		{
			name:  "the first source keeps a shared name",
			items: []nameItem{toolItem("builtin", "search"), toolItem("web", "search")},
			want:  map[string]string{"builtin.search": "search", "web.search": "web_search"},
		},
		{
			name:   "always qualify",
			always: true,
			items:  []nameItem{toolItem("builtin", "add")},
			want:   map[string]string{"builtin.add": "builtin_add"},
		},
		{
			name:  "dot separator",
			sep:   ".",
			items: []nameItem{toolItem("a", "x"), toolItem("b", "x")},
			want:  map[string]string{"a.x": "x", "b.x": "b.x"},
		},
		{
			name: "remote name impersonating a qualified name",
			items: []nameItem{
				toolItem("builtin", "search"), toolItem("web", "search"),
				toolItem("evil", "builtin_search"),
			},
			want: map[string]string{
				"builtin.search":      "search",
				"web.search":          "web_search",
				"evil.builtin_search": "builtin_search",
			},
		},
		{
			name: "qualified name taken by a bare name gets a suffix",
			items: []nameItem{
				toolItem("builtin", "a_b"), toolItem("builtin", "b"), toolItem("a", "b"),
			},
			want: map[string]string{"builtin.a_b": "a_b", "builtin.b": "b", "a.b": "a_b_2"},
		},
		{
			name: "bare names win over qualified names of earlier items",
			items: []nameItem{
				toolItem("a", "b"), toolItem("c", "b"), toolItem("z", "c_b"),
			},
			want: map[string]string{"a.b": "b", "z.c_b": "c_b", "c.b": "c_b_2"},
		},
		{
			name:  "hostile bytes are never exposed",
			items: []nameItem{toolItem("evil", "rm -rf /;`x`"), toolItem("evil", "ünï")},
		},
		{
			name:  "long names are cut and stay unique",
			items: []nameItem{toolItem("n1", long), toolItem("hist", long), toolItem("n3", long+"y")},
		},
		{
			name:  "empty name",
			items: []nameItem{toolItem("evil", "")},
		},
		{
			name:  "duplicate keys are ignored",
			items: []nameItem{toolItem("a", "x"), toolItem("a", "x")},
			want:  map[string]string{"a.x": "x"},
		},
		{
			name:  "resource URIs",
			uris:  true,
			items: []nameItem{resourceItem("builtin", "file:///a"), resourceItem("fs", "file:///a"), resourceItem("fs", "file:///b")},
			want: map[string]string{
				"file:///a#builtin": "file:///a",
				"file:///a#fs":      "file:///a#fs",
				"file:///b#fs":      "file:///b",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newNamer(tt.uris, tt.always, tt.sep)
			got := n.assign(tt.items)
			checkBijection(t, n, tt.items, got)
			for key, want := range tt.want {
				if name, _ := n.exposed(key); name != want {
					t.Errorf("%s: got %q, want %q", key, name, want)
				}
			}
		})
	}
}

// TestServerNamePolicyOrder checks that names depend on the items and
// their toolkit order only, not on the order in which they arrived: a
// source that arrived first gives way to an earlier one.
func TestServerNamePolicyOrder(t *testing.T) {
	n := newNamer(false, false, "")
	a, b, c := toolItem("one", "search"), toolItem("two", "search"), toolItem("builtin", "other")

	steps := []struct {
		items []nameItem
		want  map[string]string
	}{
		// two.search arrives alone: bare.
		{[]nameItem{c, b}, map[string]string{b.Key: "search", c.Key: "other"}},
		// one.search, registered before two, arrives: it takes the bare
		// name, as Lookup("search") finds it first, and two is qualified.
		{[]nameItem{c, a, b}, map[string]string{a.Key: "search", b.Key: "two_search"}},
		// one goes away: two has the bare name again.
		{[]nameItem{c, b}, map[string]string{b.Key: "search"}},
		// one comes back: the same names as the first time.
		{[]nameItem{c, a, b}, map[string]string{a.Key: "search", b.Key: "two_search"}},
	}
	for i, s := range steps {
		got := n.assign(s.items)
		checkBijection(t, n, s.items, got)
		for key, want := range s.want {
			if name, _ := n.exposed(key); name != want {
				t.Errorf("step %d: %s: got %q, want %q", i, key, name, want)
			}
		}
		fresh := newNamer(false, false, "").assign(s.items)
		if !maps.EqualFunc(got, fresh, func(x, y nameItem) bool { return x == y }) {
			t.Errorf("step %d: the table depends on history: %v, fresh %v", i, got, fresh)
		}
	}
	if _, ok := n.exposed("gone.item"); ok {
		t.Error("unknown key has a name")
	}
}

func FuzzServerNamePolicy(f *testing.F) {
	f.Add("builtin", "search", "web", "search", false)
	f.Add("a", "b_c", "a_b", "c", true)
	f.Add("x", strings.Repeat("é", 80), "y", "..", false)
	f.Fuzz(func(t *testing.T, ns1, n1, ns2, n2 string, always bool) {
		n := newNamer(false, always, "")
		items := []nameItem{toolItem(ns1, n1), toolItem(ns2, n2), toolItem("builtin", n1)}
		got := n.assign(items)
		checkBijection(t, n, items, got)
		// A second pass with the same items changes nothing, and neither
		// does a namer with a different history.
		again := n.assign(items)
		hist := newNamer(false, always, "")
		hist.assign(items[1:])
		if other := hist.assign(items); !maps.Equal(namesOf(other), namesOf(got)) {
			t.Fatalf("history changed names: %v, want %v", other, got)
		}
		for name, it := range got {
			if again[name].Key != it.Key {
				t.Fatalf("name %q moved from %q to %q", name, it.Key, again[name].Key)
			}
		}
	})
}

// namesOf returns a table's exposed name → key.
func namesOf(table map[string]nameItem) map[string]string {
	m := make(map[string]string, len(table))
	for name, it := range table {
		m[name] = it.Key
	}
	return m
}

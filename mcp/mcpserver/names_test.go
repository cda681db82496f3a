package mcpserver

import (
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
			name:  "collision qualifies both",
			items: []nameItem{toolItem("builtin", "search"), toolItem("web", "search")},
			want:  map[string]string{"builtin.search": "builtin_search", "web.search": "web_search"},
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
			want:  map[string]string{"a.x": "a.x", "b.x": "b.x"},
		},
		{
			name: "remote name impersonating a qualified name",
			items: []nameItem{
				toolItem("builtin", "search"), toolItem("web", "search"),
				toolItem("evil", "builtin_search"),
			},
			want: map[string]string{
				"builtin.search":      "builtin_search",
				"web.search":          "web_search",
				"evil.builtin_search": "evil_builtin_search",
			},
		},
		{
			name: "qualified name taken by a bare name gets a suffix",
			items: []nameItem{
				toolItem("builtin", "a_b"), toolItem("a", "b"), toolItem("c", "b"),
			},
			want: map[string]string{"builtin.a_b": "a_b", "a.b": "a_b_2", "c.b": "c_b"},
		},
		{
			name:  "hostile bytes are never exposed",
			items: []nameItem{toolItem("evil", "rm -rf /;`x`"), toolItem("evil", "ünï")},
		},
		{
			name:  "long names are cut and stay unique",
			items: []nameItem{toolItem("n1", long), toolItem("n2", long), toolItem("n3", long+"y")},
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
				"file:///a#builtin": "file:///a#builtin",
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

func TestServerNamePolicyStability(t *testing.T) {
	n := newNamer(false, false, "")
	a, b, c := toolItem("one", "search"), toolItem("two", "search"), toolItem("builtin", "other")

	steps := []struct {
		items []nameItem
		want  map[string]string
	}{
		// one.search arrives alone: bare.
		{[]nameItem{a, c}, map[string]string{a.Key: "search", c.Key: "other"}},
		// two.search arrives: one keeps the bare name, two is qualified.
		{[]nameItem{a, b, c}, map[string]string{a.Key: "search", b.Key: "two_search"}},
		// one goes away: two keeps its qualified name.
		{[]nameItem{b, c}, map[string]string{b.Key: "two_search"}},
		// one comes back: it collides with two, so it is qualified now.
		{[]nameItem{a, b, c}, map[string]string{a.Key: "one_search", b.Key: "two_search"}},
	}
	for i, s := range steps {
		got := n.assign(s.items)
		checkBijection(t, n, s.items, got)
		for key, want := range s.want {
			if name, _ := n.exposed(key); name != want {
				t.Errorf("step %d: %s: got %q, want %q", i, key, name, want)
			}
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
		// A second pass with the same items changes nothing.
		again := n.assign(items)
		for name, it := range got {
			if again[name].Key != it.Key {
				t.Fatalf("name %q moved from %q to %q", name, it.Key, again[name].Key)
			}
		}
	})
}

package model

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"

	toolkit "github.com/llmkit/toolkit"
)

func hash6(id string) string {
	s := sha256.Sum256([]byte(id))
	return hex.EncodeToString(s[:])[:6]
}

func TestIsModelName(t *testing.T) {
	for s, want := range map[string]bool{
		"a": true, "_a": true, "get_weather": true, "a-b": true, "A9": true,
		strings.Repeat("a", 64): true, strings.Repeat("a", 65): false,
		"": false, "9a": false, "-a": false, "a.b": false, "a b": false, "é": false,
	} {
		if got := IsModelName(s); got != want {
			t.Errorf("IsModelName(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestNamerHostileNames(t *testing.T) {
	long := strings.Repeat("x", 128)
	items := []toolkit.Item{
		toolItem("builtin", "search"),       // bare
		toolItem("srv", "search"),           // same name as a builtin
		toolItem("srv", "get.weather"),      // dot
		toolItem("srv", "get_weather"),      // same after '.' -> '_'
		toolItem("other", "get,weather"),    // collides with the dot one after sanitizing
		toolItem("srv", "Search"),           // differs from "search" only by case
		toolItem("srv", long),               // too long
		toolItem("srv", "3d_render"),        // starts with a digit
		toolItem("srv", "a__b"),             // contains the separator
		toolItem("x__y_", "a.b"),            // namespace with the separator and trailing '_'
		promptItem("builtin", "search"),     // prompt with a tool's name
		toolItem("my-server", "list-repos"), // '-' in both
		toolItem("srv", ""),                 // empty
	}
	n := NewNamer()
	got := n.Names(items)
	want := []string{
		"search",
		"srv__search",
		"srv__get_weather_" + hash6("tool:srv.get.weather"),
		"get_weather",
		"other__get_weather_" + hash6("tool:other.get,weather"),
		"srv__Search_" + hash6("tool:srv.Search"), // srv__Search folds onto srv__search
		"srv__" + strings.Repeat("x", 64-5-7) + "_" + hash6("tool:srv."+long),
		"srv__3d_render",
		"srv__a__b",
		"x_y__a_b_" + hash6("tool:x__y_.a.b"),
		"builtin__search",
		"list-repos",
		"srv__x_" + hash6("tool:srv."),
	}
	if len(got) != len(want) {
		t.Fatalf("got %d names", len(got))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("item %d (%s): got %q, want %q", i, identity(items[i]), got[i], want[i])
		}
	}
	checkNames(t, n, items, got)
}

// checkNames asserts the invariants of a naming: model-safe, unique
// without regard to case, resolving back to the same item, and the
// namespace before the first separator.
func checkNames(t *testing.T, n *Namer, items []toolkit.Item, names []string) {
	t.Helper()
	seen := map[string]string{}
	for i, it := range items {
		name := names[i]
		if it.Type == toolkit.ListTypeResources {
			if name != "" {
				t.Errorf("resource named %q", name)
			}
			continue
		}
		if !IsModelName(name) {
			t.Errorf("%s: %q is not model-safe", identity(it), name)
		}
		id := identity(it)
		if prev, ok := seen[strings.ToLower(name)]; ok && prev != id {
			t.Errorf("%q names both %s and %s", name, prev, id)
		}
		seen[strings.ToLower(name)] = id
		for _, variant := range []string{name, strings.ToUpper(name), strings.ToLower(name)} {
			back, ok := n.Resolve(variant)
			if !ok || identity(back) != id {
				t.Errorf("Resolve(%q) = %v, %v; want %s", variant, identity(back), ok, id)
			}
		}
		if got, ok := n.Name(it); !ok || got != name {
			t.Errorf("Name(%s) = %q, %v; want %q", id, got, ok, name)
		}
		if before, _, ok := strings.Cut(name, Separator); ok {
			if ns := sanitizePart(it.Namespace, true, true); !strings.HasPrefix(ns, before) || before == "" {
				t.Errorf("%q: prefix %q is not the namespace %q", name, before, it.Namespace)
			}
		} else if it.Namespace != "" && name != it.Name && !strings.HasPrefix(name, sanitizePart(it.Name, false, true)[:min(len(sanitizePart(it.Name, false, true)), 10)]) {
			t.Errorf("%q: unqualified but not the item's name %q", name, it.Name)
		}
	}
}

func TestNamerStability(t *testing.T) {
	a := toolItem("srv1", "search")
	b := toolItem("srv2", "search")
	c := toolItem("srv3", "search")
	n := NewNamer()

	first := n.Names([]toolkit.Item{a, b})
	if first[0] != "search" || first[1] != "srv2__search" {
		t.Fatalf("first naming: %v", first)
	}
	// Reordering keeps the names.
	if got := n.Names([]toolkit.Item{b, a}); got[0] != "srv2__search" || got[1] != "search" {
		t.Fatalf("reordered: %v", got)
	}
	// a disappears: its name no longer resolves, and nobody else takes it.
	if got := n.Names([]toolkit.Item{b, c}); got[0] != "srv2__search" || got[1] != "srv3__search" {
		t.Fatalf("after removal: %v", got)
	}
	if it, ok := n.Resolve("search"); ok {
		t.Fatalf("removed item's name resolves to %s", identity(it))
	}
	if _, ok := n.Name(a); ok {
		t.Fatal("Name reports an absent item")
	}
	// a comes back (a reconnect): same name.
	if got := n.Names([]toolkit.Item{c, a, b}); got[0] != "srv3__search" || got[1] != "search" || got[2] != "srv2__search" {
		t.Fatalf("after return: %v", got)
	}
	// A fresh Namer given the same list in the same order agrees.
	if got := NewNamer().Names([]toolkit.Item{a, b}); got[0] != first[0] || got[1] != first[1] {
		t.Fatalf("fresh namer: %v", got)
	}
}

func TestNamerUnknown(t *testing.T) {
	n := NewNamer()
	n.Names([]toolkit.Item{toolItem("builtin", "get_weather"), toolItem("builtin", "get_time")})
	for _, name := range []string{"", "nope", "get.weather", strings.Repeat("a", 65)} {
		if _, ok := n.Resolve(name); ok {
			t.Errorf("Resolve(%q) succeeded", name)
		}
	}
	if got := n.suggest("GetWeather", 3); len(got) != 1 || got[0] != "get_weather" {
		t.Errorf("suggest(GetWeather) = %v", got)
	}
	if got := n.suggest("get", 3); len(got) != 2 {
		t.Errorf("suggest(get) = %v", got)
	}
}

func TestNamerConcurrent(t *testing.T) {
	n := NewNamer()
	var items []toolkit.Item
	for i := range 50 {
		items = append(items, toolItem(fmt.Sprintf("ns%d", i%5), fmt.Sprintf("t%d", i%10)))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if g%2 == 0 {
					n.Names(items[i%10:])
				} else {
					n.Resolve(fmt.Sprintf("t%d", i%10))
				}
			}
		}()
	}
	wg.Wait()
	checkNames(t, n, items, n.Names(items))
}

func FuzzNamer(f *testing.F) {
	f.Add("builtin search\nsrv search\nsrv get.weather\nsrv Search\nx__y_ a.b")
	f.Add("a b\na b\nA B\na b.")
	f.Add("ns " + strings.Repeat("z", 200))
	f.Fuzz(func(t *testing.T, spec string) {
		var items []toolkit.Item
		for _, line := range strings.Split(spec, "\n") {
			ns, name, _ := strings.Cut(line, " ")
			if len(items)%4 == 3 {
				items = append(items, promptItem(ns, name))
			} else {
				items = append(items, toolItem(ns, name))
			}
		}
		n := NewNamer()
		names := n.Names(items)
		// Duplicate identities in one list share a name.
		byID := map[string]string{}
		for i, it := range items {
			if prev, ok := byID[identity(it)]; ok && prev != names[i] {
				t.Fatalf("%s named %q and %q", identity(it), prev, names[i])
			}
			byID[identity(it)] = names[i]
		}
		checkNames(t, n, items, names)
		// Reversed order: the same names.
		rev := make([]toolkit.Item, len(items))
		for i := range items {
			rev[len(items)-1-i] = items[i]
		}
		again := n.Names(rev)
		for i := range rev {
			if again[i] != byID[identity(rev[i])] {
				t.Fatalf("%s renamed %q -> %q", identity(rev[i]), byID[identity(rev[i])], again[i])
			}
		}
	})
}

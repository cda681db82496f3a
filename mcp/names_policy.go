package mcp

import (
	"fmt"
	"hash/fnv"
	"strconv"
)

// Names exposed to MCP clients
//
// A toolkit gathers items from several sources (builtins, connectors, the
// user namespace); an MCP client sees one flat list per kind. The server
// gives every tool, prompt, resource and resource template an exposed name
// (a URI for resources, a URI template for templates) according to these
// rules, applied separately to each kind:
//
//  1. An item keeps its bare name (its URI for a resource) when no other item
//     of the same kind in the toolkit has that name, the name is a valid MCP
//     name ([A-Za-z0-9_.-], 1 to 128 bytes) and no other item holds it.
//  2. Otherwise it gets a qualified name: namespace, separator ("_" by
//     default, see WithNameSeparator), name. A qualified name that would hold
//     bytes MCP does not allow, or be longer than 128 bytes, is sanitized
//     and cut, and ends with "_" and 8 hex digits of a hash of the item's key
//     so that it stays unique. A resource's qualified URI is its URI followed
//     by "#" and the namespace, the toolkit's own key syntax; a template's
//     qualified URI template likewise ends with the literal "#namespace",
//     so the URIs it matches are the toolkit's "uri#namespace" keys.
//  3. If that name is still taken, "_2", "_3", ... ("-2", ... for URIs) is
//     appended until it is free.
//  4. Stability wins over rule 1: a name once handed out for an item keeps
//     mapping to that item for as long as the item exists. When a second
//     source later adds an item with the same bare name, the first keeps the
//     bare name and only the newcomer is qualified. When an item goes away
//     its name is freed, but the names of the items that remain do not
//     change: a qualified item is not renamed back to its bare name.
//  5. WithQualifiedNames makes rule 2 apply to every item.
//
// Every exposed name maps back to exactly one item (the toolkit key
// "namespace.name", "uri#namespace" for resources, "uriTemplate#namespace"
// for templates), and the server never parses an exposed name: it looks it
// up in the table these rules build. A URI read through a template is
// resolved by the server (Server.readTemplated), which knows each exposed
// template's suffix.

// srvMaxName is the longest tool or prompt name MCP allows.
const srvMaxName = 128

// srvNameItem is one item offered to the name policy.
type srvNameItem struct {
	Key       string // toolkit key: "ns.name" or "uri#ns"
	Namespace string
	Name      string // bare name, or URI for resources
}

// srvNamer assigns exposed names for one kind of item. It is not safe for
// concurrent use; the server serialises calls.
type srvNamer struct {
	uris   bool   // resources: qualify with "#ns" and leave URIs as they are
	always bool   // always qualify
	sep    string // separator between namespace and name
	byKey  map[string]string
	byName map[string]string
}

func newSrvNamer(uris, always bool, sep string) *srvNamer {
	if sep == "" {
		sep = "_"
	}
	return &srvNamer{uris: uris, always: always, sep: sep, byKey: map[string]string{}, byName: map[string]string{}}
}

// assign computes exposed names for items (in toolkit order) and replaces the
// namer's table. Items with the same key as an earlier item are ignored. It
// returns the new table: exposed name → item.
func (n *srvNamer) assign(items []srvNameItem) map[string]srvNameItem {
	count := make(map[string]int, len(items))
	seen := make(map[string]bool, len(items))
	uniq := items[:0:0]
	for _, it := range items {
		if seen[it.Key] {
			continue
		}
		seen[it.Key] = true
		uniq = append(uniq, it)
		count[it.Name]++
	}
	byKey := make(map[string]string, len(uniq))
	byName := make(map[string]string, len(uniq))
	out := make(map[string]srvNameItem, len(uniq))
	// Pass 1: names already handed out stay with their items.
	for _, it := range uniq {
		if name, ok := n.byKey[it.Key]; ok {
			byKey[it.Key], byName[name], out[name] = name, it.Key, it
		}
	}
	// Pass 2: newcomers, in toolkit order.
	for _, it := range uniq {
		if _, ok := byKey[it.Key]; ok {
			continue
		}
		name := ""
		if !n.always && count[it.Name] == 1 && n.valid(it.Name) {
			if _, taken := byName[it.Name]; !taken {
				name = it.Name
			}
		}
		if name == "" {
			name = n.free(n.qualify(it), byName)
		}
		byKey[it.Key], byName[name], out[name] = name, it.Key, it
	}
	n.byKey, n.byName = byKey, byName
	return out
}

// exposed returns the exposed name of the item with the given key.
func (n *srvNamer) exposed(key string) (string, bool) {
	name, ok := n.byKey[key]
	return name, ok
}

// valid reports whether s may be exposed as it is.
func (n *srvNamer) valid(s string) bool {
	if n.uris {
		return s != ""
	}
	return srvValidName(s)
}

// qualify returns the qualified name of it (before collision suffixes).
func (n *srvNamer) qualify(it srvNameItem) string {
	if n.uris {
		return it.Name + "#" + it.Namespace
	}
	q := it.Namespace + n.sep + it.Name
	if srvValidName(q) {
		return q
	}
	b := []byte(q)
	for i, c := range b {
		if !srvNameByte(c) {
			b[i] = '_'
		}
	}
	const tail = 9 // "_" + 8 hex digits
	if len(b) > srvMaxName-tail {
		b = b[:srvMaxName-tail]
	}
	h := fnv.New32a()
	h.Write([]byte(it.Key))
	return fmt.Sprintf("%s_%08x", b, h.Sum32())
}

// free returns name, or name with the first numeric suffix that is not in
// taken.
func (n *srvNamer) free(name string, taken map[string]string) string {
	if _, ok := taken[name]; !ok {
		return name
	}
	sep := "_"
	if n.uris {
		sep = "-"
	}
	for i := 2; ; i++ {
		suffix := sep + strconv.Itoa(i)
		base := name
		if !n.uris && len(base)+len(suffix) > srvMaxName {
			base = base[:srvMaxName-len(suffix)]
		}
		if _, ok := taken[base+suffix]; !ok {
			return base + suffix
		}
	}
}

// srvValidName reports whether s is a valid MCP tool name: 1 to 128 bytes of
// [A-Za-z0-9_.-].
func srvValidName(s string) bool {
	if len(s) == 0 || len(s) > srvMaxName {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !srvNameByte(s[i]) {
			return false
		}
	}
	return true
}

func srvNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

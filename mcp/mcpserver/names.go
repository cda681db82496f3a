package mcpserver

import (
	"fmt"
	"hash/fnv"
	"strconv"
)

// maxName is the longest tool or prompt name MCP allows.
const maxName = 128

// nameItem is one item offered to the name policy.
type nameItem struct {
	Key       string // toolkit key: "ns.name" or "uri#ns"
	Namespace string
	Name      string // bare name, or URI for resources
}

// namer assigns exposed names for one kind of item. Its table is a
// function of the items and their order alone (see assign). It is not safe
// for concurrent use; the server serialises calls.
type namer struct {
	uris   bool   // resources: qualify with "#ns" and leave URIs as they are
	always bool   // always qualify
	sep    string // separator between namespace and name
	byKey  map[string]string
}

func newNamer(uris, always bool, sep string) *namer {
	if sep == "" {
		sep = "_"
	}
	return &namer{uris: uris, always: always, sep: sep, byKey: map[string]string{}}
}

// assign computes exposed names for items, given in toolkit order (List's
// order: builtins, connectors in registration order, user), and replaces
// the namer's table. Items with the same key as an earlier item are
// ignored. It returns the new table: exposed name → item.
//
// The table depends on nothing but items: not on earlier tables, so not on
// the order in which sources became ready. The first item of each bare
// name keeps it (when it is a valid name), as Lookup of the bare name
// finds that item first; every other item is qualified, in toolkit order,
// around the bare names.
func (n *namer) assign(items []nameItem) map[string]nameItem {
	seen := make(map[string]bool, len(items))
	uniq := items[:0:0]
	for _, it := range items {
		if seen[it.Key] {
			continue
		}
		seen[it.Key] = true
		uniq = append(uniq, it)
	}
	byKey := make(map[string]string, len(uniq))
	byName := make(map[string]string, len(uniq))
	out := make(map[string]nameItem, len(uniq))
	// Pass 1: the first holder of each valid bare name keeps it.
	if !n.always {
		for _, it := range uniq {
			if _, taken := byName[it.Name]; taken || !n.valid(it.Name) {
				continue
			}
			byKey[it.Key], byName[it.Name], out[it.Name] = it.Name, it.Key, it
		}
	}
	// Pass 2: everything else is qualified, in toolkit order.
	for _, it := range uniq {
		if _, ok := byKey[it.Key]; ok {
			continue
		}
		name := n.free(n.qualify(it), byName)
		byKey[it.Key], byName[name], out[name] = name, it.Key, it
	}
	n.byKey = byKey
	return out
}

// exposed returns the exposed name of the item with the given key.
func (n *namer) exposed(key string) (string, bool) {
	name, ok := n.byKey[key]
	return name, ok
}

// valid reports whether s may be exposed as it is.
func (n *namer) valid(s string) bool {
	if n.uris {
		return s != ""
	}
	return validName(s)
}

// qualify returns the qualified name of it (before collision suffixes).
func (n *namer) qualify(it nameItem) string {
	if n.uris {
		return it.Name + "#" + it.Namespace
	}
	q := it.Namespace + n.sep + it.Name
	if validName(q) {
		return q
	}
	b := []byte(q)
	for i, c := range b {
		if !nameByte(c) {
			b[i] = '_'
		}
	}
	const tail = 9 // "_" + 8 hex digits
	if len(b) > maxName-tail {
		b = b[:maxName-tail]
	}
	h := fnv.New32a()
	h.Write([]byte(it.Key))
	return fmt.Sprintf("%s_%08x", b, h.Sum32())
}

// free returns name, or name with the first numeric suffix that is not in
// taken.
func (n *namer) free(name string, taken map[string]string) string {
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
		if !n.uris && len(base)+len(suffix) > maxName {
			base = base[:maxName-len(suffix)]
		}
		if _, ok := taken[base+suffix]; !ok {
			return base + suffix
		}
	}
}

// validName reports whether s is a valid MCP tool name: 1 to 128 bytes of
// [A-Za-z0-9_.-].
func validName(s string) bool {
	if len(s) == 0 || len(s) > maxName {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			return false
		}
	}
	return true
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

package openapi

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// maxName is the longest tool name: what models accept
// (^[a-zA-Z0-9_-]{1,64}$).
const maxName = 64

// ToolName returns the tool name of an operation: its operationId, else
// its method and path ("get_pets_petId"), with every character other than
// a letter, a digit, '_' or '-' replaced by '_', runs of '_' folded, and
// cut to 64 characters with a hash of the whole when longer. It depends on
// nothing but its arguments, so a tool keeps its name as long as the
// operation keeps its operationId (or its method and path).
func ToolName(operationID, method, path string) string {
	raw := operationID
	if raw == "" {
		raw = strings.ToLower(method) + "_" + path
	}
	var b strings.Builder
	under := false
	for _, r := range raw {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-'
		if !ok {
			if !under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = true
			continue
		}
		b.WriteRune(r)
		under = false
	}
	name := strings.TrimRight(b.String(), "_")
	if name == "" {
		name = "op"
	}
	if name[0] >= '0' && name[0] <= '9' || name[0] == '-' {
		name = "op_" + name
	}
	if len(name) > maxName || name != raw && len(raw) > maxName {
		h := hashOf(raw)
		name = strings.TrimRight(name[:min(len(name), maxName-len(h)-1)], "_") + "_" + h
	}
	return name
}

// hashOf returns 8 hex digits of the SHA-256 of s.
func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// namer gives each operation of a document a distinct tool name.
type namer struct {
	count map[string]int // operations per ToolName
	exact map[string]int // operations whose operationId is their ToolName
	used  map[string]bool
}

func newNamer() *namer {
	return &namer{count: map[string]int{}, exact: map[string]int{}, used: map[string]bool{}}
}

// reserve counts the operation's name; every operation is reserved
// before any is named.
func (n *namer) reserve(o operation) {
	name := ToolName(o.op.OperationID, o.method, o.path)
	n.count[name]++
	if name == o.op.OperationID {
		n.exact[name]++
	}
}

// name returns the operation's tool name: its ToolName when no other
// operation has it, or when it is the one operation whose operationId it
// is exactly; else that name with a hash of the method and path, which
// does not depend on the other operations either.
func (n *namer) name(o operation) string {
	name := ToolName(o.op.OperationID, o.method, o.path)
	if n.count[name] == 1 || name == o.op.OperationID && n.exact[name] == 1 {
		n.used[name] = true
		return name
	}
	suffix := hashOf(o.method + " " + o.path)
	base := name[:min(len(name), maxName-len(suffix)-1)]
	out := base + "_" + suffix
	for i := 2; n.used[out]; i++ { // the same method and path twice: not in a parsed document
		out = base[:min(len(base), maxName-len(suffix)-4)] + "_" + suffix + strconv.Itoa(i)
	}
	n.used[out] = true
	return out
}

// quote quotes s for a message, cut to a readable length.
func quote(s string) string { return strconv.Quote(trim(s, maxTitle)) }

package model

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"sync"

	toolkit "github.com/llmkit/toolkit"
)

// MaxNameLen is the longest model-safe name.
const MaxNameLen = 64

// Separator joins a namespace and a name in a qualified model name
// ("github__create_issue"). It is two underscores so that it cannot be read
// as part of a namespace with a '-' ("my-server") or a name with a single
// '_' ("create_issue"). The Namer never gives an item a bare name that
// contains it, and never uses a namespace containing it (or ending in '_')
// in a qualified name, so the text before the first Separator in a model
// name is always its item's namespace (sanitized and possibly shortened for
// hashed names), and a model name without it is its item's own name
// (possibly sanitized and hashed).
const Separator = "__"

// hashLen is the number of hex digits of the suffix of hashed names.
const hashLen = 6

// IsModelName reports whether s is a model-safe name: 1 to MaxNameLen bytes
// of [A-Za-z0-9_-], starting with a letter or '_'. That is the OpenAI rule
// (^[a-zA-Z0-9_-]{1,64}$) narrowed by Gemini's "starts with a letter or an
// underscore", so the same name works with every provider.
func IsModelName(s string) bool {
	if len(s) == 0 || len(s) > MaxNameLen {
		return false
	}
	if c := s[0]; !isLetter(c) && c != '_' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool   { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isNameByte(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' || c == '-' }

// Namer gives every tool and prompt of a toolkit a model-safe name and maps
// model names back to items. It is safe for concurrent use.
//
// Rules, for an item with namespace ns and name n, in order:
//
//  1. n itself, when it is a model-safe name (IsModelName), contains no
//     Separator, and is free;
//  2. ns + Separator + n ("github__search"), when that is model-safe, ns
//     contains no Separator and does not end in '_', and it is free;
//  3. a hashed name: sanitize(ns) + Separator + sanitize(n), each byte
//     outside [A-Za-z0-9_-] replaced by '_', shortened to fit, then '_' and
//     the first 6 hex digits of the SHA-256 of the item's identity
//     ("tool:ns.n" or "prompt:ns.n"); should even that be taken, the hash of
//     the identity followed by "#1", "#2", ... is used instead.
//
// "Free" is decided without regard to case: two model names never differ
// only by case, and Resolve accepts any casing of a name.
//
// Stability: a name depends only on the item's own kind, namespace and name
// and on the names already given out. Once an item has a name in a Namer it
// keeps it for the Namer's lifetime, through list changes and reconnects;
// while it is absent from the latest Names call its name resolves to
// nothing, and no other item ever receives it, so a model that repeats an
// old name reaches the old item or gets "unknown tool", never another item.
// The cost is that a Namer remembers every identity it has ever named.
// Among items new to a Namer, earlier items in the slice given to Names win
// the shorter names; toolkit.List orders builtins first, so a builtin keeps
// its bare name when a remote item of the same name arrives with it.
type Namer struct {
	mu       sync.RWMutex
	assigned map[string]string       // identity -> model name
	owner    map[string]string       // lower-cased model name -> identity
	current  map[string]toolkit.Item // identity -> item, from the latest Names call
}

// NewNamer returns an empty Namer.
func NewNamer() *Namer {
	return &Namer{
		assigned: make(map[string]string),
		owner:    make(map[string]string),
		current:  make(map[string]toolkit.Item),
	}
}

// identity is the stable identity of a tool or prompt.
func identity(it toolkit.Item) string {
	kind := string(it.Type)
	if kind == "" {
		kind = string(toolkit.ListTypeTools)
	}
	return kind + ":" + it.Namespace + "." + it.Name
}

// Names names items, which must be the complete current set of tools and
// prompts: items absent from it no longer resolve. It returns the model
// names in the order of items; resources get "".
func (n *Namer) Names(items []toolkit.Item) []string {
	out := make([]string, len(items))
	current := make(map[string]toolkit.Item, len(items))
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, it := range items {
		if it.Type == toolkit.ListTypeResources {
			continue
		}
		id := identity(it)
		name, ok := n.assigned[id]
		if !ok {
			name = n.pick(it, id)
			n.assigned[id] = name
			n.owner[strings.ToLower(name)] = id
		}
		current[id] = it
		out[i] = name
	}
	n.current = current
	return out
}

// pick chooses a free name for a new identity. n.mu is held.
func (n *Namer) pick(it toolkit.Item, id string) string {
	free := func(s string) bool { _, taken := n.owner[strings.ToLower(s)]; return !taken }
	if IsModelName(it.Name) && !strings.Contains(it.Name, Separator) && free(it.Name) {
		return it.Name
	}
	if it.Namespace != "" && it.Name != "" && !strings.Contains(it.Namespace, Separator) && !strings.HasSuffix(it.Namespace, "_") {
		if q := it.Namespace + Separator + it.Name; IsModelName(q) && free(q) {
			return q
		}
	}
	base := hashedBase(it.Namespace, it.Name)
	for i := 0; ; i++ {
		seed := id
		if i > 0 {
			seed += "#" + strconv.Itoa(i)
		}
		sum := sha256.Sum256([]byte(seed))
		if s := base + "_" + hex.EncodeToString(sum[:])[:hashLen]; free(s) {
			return s
		}
	}
}

// maxNSPart bounds the namespace part of a hashed name.
const maxNSPart = 24

// hashedBase returns the readable part of a hashed name, short enough that
// '_' and the hash suffix still fit in MaxNameLen.
func hashedBase(ns, name string) string {
	room := MaxNameLen - 1 - hashLen
	var b strings.Builder
	if ns != "" {
		p := sanitizePart(ns, true, true)
		if len(p) > maxNSPart {
			p = strings.TrimRight(p[:maxNSPart], "_")
		}
		b.WriteString(p)
		b.WriteString(Separator)
	}
	// Without a namespace the name part must not look qualified either.
	p := sanitizePart(name, ns == "", ns == "")
	if b.Len()+len(p) > room {
		p = p[:room-b.Len()]
	}
	if ns == "" {
		if p = strings.TrimRight(p, "_"); p == "" {
			p = "x"
		}
	}
	b.WriteString(p)
	return b.String()
}

// sanitizePart maps s onto [A-Za-z0-9_-]. A namespace part (ns) also has
// its '_' runs collapsed and trailing '_' trimmed, so it contains no
// Separator and the Separator that follows it is the first in the name. A
// part that starts the name (first) is made to start with a letter or '_'.
func sanitizePart(s string, ns, first bool) string {
	b := make([]byte, 0, len(s)+1)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isNameByte(c) {
			c = '_'
		}
		if ns && c == '_' && len(b) > 0 && b[len(b)-1] == '_' {
			continue
		}
		b = append(b, c)
	}
	if ns {
		for len(b) > 0 && b[len(b)-1] == '_' {
			b = b[:len(b)-1]
		}
	}
	if len(b) == 0 {
		return "x"
	}
	if c := b[0]; first && !isLetter(c) && c != '_' {
		b = append([]byte{'x'}, b...)
	}
	return string(b)
}

// Name returns the model name of an item present in the latest Names call.
func (n *Namer) Name(it toolkit.Item) (string, bool) {
	id := identity(it)
	n.mu.RLock()
	defer n.mu.RUnlock()
	if _, ok := n.current[id]; !ok {
		return "", false
	}
	name, ok := n.assigned[id]
	return name, ok
}

// Resolve returns the item a model name stands for, if that item was
// present in the latest Names call. Any casing of the name is accepted.
func (n *Namer) Resolve(name string) (toolkit.Item, bool) {
	if len(name) == 0 || len(name) > MaxNameLen {
		return toolkit.Item{}, false
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	id, ok := n.owner[strings.ToLower(name)]
	if !ok {
		return toolkit.Item{}, false
	}
	it, ok := n.current[id]
	return it, ok
}

// suggest returns up to max current model names that look like name: equal
// once case, '-', '_' and '.' are ignored, or containing it (or contained in
// it). The result is sorted and never large.
func (n *Namer) suggest(name string, max int) []string {
	want := squash(name)
	if want == "" {
		return nil
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	var exact, near []string
	for id := range n.current {
		m := n.assigned[id]
		got := squash(m)
		switch {
		case got == want:
			exact = append(exact, m)
		case len(want) >= 3 && (strings.Contains(got, want) || strings.Contains(want, got)):
			near = append(near, m)
		}
	}
	slices.Sort(exact)
	slices.Sort(near)
	out := append(exact, near...)
	if len(out) > max {
		out = out[:max]
	}
	return out
}

// squash lower-cases s and drops '-', '_' and '.'.
func squash(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' || c == '_' || c == '.':
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

package model

import (
	"path"
	"slices"
	"strings"

	toolkit "github.com/llmkit/toolkit"
)

// Filter selects toolkit items to hand to a model. The zero Filter keeps
// every tool and no prompt.
type Filter struct {
	// Namespaces keeps only items from these namespaces ("builtin", "user"
	// or a connector's). Empty keeps all.
	Namespaces []string
	// Names keeps only items matching one of these path.Match patterns. A
	// pattern that contains a '.' is matched against the item's qualified
	// key "namespace.name" ("github.*"), any other against its name
	// ("search_*"). Empty keeps all. A malformed pattern matches nothing.
	Names []string
	// Exclude drops items matching one of these patterns (same matching as
	// Names).
	Exclude []string
	// ReadOnly keeps only tools that declare ReadOnlyHint.
	ReadOnly bool
	// NonDestructive drops tools that may be destructive. As in MCP, a tool
	// that is not read-only counts as destructive unless it sets
	// DestructiveHint to false.
	NonDestructive bool
	// Prompts also selects prompts, offered to the model as callable tools
	// whose arguments are the prompt's input. ReadOnly and NonDestructive
	// do not apply to prompts.
	Prompts bool
}

// Match reports whether the filter keeps it. It never keeps a tool
// reserved for an MCP App's view ([AppOnly]).
func (f Filter) Match(it toolkit.Item) bool {
	switch it.Type {
	case toolkit.ListTypeTools, "":
	case toolkit.ListTypePrompts:
		if !f.Prompts {
			return false
		}
	default:
		return false
	}
	if AppOnly(it) {
		return false
	}
	if len(f.Namespaces) > 0 && !slices.Contains(f.Namespaces, it.Namespace) {
		return false
	}
	if len(f.Names) > 0 && !matchAny(f.Names, it) {
		return false
	}
	if len(f.Exclude) > 0 && matchAny(f.Exclude, it) {
		return false
	}
	if f.ReadOnly || f.NonDestructive {
		t, ok := it.Value.(toolkit.Tool)
		if !ok {
			return it.Type == toolkit.ListTypePrompts
		}
		m := t.Meta()
		if f.ReadOnly && !m.ReadOnlyHint {
			return false
		}
		if f.NonDestructive && !m.ReadOnlyHint && (m.DestructiveHint == nil || *m.DestructiveHint) {
			return false
		}
	}
	return true
}

func matchAny(patterns []string, it toolkit.Item) bool {
	for _, p := range patterns {
		subject := it.Name
		if strings.IndexByte(p, '.') >= 0 {
			subject = it.Namespace + "." + it.Name
		}
		if ok, _ := path.Match(p, subject); ok {
			return true
		}
	}
	return false
}

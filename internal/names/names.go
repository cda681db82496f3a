// Package names holds the naming rules of the toolkit in one place: the
// identifier rule for builtin tools and prompts, the namespace rule, the
// rule for names that arrive from remote servers, and the reserved words.
package names

import (
	"fmt"

	"github.com/llmkit/toolkit/internal/errs"
)

// Limits on name lengths.
const (
	MaxName       = 64  // builtin tool, prompt and resource names, and namespaces
	MaxRemoteName = 128 // names that arrive from remote MCP servers
)

// Reserved namespaces and names.
const (
	BuiltinNamespace = "builtin"
	UserNamespace    = "user"
	OutputToolName   = "submit_output"
)

// ReservedNamespaces lists the namespaces no connector may take.
var ReservedNamespaces = []string{BuiltinNamespace, UserNamespace}

// ReservedNames lists the names no ordinary builtin may take.
var ReservedNames = []string{OutputToolName}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// IsIdent reports whether s is a valid builtin name: letters, digits and
// underscores, not starting with a digit, 1 to MaxName bytes.
func IsIdent(s string) bool {
	if len(s) == 0 || len(s) > MaxName || isDigit(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !isDigit(c) && c != '_' {
			return false
		}
	}
	return true
}

// IsNamespace reports whether s is a valid namespace: like IsIdent, but '-'
// is also allowed (never first). A namespace never contains '.'.
func IsNamespace(s string) bool {
	if len(s) == 0 || len(s) > MaxName || isDigit(s[0]) || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !isDigit(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// IsRemoteName reports whether s is acceptable as the name of an item served
// by a remote source: 1 to MaxRemoteName bytes of [A-Za-z0-9_.-].
func IsRemoteName(s string) bool {
	if len(s) == 0 || len(s) > MaxRemoteName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !isDigit(c) && c != '_' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// IsReservedName reports whether s is a reserved item name.
func IsReservedName(s string) bool { return s == OutputToolName }

// IsReservedNamespace reports whether s is a reserved namespace.
func IsReservedNamespace(s string) bool { return s == BuiltinNamespace || s == UserNamespace }

// CheckIdent returns an error wrapping errs.ErrBadParameter that names the
// kind and value when s is not a valid builtin name.
func CheckIdent(kind, s string) error {
	if !IsIdent(s) {
		return fmt.Errorf("%w: %s name %q: want letters, digits and underscores, not starting with a digit, at most %d characters", errs.ErrBadParameter, kind, s, MaxName)
	}
	return nil
}

// CheckNamespace returns an error wrapping errs.ErrBadParameter when s is not
// a valid namespace or is reserved.
func CheckNamespace(s string) error {
	if !IsNamespace(s) {
		return fmt.Errorf("%w: namespace %q: want letters, digits, '_' and '-', not starting with a digit or '-', at most %d characters", errs.ErrBadParameter, s, MaxName)
	}
	if IsReservedNamespace(s) {
		return fmt.Errorf("%w: namespace %q is reserved", errs.ErrBadParameter, s)
	}
	return nil
}

// Sanitize turns any string into a valid identifier (for example a remote
// name used to name a generated resource): invalid bytes become '_', a
// leading digit gets a '_' prefix, an empty result becomes "_", and the
// result is cut to MaxName bytes.
func Sanitize(s string) string {
	if IsIdent(s) {
		return s
	}
	b := make([]byte, 0, len(s)+1)
	for i := 0; i < len(s) && len(b) < MaxName; i++ {
		c := s[i]
		if !isLetter(c) && !isDigit(c) && c != '_' {
			c = '_'
		}
		if len(b) == 0 && isDigit(c) {
			b = append(b, '_')
		}
		b = append(b, c)
	}
	if len(b) == 0 {
		return "_"
	}
	if len(b) > MaxName {
		b = b[:MaxName]
	}
	return string(b)
}

// IsScheme reports whether s is a URI scheme (RFC 3986): a letter followed
// by letters, digits, '+', '-' or '.'.
func IsScheme(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

package openapi

import (
	"path"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// Selection matches operations by tag, path or operationId. An operation
// matches when any entry of any field matches it; the empty Selection
// matches none.
//
// Patterns use path.Match syntax ("*", "?", "[a-z]"); in Paths a "*"
// stops at a "/", so "/repos/*" matches "/repos/{owner}" only, while
// "/repos/**" also matches every path below it.
type Selection struct {
	// Tags are tag names, exactly.
	Tags []string `yaml:"tags" json:"tags,omitempty"`
	// Paths are patterns of path templates as the document writes them
	// ("/pets/{petId}").
	Paths []string `yaml:"paths" json:"paths,omitempty"`
	// Operations are patterns of operationIds.
	Operations []string `yaml:"operations" json:"operations,omitempty"`
}

// IsZero reports whether s has no entry.
func (s Selection) IsZero() bool {
	return len(s.Tags) == 0 && len(s.Paths) == 0 && len(s.Operations) == 0
}

// Check returns an error naming the first malformed pattern of s.
func (s Selection) Check() error {
	for _, list := range [][]string{s.Paths, s.Operations} {
		for _, p := range list {
			if _, err := path.Match(p, ""); err != nil {
				return &patternError{pattern: p, err: err}
			}
		}
	}
	return nil
}

// patternError names a malformed pattern.
type patternError struct {
	pattern string
	err     error
}

func (e *patternError) Error() string { return "pattern " + quote(e.pattern) + ": " + e.err.Error() }
func (e *patternError) Unwrap() error { return e.err }

// matches reports whether s matches the operation.
func (s Selection) matches(p string, op *openapi3.Operation) bool {
	for _, t := range s.Tags {
		if slices.Contains(op.Tags, t) {
			return true
		}
	}
	for _, pat := range s.Paths {
		if matchPath(pat, p) {
			return true
		}
	}
	if op.OperationID != "" {
		for _, pat := range s.Operations {
			if ok, _ := path.Match(pat, op.OperationID); ok {
				return true
			}
		}
	}
	return false
}

// matchPath matches a path template against a pattern, where a trailing
// "/**" matches the prefix and everything below it.
func matchPath(pat, p string) bool {
	if len(pat) >= 3 && pat[len(pat)-3:] == "/**" {
		prefix := pat[:len(pat)-3]
		if ok, _ := path.Match(prefix, p); ok {
			return true
		}
		for i := len(p) - 1; i > 0; i-- {
			if p[i] == '/' {
				if ok, _ := path.Match(prefix, p[:i]); ok {
					return true
				}
			}
		}
		return false
	}
	ok, _ := path.Match(pat, p)
	return ok
}

// selected returns the document's operations that Include and Exclude
// keep.
func (c *Connector) selected(doc *openapi3.T) []operation {
	all := operations(doc)
	out := all[:0]
	for _, o := range all {
		if !c.cfg.Include.IsZero() && !c.cfg.Include.matches(o.path, o.op) {
			continue
		}
		if c.cfg.Exclude.matches(o.path, o.op) {
			continue
		}
		out = append(out, o)
	}
	return out
}

package main

import (
	"fmt"
	"path"
	"strings"
)

// maxSearchLimit bounds tool_search.limit (mcpserver.MaxSearchLimit).
const maxSearchLimit = 50

// checkToolSearch checks tool_search: glob patterns that compile, a limit
// in range.
func (v *validator) checkToolSearch(ts *ToolSearch) {
	if ts == nil {
		return
	}
	for i, p := range ts.Always {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			v.fail(fmt.Sprintf("%q is not a glob pattern", p), "tool_search", "always", i)
		}
	}
	if ts.Limit < 0 || ts.Limit > maxSearchLimit {
		v.fail(fmt.Sprintf("%d is out of range: use 1 to %d (or leave it out for 10)", ts.Limit, maxSearchLimit), "tool_search", "limit")
	}
}

// String describes ts for comparing two configurations ("" when nil).
func (ts *ToolSearch) String() string {
	if ts == nil {
		return ""
	}
	return fmt.Sprintf("always=%s limit=%d", strings.Join(ts.Always, ","), ts.Limit)
}

package main

import (
	"context"
	"encoding/json"
	"path"
	"slices"
	"time"

	"github.com/llmkit/toolkit"
)

// filtered wraps an upstream connector: only the tools its filter keeps are
// served, and each call gets a time limit. Everything else (Run, prompts,
// resources) goes to the wrapped connector unchanged.
type filtered struct {
	toolkit.Connector
	filter  ToolFilter
	timeout time.Duration // per call; 0 for none
}

// ListTools returns the upstream's tools that the filter keeps.
func (f *filtered) ListTools(ctx context.Context) ([]toolkit.Tool, error) {
	tools, err := f.Connector.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]toolkit.Tool, 0, len(tools))
	for _, t := range tools {
		if !f.filter.keeps(t.Name()) {
			continue
		}
		if f.timeout > 0 {
			t = timedTool{Tool: t, timeout: f.timeout}
		}
		out = append(out, t)
	}
	return out, nil
}

// keeps reports whether the tool called name is served.
func (f ToolFilter) keeps(name string) bool {
	match := func(p string) bool { ok, _ := path.Match(p, name); return ok }
	if len(f.Allow) > 0 && !slices.ContainsFunc(f.Allow, match) {
		return false
	}
	return !slices.ContainsFunc(f.Deny, match)
}

// timedTool is a tool whose every run is limited to timeout. It is a
// comparable value, so the toolkit sees the same tool listed twice as
// unchanged.
type timedTool struct {
	toolkit.Tool
	timeout time.Duration
}

// Run runs the tool with the time limit.
func (t timedTool) Run(ctx context.Context, input json.RawMessage) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	return t.Tool.Run(ctx, input)
}

package main

import (
	"embed"
	"fmt"
	"io/fs"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/prompt"
)

// promptFiles holds the demo's builtin prompts: markdown files whose YAML
// front matter names the prompt, its input schema and the tools it may use,
// and whose body is a Go template rendered from the input. The gateway's
// sample configuration serves the same directory as its "user" namespace.
//
//go:embed prompts/*.md
var promptFiles embed.FS

// builtinPrompts reads every embedded prompt file.
func builtinPrompts() ([]toolkit.Prompt, error) {
	paths, err := fs.Glob(promptFiles, "prompts/*.md")
	if err != nil {
		return nil, err
	}
	out := make([]toolkit.Prompt, 0, len(paths))
	for _, p := range paths {
		agent, err := prompt.ReadFS(promptFiles, p)
		if err != nil {
			return nil, fmt.Errorf("embedded prompt %s: %w", p, err)
		}
		out = append(out, agent)
	}
	return out, nil
}

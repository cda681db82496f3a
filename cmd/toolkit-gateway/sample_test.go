package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/prompt"
)

// TestSamplePromptTools checks that the allowed tools of every sample
// prompt resolve behind the sample gateway: the servers of gateway.yaml
// (each the example program's server mode, here the built binary, under
// its namespace and tool filter). A prompt whose tools do not resolve
// cannot run on a model.
func TestSamplePromptTools(t *testing.T) {
	cfg, err := loadConfig("gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(cfg.Prompts, "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the sample gateway serves no prompts from %s: %v", cfg.Prompts, err)
	}
	var prompts []*prompt.Agent
	for _, f := range files {
		p, err := prompt.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		prompts = append(prompts, p)
	}

	bin := exampleProgram(t)
	filters := map[string]ToolFilter{}
	d := &delegate{logger: testLogger(t), wrap: func(url string, c toolkit.Connector) toolkit.Connector {
		return &filtered{Connector: c, filter: filters[url]}
	}}
	gw, err := toolkit.New(toolkit.WithDelegate(d))
	if err != nil {
		t.Fatal(err)
	}
	var namespaces []string
	for _, s := range cfg.Servers {
		if len(s.Command) == 0 || s.Command[len(s.Command)-1] != "mcp-server" {
			t.Fatalf("servers %q: not the example's server mode; update this test", s.Name)
		}
		url := (&mcp.StdioCommand{Path: bin, Args: []string{"mcp-server"}}).String()
		filters[url] = s.Tools
		if err := gw.AddConnectorNS(s.Name, url); err != nil {
			t.Fatal(err)
		}
		namespaces = append(namespaces, s.Name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- gw.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if _, err := gw.WaitConnectors(ctx, namespaces...); err != nil {
		t.Fatal(err)
	}

	for _, p := range prompts {
		items, err := gw.PromptTools(ctx, p)
		if err != nil {
			t.Errorf("%s: %v", p.Name(), err)
			continue
		}
		var keys []string
		for _, it := range items {
			keys = append(keys, it.Key())
		}
		if len(items) != len(p.Tools()) {
			t.Errorf("%s: tools %v resolve to %v", p.Name(), p.Tools(), keys)
		}
		if p.Name() == "launch_check" && !slices.Equal(keys, []string{"example.countdown", "example.whoami"}) {
			t.Errorf("launch_check behind the sample gateway uses %s", strings.Join(keys, ", "))
		}
	}
}

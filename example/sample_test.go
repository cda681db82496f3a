package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/prompt"
)

// TestSamplePromptTools checks that the allowed tools of every sample
// prompt resolve where the prompts are served: in the demo (builtins and
// the server mode as "remote") and behind the sample gateway (the servers
// of gateway.yaml, each this program's server mode under its namespace and
// tool filter). A prompt whose tools do not resolve cannot run on a model.
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

	// Behind the sample gateway.
	filters := map[string]ToolFilter{}
	var endpoints, namespaces []string
	for _, s := range cfg.Servers {
		if len(s.Command) == 0 || s.Command[len(s.Command)-1] != serverSubcommand {
			t.Fatalf("servers %q: not this program's server mode; update this test", s.Name)
		}
		url := "http://sample.invalid/" + s.Name
		filters[url] = s.Tools
		endpoints, namespaces = append(endpoints, url), append(namespaces, s.Name)
	}
	d := &delegate{logger: testLogger(t), wrap: func(url string, c toolkit.Connector) toolkit.Connector {
		return &filtered{Connector: c, filter: filters[url]}
	}}
	gw, err := toolkit.New(toolkit.WithDelegate(connectorDelegate{d, &fakeConnector{tools: serverTools()}}))
	if err != nil {
		t.Fatal(err)
	}
	for i := range endpoints {
		if err := gw.AddConnectorNS(namespaces[i], endpoints[i]); err != nil {
			t.Fatal(err)
		}
	}

	// In the demo.
	demo, err := toolkit.New(toolkit.WithTool(builtinTools()...),
		toolkit.WithDelegate(connectorDelegate{&delegate{logger: testLogger(t), wrap: func(_ string, c toolkit.Connector) toolkit.Connector { return c }},
			&fakeConnector{tools: serverTools()}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.AddConnectorNS(remoteNamespace, "http://demo.invalid/"); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	for _, where := range []struct {
		name string
		tk   *toolkit.Toolkit
	}{{"the sample gateway", gw}, {"the demo", demo}} {
		for _, p := range prompts {
			items, err := where.tk.PromptTools(ctx, p)
			if err != nil {
				t.Errorf("%s in %s: %v", p.Name(), where.name, err)
				continue
			}
			var keys []string
			for _, it := range items {
				keys = append(keys, it.Key())
			}
			if len(items) != len(p.Tools()) {
				t.Errorf("%s in %s: tools %v resolve to %v", p.Name(), where.name, p.Tools(), keys)
			}
			if p.Name() == "launch_check" && where.tk == gw && !slices.Equal(keys, []string{"example.countdown", "example.whoami"}) {
				t.Errorf("launch_check behind the sample gateway uses %s", strings.Join(keys, ", "))
			}
		}
	}
}

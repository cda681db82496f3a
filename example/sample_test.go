package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/prompt"
)

// fakeConnector serves a fixed list of tools.
type fakeConnector struct{ tools []toolkit.Tool }

func (f *fakeConnector) Run(ctx context.Context) error { <-ctx.Done(); return nil }
func (f *fakeConnector) ListTools(context.Context) ([]toolkit.Tool, error) {
	return f.tools, nil
}
func (f *fakeConnector) ListPrompts(context.Context) ([]toolkit.Prompt, error)     { return nil, nil }
func (f *fakeConnector) ListResources(context.Context) ([]toolkit.Resource, error) { return nil, nil }

// connectorDelegate is d with CreateConnector returning a fixed connector.
type connectorDelegate struct {
	*delegate
	c toolkit.Connector
}

func (cd connectorDelegate) CreateConnector(url string, _ func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	if url == toolkit.UserConnectorURI {
		return nil, toolkit.ErrNotImplemented
	}
	return cd.c, nil
}

// TestSamplePromptTools checks that the allowed tools of every sample
// prompt resolve in the demo (builtins, and the server mode as "remote").
// A prompt whose tools do not resolve cannot run on a model. The gateway's
// tests check the same behind its sample configuration.
func TestSamplePromptTools(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("prompts", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sample prompts: %v", err)
	}
	var prompts []*prompt.Agent
	for _, f := range files {
		p, err := prompt.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		prompts = append(prompts, p)
	}
	demo, err := toolkit.New(toolkit.WithTool(builtinTools()...),
		toolkit.WithDelegate(connectorDelegate{&delegate{logger: testLogger(t)}, &fakeConnector{tools: serverTools()}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.AddConnectorNS(remoteNamespace, "http://demo.invalid/"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, p := range prompts {
		items, err := demo.PromptTools(ctx, p)
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
	}
}

package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/store"
)

// clientName identifies the program to the MCP servers it connects to.
const clientName = "toolkit-example"

// delegate connects a toolkit to the program: it creates the MCP
// connectors the toolkit asks for, serves the "user" namespace from a
// directory, runs prompts on a model when one is configured, and reports
// what happens through its hooks.
type delegate struct {
	// logger receives the connectors' and the store's diagnostics.
	logger *slog.Logger
	// userDir is the directory served as the "user" namespace; "" for none.
	userDir string
	// model runs prompts; nil means prompts are not run.
	model *openAI

	// onEvent, if set, receives the list-change and resource-update events
	// the toolkit forwards to OnEvent.
	onEvent func(toolkit.ConnectorEvent)

	// tk is the toolkit the delegate serves (its prompts run on it). Set
	// it right after toolkit.New.
	tk *toolkit.Toolkit
}

var _ toolkit.ToolkitDelegate = (*delegate)(nil)

// OnEvent receives the toolkit's list-change and resource-update events,
// in order. It may call back into the toolkit.
func (d *delegate) OnEvent(ev toolkit.ConnectorEvent) {
	if d.onEvent != nil {
		d.onEvent(ev)
	}
}

// Call runs a prompt on the configured model. Without one it reports
// toolkit.ErrNotImplemented: the demo then shows the rendered prompt.
func (d *delegate) Call(ctx context.Context, p toolkit.Prompt, resources ...toolkit.Resource) (toolkit.Resource, error) {
	if d.model == nil {
		return nil, fmt.Errorf("%w: prompt %q: no model endpoint configured (set %s, or %s for api.openai.com)",
			toolkit.ErrNotImplemented, p.Name(), envBaseURL, envAPIKey)
	}
	return d.model.Run(ctx, d.tk, p, resources...)
}

// CreateConnector makes the connector for url: a directory store for the
// "user" namespace, an MCP connector for anything else. Each connector
// reports its state changes and list changes through onEvent (the demo
// hears of the state changes through toolkit.Subscribe).
func (d *delegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	if url == toolkit.UserConnectorURI {
		if d.userDir == "" {
			return nil, fmt.Errorf("%w: no user directory", toolkit.ErrNotImplemented)
		}
		return store.Open(d.userDir, onEvent, store.WithLogger(d.logger))
	}

	// mcp.Delegate makes MCP connectors wired to report their events.
	md, err := mcp.NewDelegate(clientName, version, mcp.OptLogger(d.logger))
	if err != nil {
		return nil, err
	}
	return md.CreateConnector(url, onEvent)
}

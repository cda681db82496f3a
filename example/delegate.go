package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"

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

	// onState, if set, is called with every connector state change as it
	// happens. The toolkit keeps state changes to itself, so this is the
	// place to see them.
	onState func(namespace string, st toolkit.ConnectorState)
	// onEvent, if set, receives the list-change and resource-update events
	// the toolkit forwards to OnEvent.
	onEvent func(toolkit.ConnectorEvent)

	// tk is the toolkit the delegate serves. Set it right after
	// toolkit.New: connectors report nothing before the toolkit runs.
	tk *toolkit.Toolkit

	mu         sync.Mutex
	namespaces map[string]string // connector URL → namespace, once known
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
// reports its state changes and list changes through onEvent; the delegate
// taps the state changes on their way to the toolkit.
func (d *delegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	// The toolkit hears of an event first: when it has handled a "ready"
	// state, the server's items are already in List and Lookup, so a hook
	// that waits for "ready" sees them.
	report := func(ev toolkit.ConnectorEvent) {
		onEvent(ev)
		if ev.Kind == toolkit.ConnectorEventStateChange && d.onState != nil {
			d.onState(d.namespace(url), ev.State)
		}
	}
	if url == toolkit.UserConnectorURI {
		if d.userDir == "" {
			return nil, fmt.Errorf("%w: no user directory", toolkit.ErrNotImplemented)
		}
		return store.Open(d.userDir, report, store.WithLogger(d.logger))
	}

	// mcp.Delegate makes MCP connectors wired to report their events.
	return mcp.NewDelegate(clientName, version, mcp.OptLogger(d.logger)).CreateConnector(url, report)
}

// namespace returns the namespace of the connector for url. It remembers
// the answer, so that the last state change of a removed connector is
// still reported under its name.
func (d *delegate) namespace(url string) string {
	if url == toolkit.UserConnectorURI {
		return toolkit.UserNamespace
	}
	d.mu.Lock()
	ns, ok := d.namespaces[url]
	d.mu.Unlock()
	if ok || d.tk == nil {
		return cmp.Or(ns, url)
	}
	for _, st := range d.tk.Connectors() {
		if st.URL == url {
			d.mu.Lock()
			if d.namespaces == nil {
				d.namespaces = make(map[string]string)
			}
			d.namespaces[url] = st.Namespace
			d.mu.Unlock()
			return st.Namespace
		}
	}
	return url
}

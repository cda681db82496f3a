package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/store"
)

// clientName identifies the gateway to the MCP servers it connects to.
const clientName = "toolkit-gateway"

// delegate connects the gateway's toolkit to its upstreams: it creates the
// MCP connectors the toolkit asks for, with each upstream's options and
// tool filter, and serves the "user" namespace from the prompts
// directory (the gateway logs the state changes it hears of through
// toolkit.Subscribe). It runs no
// prompts itself: the gateway wraps it in mcpserver.SamplingDelegate, so
// prompts run on the client's own model.
type delegate struct {
	// logger receives the connectors' and the store's diagnostics.
	logger *slog.Logger
	// userDir is the directory served as the "user" namespace; "" for none.
	userDir string
	// options, if set, returns extra connector options for a URL.
	options func(url string) []mcp.Option
	// wrap, if set, wraps the connector made for a URL (the tool filter).
	wrap func(url string, c toolkit.Connector) toolkit.Connector
	// openAPI, if set, makes the connector of an openapi entry (a URL
	// starting with openapi:).
	openAPI func(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error)
	// onEvent, if set, receives the list-change and resource-update events
	// the toolkit forwards to OnEvent.
	onEvent func(toolkit.ConnectorEvent)

	mu    sync.Mutex
	conns map[string]*mcp.Connector // MCP connectors by URL, until removed
}

var (
	_ toolkit.ToolkitDelegate = (*delegate)(nil)
	_ bridge.ClientObserver   = (*delegate)(nil)
)

// OnEvent receives the toolkit's list-change and resource-update events.
func (d *delegate) OnEvent(ev toolkit.ConnectorEvent) {
	if d.onEvent != nil {
		d.onEvent(ev)
	}
}

// Call reports toolkit.ErrNotImplemented: the gateway's prompts run on the
// client's model (mcpserver.SamplingDelegate), not here.
func (d *delegate) Call(_ context.Context, p toolkit.Prompt, _ ...toolkit.Resource) (toolkit.Resource, error) {
	return nil, fmt.Errorf("%w: prompt %q: the client offers no sampling", toolkit.ErrNotImplemented, p.Name())
}

// CreateConnector makes the connector for url: a directory store for the
// "user" namespace, an MCP connector (mcp.Delegate's) for anything else.
func (d *delegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	if url == toolkit.UserConnectorURI {
		if d.userDir == "" {
			return nil, fmt.Errorf("%w: no prompts directory", toolkit.ErrNotImplemented)
		}
		return store.Open(d.userDir, onEvent, store.WithLogger(d.logger))
	}
	if c, ok, err := skillsConnector(url, onEvent, d.logger); ok {
		return c, err
	}
	if d.openAPI != nil && strings.HasPrefix(url, openAPIScheme) {
		return d.openAPI(url, onEvent)
	}
	opts := []mcp.Option{mcp.OptLogger(d.logger)}
	if d.options != nil {
		opts = append(opts, d.options(url)...)
	}
	md, err := mcp.NewDelegate(clientName, version, opts...)
	if err != nil {
		return nil, err
	}
	c, err := md.CreateConnector(url, onEvent)
	if err != nil {
		return nil, err
	}
	if mc, ok := c.(*mcp.Connector); ok {
		d.mu.Lock()
		if d.conns == nil {
			d.conns = make(map[string]*mcp.Connector)
		}
		d.conns[url] = mc
		d.mu.Unlock()
	}
	if d.wrap != nil {
		return d.wrap(url, c), nil
	}
	return c, nil
}

// forget drops the connector of a removed upstream.
func (d *delegate) forget(url string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.conns, url)
}

// ClientStarted tells every upstream with per_client sessions that a
// client's session started: each opens the client's upstream session.
func (d *delegate) ClientStarted(ctx context.Context, cl bridge.Client) {
	d.mu.Lock()
	conns := make([]*mcp.Connector, 0, len(d.conns))
	for _, c := range d.conns {
		conns = append(conns, c)
	}
	d.mu.Unlock()
	for _, c := range conns {
		c.ClientStarted(ctx, cl)
	}
}

// connector returns the MCP connector of url, or nil.
func (d *delegate) connector(url string) *mcp.Connector {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.conns[url]
}

// upstreamSessions counts the per-client upstream sessions of one
// upstream.
type upstreamSessions struct {
	Open   int   `json:"open"`
	Opened int64 `json:"opened"`
	// Users counts the users of a per_user upstream by the state of
	// their authorization; absent otherwise.
	Users *userAuthorizations `json:"user_authorizations,omitempty"`
}

// clientSessions returns the per-client upstream sessions of the upstream
// at url, or false when it has none (shared).
func (d *delegate) clientSessions(url string) (upstreamSessions, bool) {
	d.mu.Lock()
	c := d.conns[url]
	d.mu.Unlock()
	if c == nil {
		return upstreamSessions{}, false
	}
	open, opened := c.ClientSessions()
	return upstreamSessions{Open: open, Opened: opened}, true
}

// userAuthorizations counts the users of the per_user upstream at url.
func (d *delegate) userAuthorizations(url string) *userAuthorizations {
	d.mu.Lock()
	c := d.conns[url]
	d.mu.Unlock()
	if c == nil {
		return nil
	}
	a, p, f := c.UserAuthorizations()
	return &userAuthorizations{Authorized: a, Pending: p, Failed: f}
}

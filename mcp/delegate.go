package mcp

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// Delegate is a ready toolkit.ToolkitDelegate for applications without one
// of their own: CreateConnector makes MCP connectors wired to the toolkit's
// events, there is no "user" namespace, and prompts are not run (Call
// reports toolkit.ErrNotImplemented). Make it with NewDelegate, which
// checks the options.
type Delegate struct {
	// ClientName and ClientVersion identify the application to servers.
	ClientName    string
	ClientVersion string
	// Options are given to every connector, before the event wiring.
	// NewDelegate has checked those it was given; options set here
	// directly are checked by each CreateConnector (New).
	Options []Option
	// Events, if set, receives the events the toolkit forwards to OnEvent.
	Events func(toolkit.ConnectorEvent)

	// clients are the connectors made with OptPerClient, told of each
	// client session that starts (ClientStarted); nil in a Delegate not
	// made by NewDelegate.
	clients *connectorSet
}

// connectorSet is the connectors of a Delegate made with OptPerClient,
// until they stop.
type connectorSet struct {
	mu    sync.Mutex
	conns []*Connector
}

var (
	_ toolkit.ToolkitDelegate = (*Delegate)(nil)
	_ bridge.ClientObserver   = (*Delegate)(nil)
)

// NewDelegate returns a Delegate whose connectors identify themselves as
// clientName and clientVersion and are made with opts, the options of New,
// given to every connector. The options are checked here, once: an invalid
// one makes NewDelegate fail with an error that wraps
// toolkit.ErrBadParameter and names the option, so that AddConnector only
// ever reports what is wrong with its URL.
func NewDelegate(clientName, clientVersion string, opts ...Option) (*Delegate, error) {
	if _, err := applyOptions(opts); err != nil {
		return nil, err
	}
	return &Delegate{ClientName: clientName, ClientVersion: clientVersion, Options: opts, clients: &connectorSet{}}, nil
}

// OnEvent hands the event to d.Events, if set.
func (d *Delegate) OnEvent(e toolkit.ConnectorEvent) {
	if d.Events != nil {
		d.Events(e)
	}
}

// Call reports that the delegate runs no prompts.
func (d *Delegate) Call(ctx context.Context, p toolkit.Prompt, resources ...toolkit.Resource) (toolkit.Resource, error) {
	return nil, fmt.Errorf("%w: prompt %q: this delegate runs no prompts", errs.ErrNotImplemented, p.Name())
}

// CreateConnector returns an MCP connector for url whose state changes,
// list changes and resource updates reach onEvent. It reports
// toolkit.ErrNotImplemented for toolkit.UserConnectorURI.
func (d *Delegate) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	if url == toolkit.UserConnectorURI {
		return nil, fmt.Errorf("%w: this delegate serves no %q namespace", errs.ErrNotImplemented, toolkit.UserNamespace)
	}
	opts := append([]Option(nil), d.Options...)
	if onEvent != nil {
		opts = append(opts,
			OptOnStateChange(func(_ context.Context, s *toolkit.ConnectorState) { onEvent(toolkit.StateChangeEvent(*s)) }),
			OptOnToolListChanged(func(context.Context) { onEvent(toolkit.ToolListChangeEvent()) }),
			OptOnPromptListChanged(func(context.Context) { onEvent(toolkit.PromptListChangeEvent()) }),
			OptOnResourceListChanged(func(context.Context) { onEvent(toolkit.ResourceListChangeEvent()) }),
			OptOnResourceUpdated(func(_ context.Context, uri string) { onEvent(toolkit.ResourceUpdatedEvent(uri)) }),
		)
	}
	name := d.ClientName
	if name == "" {
		name = "toolkit"
	}
	c, err := New(url, name, d.ClientVersion, opts...)
	if err != nil {
		return nil, err
	}
	if onEvent != nil {
		c.skills.notify = func() { onEvent(toolkit.SkillListChangeEvent()) }
	}
	if s := d.clients; s != nil && c.clientSessions() != nil {
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
	}
	return c, nil
}

// ClientStarted tells each connector the delegate made with OptPerClient
// that a client's session started, so that it opens the client's upstream
// session at once (see [Connector.ClientStarted]). Give the delegate to
// the server face (mcpserver.WithClientSessions) to make it so. It makes
// the delegate a [bridge.ClientObserver]. A Delegate not made by
// NewDelegate tells no connector: their clients' sessions open at their
// first call.
func (d *Delegate) ClientStarted(ctx context.Context, cl bridge.Client) {
	s := d.clients
	if s == nil {
		return
	}
	s.mu.Lock()
	// A connector that stopped was removed from its toolkit: forget it.
	s.conns = slices.DeleteFunc(s.conns, func(c *Connector) bool { return c.State().Status == toolkit.StatusStopped })
	conns := slices.Clone(s.conns)
	s.mu.Unlock()
	for _, c := range conns {
		c.ClientStarted(ctx, cl)
	}
}

package mcpserver

import (
	"context"
	"fmt"
	"sync"

	"github.com/llmkit/toolkit"
)

// EventRelay is a toolkit delegate that hands every toolkit event to the
// servers attached to it (WithEventRelay) and then to the application's own
// delegate. Calls and connector creation go to the inner delegate.
type EventRelay struct {
	inner toolkit.ToolkitDelegate

	mu      sync.RWMutex
	servers []*Server
}

var _ toolkit.ToolkitDelegate = (*EventRelay)(nil)

// ServerDelegate wraps inner (which may be nil) so that the toolkit's
// events also reach the MCP servers attached with WithEventRelay:
//
//	relay := mcp.ServerDelegate(appDelegate)
//	tk, _ := toolkit.New(toolkit.WithDelegate(relay))
//	srv, _ := mcpserver.New(tk, nil, mcp.WithEventRelay(relay))
//
// Several servers (say, stdio and HTTP) may share a relay.
func ServerDelegate(inner toolkit.ToolkitDelegate) *EventRelay {
	return &EventRelay{inner: inner}
}

func (r *EventRelay) attach(s *Server) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.servers = append(r.servers, s)
}

func (r *EventRelay) detach(s *Server) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.servers {
		if x == s {
			r.servers = append(r.servers[:i:i], r.servers[i+1:]...)
			return
		}
	}
}

// OnEvent passes ev to every attached server, then to the inner delegate.
func (r *EventRelay) OnEvent(ev toolkit.ConnectorEvent) {
	r.mu.RLock()
	servers := r.servers
	r.mu.RUnlock()
	for _, s := range servers {
		s.OnEvent(ev)
	}
	if r.inner != nil {
		r.inner.OnEvent(ev)
	}
}

// Call runs a prompt through the inner delegate; without one it fails with
// toolkit.ErrNotImplemented.
func (r *EventRelay) Call(ctx context.Context, p toolkit.Prompt, resources ...toolkit.Resource) (toolkit.Resource, error) {
	if r.inner == nil {
		return nil, fmt.Errorf("%w: prompt %q: no delegate runs prompts", toolkit.ErrNotImplemented, p.Name())
	}
	return r.inner.Call(ctx, p, resources...)
}

// CreateConnector creates a connector through the inner delegate; without
// one it fails with toolkit.ErrNotImplemented.
func (r *EventRelay) CreateConnector(url string, onEvent func(toolkit.ConnectorEvent)) (toolkit.Connector, error) {
	if r.inner == nil {
		return nil, fmt.Errorf("%w: connector %q: no delegate creates connectors", toolkit.ErrNotImplemented, url)
	}
	return r.inner.CreateConnector(url, onEvent)
}

package main

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/mcp/mcpserver"
)

// serverEndpoints serves each upstream alone at <path>/<name>
// (server_endpoints): an MCP server of the gateway's toolkit restricted
// to the upstream's namespace, made at its first request and kept until
// the gateway stops. An upstream removed by a reload serves nothing
// there; a name that is no upstream's is not found.
type serverEndpoints struct {
	g      *gateway
	prefix string // <path>/
	opts   []mcpserver.Option

	mu     sync.Mutex
	byName map[string]*serverEndpoint
	closed bool
}

type serverEndpoint struct {
	srv *mcpserver.Server
	h   http.Handler
}

func newServerEndpoints(g *gateway, path string, opts []mcpserver.Option) *serverEndpoints {
	return &serverEndpoints{g: g, prefix: strings.TrimSuffix(path, "/") + "/", opts: slices.Clip(opts), byName: map[string]*serverEndpoint{}}
}

func (e *serverEndpoints) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, e.prefix)
	if name == "" || strings.Contains(name, "/") || !e.g.hasUpstream(name) {
		http.NotFound(w, r)
		return
	}
	ep, err := e.get(name)
	if err != nil {
		e.g.logger.Error("serving an upstream alone", "namespace", name, "error", err)
		http.Error(w, "This upstream cannot be served alone now.", http.StatusServiceUnavailable)
		return
	}
	ep.h.ServeHTTP(w, r)
}

// get returns the endpoint of upstream name, made now if it is the
// first request.
func (e *serverEndpoints) get(name string) (*serverEndpoint, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, http.ErrServerClosed
	}
	if ep, ok := e.byName[name]; ok {
		return ep, nil
	}
	opts := append(slices.Clip(e.opts), mcpserver.WithNamespaces(name), mcpserver.WithHTTP(mcpserver.WithPath(e.prefix+name)))
	if e.g.clientSessions {
		// A client of this endpoint calls this upstream only: the
		// per_client upstreams of others open no session (no process)
		// for it.
		opts = append(opts, mcpserver.WithClientSessions(namespaceClients{e.g, name}))
	}
	srv, err := mcpserver.New(e.g.tk, &sdk.Implementation{Name: name, Version: version}, opts...)
	if err != nil {
		return nil, err
	}
	h, err := srv.Handler()
	if err != nil {
		srv.Close()
		return nil, err
	}
	ep := &serverEndpoint{srv: srv, h: h}
	e.byName[name] = ep
	return ep, nil
}

// close closes every endpoint's server.
func (e *serverEndpoints) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	for _, ep := range e.byName {
		ep.srv.Close()
	}
}

// hasUpstream reports whether name is the namespace of an upstream in
// force: a server or an openapi entry.
func (g *gateway) hasUpstream(name string) bool {
	cfg := g.config()
	return slices.ContainsFunc(cfg.Servers, func(s Server) bool { return s.Name == name }) ||
		slices.ContainsFunc(cfg.OpenAPI, func(o OpenAPI) bool { return o.Name == name })
}

// namespaceClients tells the connector of one upstream, and no other, of
// each client session that starts on that upstream's endpoint.
type namespaceClients struct {
	g  *gateway
	ns string
}

func (o namespaceClients) ClientStarted(ctx context.Context, cl bridge.Client) {
	servers := o.g.config().Servers
	i := slices.IndexFunc(servers, func(s Server) bool { return s.Name == o.ns })
	if i < 0 {
		return
	}
	if c := o.g.d.connector(servers[i].endpoint); c != nil {
		c.ClientStarted(ctx, cl)
	}
}

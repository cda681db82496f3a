package mcpserver

import (
	"context"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Protocol versions the server face tells apart.
const (
	// statelessVersion is the first protocol version without initialize
	// and sessions (server/discover, version and capabilities in each
	// request's _meta, input-required results instead of server requests).
	statelessVersion = "2026-07-28"
)

// Headers of the streamable HTTP transport the routing reads.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
)

// statelessRequest reports whether r is a request of the stateless
// protocol: a POST outside any session that names a version from
// statelessVersion on in its Mcp-Protocol-Version header (a client of
// that protocol sends the header with every request, server/discover
// included, and the go-sdk refuses a request whose header and _meta
// differ). Versions are dates, so they compare as strings.
func statelessRequest(r *http.Request) bool {
	return r.Method == http.MethodPost && r.Header.Get(headerSessionID) == "" &&
		r.Header.Get(headerProtocolVersion) >= statelessVersion
}

// bothGenerations serves the two generations of the protocol on one
// endpoint: requests of the stateless protocol (statelessRequest) go to
// stateless, a go-sdk handler without sessions over the same server;
// everything else — initialize and the requests of its sessions, GET
// streams, DELETE — goes to stateful. A client asking for 2026-07-28 thus
// gets it (the go-sdk's stateful handler alone refuses it, and the client
// falls back to initialize), and an older client its session as before.
func bothGenerations(stateful, stateless http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if statelessRequest(r) {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// wrapListen returns h, a handler of stateless requests, behind the gate:
// a subscriptions/listen request — the stream that carries list changes
// and resource updates to a client of the stateless protocol, open as
// long as the client listens — holds a session slot while it lasts, so
// that WithMaxSessions and WithMaxSessionsPerPrincipal bound those
// streams as they bound sessions. The go-sdk refuses a stateless request
// whose Mcp-Method header differs from its method, so the header tells.
// Other stateless requests hold no slot: they end with their answer.
func (g *sessionGate) wrapListen(h http.Handler) http.Handler {
	return g.holdDuring(h, func(r *http.Request) bool {
		return r.Method == http.MethodPost && r.Header.Get(headerMethod) == "subscriptions/listen"
	})
}

// setCacheable decides the cache fields of the results that carry them
// (server/discover, the four lists, resources/read) for clients of the
// stateless protocol: no time to live, since the toolkit's items change
// whenever an upstream's do (clients hear of it through
// subscriptions/listen), and a private scope, since what a client sees may
// depend on who it is (the toolkit's policy, an upstream session per
// client), so no shared cache may hand it to another.
func setCacheable(_ context.Context, _ sdk.Request, c *sdk.Cacheable) {
	c.TTLMs = 0
	c.CacheScope = "private"
}

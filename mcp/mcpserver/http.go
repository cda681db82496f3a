package mcpserver

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Handler returns an http.Handler serving the MCP streamable HTTP transport
// for s, stateful unless WithStateless is given. A stateful handler serves
// both generations of the protocol on its one endpoint: initialize and
// sessions for clients up to 2025-11-25, and for clients of 2026-07-28
// (server/discover, no session) the requests that name that version in
// their Mcp-Protocol-Version header, served as WithStateless serves them.
// Requests of 2026-07-28 whose Mcp-Method or Mcp-Name header is missing
// or differs from their body are refused (400, code -32020). opts add to (and win over)
// the options given to New with WithHTTP. An invalid option among opts
// makes Handler fail with an error that wraps toolkit.ErrBadParameter and
// names the option (those given to New were checked there).
//
// Security, in the order the checks run:
//   - DNS-rebinding protection (on unless WithoutRebindingProtection): a
//     request that reached a loopback address must name a loopback host in
//     its Host header; with WithAllowedHosts the Host header must be one of
//     those; a request with an Origin header must come from the server's
//     own origin or one listed with WithAllowedOrigins. Refusals get 403.
//   - Bearer-token authentication with WithBearerAuth (401 without a valid
//     token, 403 without a required scope, with an RFC 6750 challenge
//     that points at the resource metadata of WithProtectedResource). The
//     token's info reaches handlers through the SDK request.
//   - A request body limit (WithMaxBodyBytes, 4 MiB by default; 413).
//
// Ceilings: a body must arrive within WithReadTimeout (30s by default), and
// a handler keeps at most WithMaxSessions sessions (1,000 by default),
// WithMaxSessionsPerPrincipal (100) for one authenticated principal;
// beyond them a new session is refused with 503 and Retry-After. The
// subscriptions/listen stream of a 2026-07-28 client counts as a session
// while it is open.
func (s *Server) Handler(opts ...HTTPOption) (http.Handler, error) {
	h, _, err := s.handler(opts)
	if err != nil {
		return nil, err
	}
	return h, nil
}

// handler builds the HTTP handler for the options of New followed by opts,
// and returns the configuration it used.
func (s *Server) handler(opts []HTTPOption) (http.Handler, *httpConfig, error) {
	cfg, err := s.httpConfig(opts)
	if err != nil {
		return nil, nil, err
	}
	sdkHandler := func(stateless bool) http.Handler {
		h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.server }, &sdk.StreamableHTTPOptions{
			Stateless:                  stateless,
			JSONResponse:               cfg.jsonResponse,
			Logger:                     s.cfg.sdkLogger,
			SessionTimeout:             effectiveTimeout(cfg.sessionTimeout),
			MaxRequestBodyBytes:        cfg.maxBody,
			DisableLocalhostProtection: cfg.noRebinding || len(cfg.hosts) > 0, // the guard below checks
			EventStore:                 cfg.eventStore,
			// From protocol version 2026-07-28 the go-sdk itself ends a call
			// whose request the client hung up.
			PropagateRequestCancellation: cfg.eventStore == nil,
		})
		// With an event store a client may resume the stream of a request
		// it hung up, so its calls go on.
		return s.calls.wrap(h, cfg.eventStore == nil)
	}
	gate := newSessionGate(cfg.ceilings, s.logger, s.countRefusedSession, s.server.Sessions)
	h := gate.wrapListen(sdkHandler(true))
	if !cfg.stateless {
		// Both generations on one endpoint (generations.go).
		h = bothGenerations(gate.wrap(sdkHandler(false)), h)
	}
	return bodyTimeout(cfg.secure(h), cfg.ceilings.read(), s.logger), cfg, nil
}

// httpConfig returns the HTTP configuration of the options of New followed
// by opts.
func (s *Server) httpConfig(opts []HTTPOption) (*httpConfig, error) {
	var cfg httpConfig
	if err := cfg.apply(s.cfg.http); err != nil {
		return nil, err
	}
	if err := cfg.apply(opts); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// secure puts h behind the checks of the package: bearer authentication
// and the Host and Origin guard.
func (cfg *httpConfig) secure(h http.Handler) http.Handler {
	if cfg.verifier != nil {
		h = cfg.requireBearer(h)
	}
	if !cfg.noRebinding {
		h = &originGuard{next: h, origins: cfg.origins, hosts: cfg.hosts}
	}
	return h
}

// SSEHandler returns an http.Handler serving the legacy HTTP+SSE transport
// of protocol version 2024-11-05, for clients that do not speak streamable
// HTTP: a GET opens a session and its event stream, whose first event names
// the URL (the handler's own, with a sessionid query parameter) the client
// POSTs its messages to. Mount it at a path of its own, beside Handler
// (WithSSEPath does that for ServeListener and Serve). opts add to the
// options given to New with WithHTTP; the security checks, the body limit
// and the per-session call limit are those of Handler, and so are the
// ceilings (WithReadTimeout, WithMaxSessions, WithMaxSessionsPerPrincipal),
// counted apart from Handler's. A session lasts as long as its GET
// request: when the client goes away, the calls still running are
// cancelled. An invalid option among opts makes SSEHandler fail, as
// Handler does.
func (s *Server) SSEHandler(opts ...HTTPOption) (http.Handler, error) {
	cfg, err := s.httpConfig(opts)
	if err != nil {
		return nil, err
	}
	return cfg.sseHandler(s), nil
}

// sseHandler returns the legacy SSE handler of s for cfg.
func (cfg *httpConfig) sseHandler(s *Server) http.Handler {
	gate := newSessionGate(cfg.ceilings, s.logger, s.countRefusedSession, s.server.Sessions)
	h := cfg.secure(gate.wrapSSE(wrapSSE(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s.server }, &sdk.SSEOptions{
		DisableLocalhostProtection: cfg.noRebinding || len(cfg.hosts) > 0, // the guard checks
		MaxRequestBodyBytes:        cfg.maxBody,
	}))))
	return bodyTimeout(h, cfg.ceilings.read(), s.logger)
}

// originGuard refuses requests whose Host or Origin header points
// somewhere the server does not live: the defence against DNS rebinding and
// cross-site requests from browsers.
type originGuard struct {
	next    http.Handler
	origins []string
	hosts   []string
}

func (g *originGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if len(g.hosts) > 0 && !g.hostAllowed(r.Host) {
		http.Error(w, "Forbidden: host not allowed", http.StatusForbidden)
		return
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil {
		if isLoopback(la.String()) && !isLoopback(r.Host) && !g.hostAllowed(r.Host) {
			http.Error(w, "Forbidden: invalid Host header", http.StatusForbidden)
			return
		}
	}
	if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin, r.Host) {
		http.Error(w, "Forbidden: origin not allowed", http.StatusForbidden)
		return
	}
	g.next.ServeHTTP(w, r)
}

func (g *originGuard) hostAllowed(host string) bool {
	if len(g.hosts) == 0 {
		return false
	}
	name := hostName(host)
	for _, h := range g.hosts {
		if strings.EqualFold(h, host) || strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

// originAllowed reports whether a request from origin may reach the server
// known to the client as host: same host (and port), or listed.
func (g *originGuard) originAllowed(origin, host string) bool {
	if slices.ContainsFunc(g.origins, func(o string) bool { return strings.EqualFold(strings.TrimRight(o, "/"), origin) }) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, host) {
		return true
	}
	// A loopback page talking to a loopback server (ports may differ).
	return isLoopback(u.Host) && isLoopback(host)
}

// hostName returns the host part of a host[:port] string.
func hostName(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// isLoopback reports whether host[:port] names the loopback interface.
func isLoopback(hostport string) bool {
	h := hostName(hostport)
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

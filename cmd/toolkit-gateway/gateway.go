package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/llmkit/toolkit/redisstate"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/codemode"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/mcpserver"
	"github.com/llmkit/toolkit/mcp/oauth"
	"github.com/llmkit/toolkit/policy"
)

// gatewayName identifies the gateway to its MCP clients.
const gatewayName = "toolkit-gateway"

// serveCommand parses the gateway's flags, loads its configuration and runs
// it until SIGINT or SIGTERM.
func serveCommand(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("config", "", "the configuration file (YAML; see gateway.yaml in the source)")
	format := fs.String("log-format", "text", "log format: text or json")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return usageError(err)
	}
	if *file == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: toolkit-gateway --config FILE [--log-format text|json] [--log-level LEVEL]")
		return errUsage
	}
	logger, err := newLogger(stderr, *format, *level)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(*file)
	if err != nil {
		return fmt.Errorf("configuration refused:\n%w", err)
	}
	g, err := newGateway(*file, cfg, logger)
	if err != nil {
		return fmt.Errorf("configuration refused:\n%w", err)
	}
	return g.run(ctx)
}

// gateway serves the upstream MCP servers of its configuration, and a
// directory of prompts, as one MCP endpoint.
type gateway struct {
	file   string
	logger *slog.Logger
	tk     *toolkit.Toolkit
	d      *delegate
	srv    *mcpserver.Server
	code   *codemode.Mode  // nil unless code_mode is configured
	meters *gatewayMetrics // nil unless metrics are on
	auth   *authenticator  // nil unless auth is configured
	logins authorizers     // of the upstreams' OAuth
	eng    *policy.Engine  // the policy: rules, rate limits, pins
	audit  *rotatingFile   // the audit log; nil unless configured

	pins       pinWatcher        // the pins' store, watched; nil without one
	state      *redisstate.Store // the fleet's shared state; nil without one
	closeState func() error      // closes state's client
	// rules warns about rule patterns that match no tool, once the
	// upstreams have listed (rulecheck.go).
	rules ruleCheck
	// unsubscribe ends the logging of the upstreams' state changes.
	unsubscribe func()
	// clientSessions: the server keeps its clients' sessions
	// (mcpserver.WithClientSessions), which per_client upstreams need.
	clientSessions bool
	// endpoints serves each upstream alone (server_endpoints); nil
	// without.
	endpoints *serverEndpoints

	mu        sync.Mutex
	cfg       *Config           // the configuration in force
	upstreams map[string]Server // by endpoint; read by the delegate
	apis      map[string]*api   // the openapi entries, by endpoint
}

// newGateway builds the toolkit and the MCP server for cfg and registers
// the upstreams. Nothing is contacted before run.
func newGateway(file string, cfg *Config, logger *slog.Logger) (*gateway, error) {
	g := &gateway{file: file, logger: logger, cfg: cfg, upstreams: map[string]Server{}, apis: map[string]*api{}}
	cfg.logWarnings(logger)
	g.logins.logger = logger
	d := &delegate{
		logger:  logger,
		userDir: cfg.Prompts,
		options: g.connectorOptions,
		wrap:    g.wrapConnector,
		openAPI: g.openAPIConnector,
		onEvent: func(ev toolkit.ConnectorEvent) {
			logger.Debug("toolkit event", "kind", ev.Kind, "namespace", ev.Namespace, "uri", ev.URI)
		},
	}
	// Prompts run on the MCP client's own model (sampling) when the client
	// offers it.
	tkOpts := []toolkit.Option{toolkit.WithDelegate(mcpserver.SamplingDelegate(d)), toolkit.WithLogger(logger)}
	opts := []mcpserver.Option{mcpserver.WithLogger(logger), mcpserver.WithHTTP(mcpserver.WithPath(cfg.Path))}
	// mainOnly are the options of the endpoint of all upstreams that the
	// endpoints of one (server_endpoints) do not take.
	var mainOnly []mcpserver.Option
	if cfg.Metrics {
		m, err := newMetrics()
		if err != nil {
			return nil, err
		}
		g.meters = m
		tkOpts = append(tkOpts, toolkit.WithMeterProvider(m.provider))
		mainOnly = append(mainOnly, mcpserver.WithMeterProvider(m.provider))
	}
	var err error
	if g.state, g.closeState, err = newStateStore(cfg.State, g.meters.meterProvider()); err != nil {
		g.meters.shutdown()
		return nil, fmt.Errorf("state: %w", err)
	}
	if g.state != nil {
		if g.logins.relay, err = g.state.Redirects(); err != nil { // checked: the state section has keys
			g.closeOwned()
			g.meters.shutdown()
			return nil, fmt.Errorf("state: %w", err)
		}
	}
	if g.eng, g.pins, err = newPolicyEngine(context.Background(), cfg, g.state, logger, g.meters); err != nil {
		g.closeOwned()
		g.meters.shutdown()
		return nil, err
	}
	tkOpts = append(tkOpts, toolkit.WithPolicy(g.eng))
	if a := cfg.AuditLog; a != nil {
		if g.audit, err = openRotating(a.File, a.MaxBytes, a.MaxFiles, logger); err != nil {
			g.meters.shutdown()
			return nil, fmt.Errorf("audit_log: %w", err)
		}
		tkOpts = append(tkOpts, toolkit.WithAudit(slog.NewJSONHandler(g.audit, nil)), toolkit.WithAuditArguments(a.Arguments))
	}
	tk, err := toolkit.New(tkOpts...)
	if err != nil {
		g.closeOwned()
		g.meters.shutdown()
		return nil, err
	}
	g.tk, g.d = tk, d
	if err := addSkills(tk, cfg.Skills); err != nil {
		g.closeOwned()
		g.meters.shutdown()
		return nil, err
	}
	// Every upstream's state changes are logged as they happen (the
	// toolkit names the namespace, even of an upstream being removed).
	g.rules.start(cfg)
	g.unsubscribe = tk.Subscribe(func(ev toolkit.ConnectorEvent) {
		if ev.Kind == toolkit.ConnectorEventStateChange {
			logState(logger, ev.Namespace, ev.State)
			g.noteUpstreamState(ev)
		}
	})
	if slices.ContainsFunc(cfg.Servers, Server.perClient) {
		// Each client session is known, so per_client upstreams open
		// theirs as it starts (those of an endpoint of one upstream, only
		// that upstream's: serverEndpoints.get).
		mainOnly = append(mainOnly, mcpserver.WithClientSessions(d))
		g.clientSessions = true
	}
	if g.meters != nil {
		if err := g.meters.observeUpstreamSessions(g.upstreamSessionCounts); err != nil {
			g.closeOwned()
			g.meters.shutdown()
			return nil, err
		}
	}

	if cfg.QualifiedNames {
		mainOnly = append(mainOnly, mcpserver.WithQualifiedNames())
	}
	if cm := cfg.CodeMode; cm != nil {
		if g.code, err = addCodeMode(tk, cm, serverNames{g}); err != nil {
			g.closeOwned()
			g.meters.shutdown()
			return nil, err
		}
	}
	if ts := cfg.ToolSearch; ts != nil {
		always := ts.Always
		if cfg.CodeMode != nil {
			always = append(slices.Clip(always), codeModeAlways...)
		}
		opts = append(opts, mcpserver.WithToolSearch(mcpserver.ToolSearch{Always: always, Limit: ts.Limit}))
	}
	if in := cfg.InputState; in != nil {
		opts = append(opts, mcpserver.WithInputStateKeys(in.keys...))
	}
	if g.state != nil {
		// A relayed round answered on one replica is refused on the others.
		opts = append(opts, mcpserver.WithReplaySet(g.state.Replays()))
	}
	if cfg.Stateless {
		opts = append(opts, mcpserver.WithHTTP(mcpserver.WithStateless()))
	}
	opts = append(opts, mcpserver.WithHTTP(mcpserver.WithSessionTimeout(cfg.SessionTimeout)))
	opts = append(opts, mcpserver.WithHTTP(cfg.ceilings()...))
	if cfg.MaxSessionCalls != 0 {
		opts = append(opts, mcpserver.WithMaxSessionCalls(max(cfg.MaxSessionCalls, 0)))
	}
	if cfg.StartupWait != nil {
		opts = append(opts, mcpserver.WithStartupWait(*cfg.StartupWait))
	}
	if g.auth, err = newAuthenticator(cfg.Auth, logger); err != nil {
		g.closeOwned()
		g.meters.shutdown()
		return nil, err
	}
	if g.auth != nil {
		var leeway time.Duration
		if cfg.Auth.JWT != nil {
			leeway = cfg.Auth.JWT.Leeway
		}
		opts = append(opts, mcpserver.WithHTTP(g.auth.options(leeway)...))
	}
	if cfg.ServerEndpoints {
		g.endpoints = newServerEndpoints(g, cfg.Path, opts)
	}
	if g.srv, err = mcpserver.New(tk, &sdk.Implementation{Name: gatewayName, Version: version}, append(opts, mainOnly...)...); err != nil {
		g.closeOwned()
		g.meters.shutdown()
		return nil, err
	}
	var errs []error
	for _, s := range cfg.Servers {
		if err := g.add(s); err != nil {
			errs = append(errs, err)
		}
	}
	for _, o := range cfg.OpenAPI {
		if err := g.addAPI(o); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		g.srv.Close()
		g.closeAPIs()
		g.logins.close()
		g.closeOwned()
		g.meters.shutdown()
		return nil, err
	}
	return g, nil
}

// run serves until ctx is cancelled (or the stdio client leaves), reloading
// the configuration on SIGHUP. When it returns every upstream is stopped
// and every child process reaped.
func (g *gateway) run(ctx context.Context) error {
	defer g.srv.Close()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	// The toolkit outlives the listeners: it stops last, so that requests
	// in flight at shutdown still reach their upstreams.
	tkCtx, stopToolkit := context.WithCancel(context.WithoutCancel(ctx))
	tkDone := make(chan error, 1)
	go func() { tkDone <- g.tk.Run(tkCtx) }()
	defer func() {
		stopToolkit()
		<-tkDone
		g.unsubscribe()
		g.closeAPIs()
		g.logins.close()
		if err := g.eng.SavePins(context.Background()); err != nil && !errors.Is(err, toolkit.ErrNotImplemented) {
			g.logger.Error("saving the pins", "error", err)
		}
		g.closeOwned()
		g.meters.shutdown()
		g.logger.Info("stopped")
	}()
	defer g.watchPins()()

	// Deferred calls run last first: serving stops, then its goroutines
	// are waited for.
	var wg sync.WaitGroup
	defer wg.Wait()
	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	served := make(chan error, 2)
	serve := func(f func() error) {
		wg.Go(func() { served <- f() })
	}

	cfg := g.config()
	src := healthSource{states: g.tk.Connectors, sessions: g.upstreamSessionsOf}
	if g.state != nil {
		src.state = g.state.Ping
	}
	health := healthHandler(src)
	switch cfg.Transport {
	case "stdio":
		serve(func() error { return g.srv.ServeStdio(serveCtx) })
		g.logger.Info("serving", "transport", "stdio")
		if cfg.HealthListen != "" {
			mux := http.NewServeMux()
			mountHealth(mux, health)
			g.mountMetrics(mux)
			if err := g.listen(serveCtx, cfg.HealthListen, mux, serve, "health"); err != nil {
				return err
			}
		}
	default:
		h, err := g.srv.Handler()
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.Handle(cfg.Path, h)
		if g.endpoints != nil {
			mux.Handle(g.endpoints.prefix, g.endpoints)
			defer g.endpoints.close()
		}
		if cfg.SSEPath != "" {
			sse, err := g.srv.SSEHandler()
			if err != nil {
				return err
			}
			mux.Handle(cfg.SSEPath, sse)
		}
		mountHealth(mux, health)
		g.mountMetrics(mux)
		g.logins.mount(mux)
		if g.auth != nil && g.auth.meta != nil {
			if err := oauth.HandleProtectedResourceMetadata(mux, g.auth.meta); err != nil {
				return err
			}
		}
		if err := g.listen(serveCtx, cfg.Listen, mux, serve, "mcp"); err != nil {
			return err
		}
	}

	for {
		select {
		case <-hup:
			g.reload()
		case err := <-served:
			stopServing()
			if cfg.Transport == "stdio" && err == nil {
				g.logger.Info("the stdio client left")
			}
			return err
		case <-ctx.Done():
			g.logger.Info("shutting down")
			stopServing()
			return nil
		}
	}
}

// listen starts an HTTP server for handler on addr and logs where it is.
func (g *gateway) listen(ctx context.Context, addr string, handler http.Handler, serve func(func() error), what string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	attrs := []any{"transport", "http", "addr", ln.Addr().String(), "health", base + "/healthz"}
	if g.meters != nil {
		attrs = append(attrs, "metrics", base+metricsPath)
	}
	if what == "mcp" {
		attrs = append(attrs, "mcp", base+g.config().Path)
	}
	g.logger.Info("serving", attrs...)
	serve(func() error { return mcpserver.ServeHTTP(ctx, ln, handler, g.config().ceilings()...) })
	return nil
}

// mountMetrics serves the metrics on mux when they are on.
func (g *gateway) mountMetrics(mux *http.ServeMux) {
	if g.meters != nil {
		mux.Handle(metricsPath, g.meters.handler)
	}
}

// config returns the configuration in force.
func (g *gateway) config() *Config {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cfg
}

// add registers an upstream with the toolkit.
func (g *gateway) add(s Server) error {
	if s.perClient() && !g.clientSessions {
		g.logger.Warn("upstream_sessions: per_client needs a restart when no upstream had it at start: until then the upstream's session is shared", "namespace", s.Name)
	}
	if o := s.OAuth; o != nil && o.PerUser && !o.exchanges() {
		if _, err := g.logins.callback(o.RedirectURL); err != nil {
			return fmt.Errorf("%s:%d: servers: %q: oauth: redirect_url: %w", g.file, s.line, s.Name, err)
		}
	} else if o != nil && o.Grant == grantAuthorizationCode {
		// The redirect listener is made now, so that an address in use
		// is an error of this upstream.
		if _, err := g.logins.get(o.RedirectURL); err != nil {
			return fmt.Errorf("%s:%d: servers: %q: oauth: redirect_url: %w", g.file, s.line, s.Name, err)
		}
	}
	g.mu.Lock()
	g.upstreams[s.endpoint] = s
	g.mu.Unlock()
	if err := g.tk.AddConnectorNS(s.Name, s.endpoint); err != nil {
		g.mu.Lock()
		delete(g.upstreams, s.endpoint)
		g.mu.Unlock()
		return fmt.Errorf("%s:%d: servers: %q: %w", g.file, s.line, s.Name, err)
	}
	g.logger.Info("upstream added", "namespace", s.Name, "url", s.endpoint)
	return nil
}

// remove stops an upstream and removes its items.
func (g *gateway) remove(s Server) {
	if err := g.tk.RemoveConnector(s.endpoint); err != nil {
		g.logger.Warn("removing upstream", "namespace", s.Name, "error", err)
	}
	g.d.forget(s.endpoint)
	g.mu.Lock()
	delete(g.upstreams, s.endpoint)
	g.mu.Unlock()
	g.logger.Info("upstream removed", "namespace", s.Name)
}

// reload reads the configuration file again and applies the difference:
// upstreams that are gone or changed are removed, new and changed ones are
// added, unchanged ones keep running untouched. A configuration with
// errors is refused as a whole.
func (g *gateway) reload() {
	next, err := loadConfig(g.file)
	if err != nil {
		g.logger.Error("configuration reload refused; keeping the running configuration", "error", err)
		return
	}
	next.logWarnings(g.logger)
	cur := g.config()
	for _, f := range []struct {
		name     string
		old, new any
	}{
		{"listen", cur.Listen, next.Listen}, {"transport", cur.Transport, next.Transport},
		{"path", cur.Path, next.Path}, {"stateless", cur.Stateless, next.Stateless},
		{"qualified_names", cur.QualifiedNames, next.QualifiedNames}, {"server_endpoints", cur.ServerEndpoints, next.ServerEndpoints},
		{"session_timeout", cur.SessionTimeout, next.SessionTimeout}, {"max_session_calls", cur.MaxSessionCalls, next.MaxSessionCalls},
		{"sse_path", cur.SSEPath, next.SSEPath},
		{"health_listen", cur.HealthListen, next.HealthListen}, {"prompts", cur.Prompts, next.Prompts}, {"skills", cur.Skills, next.Skills},
		{"metrics", cur.Metrics, next.Metrics}, {"startup_wait", durationOf(cur.StartupWait), durationOf(next.StartupWait)},
		{"tool_search", cur.ToolSearch.String(), next.ToolSearch.String()},
		{"code_mode", cur.CodeMode.String(), next.CodeMode.String()},
		{"input_state", cur.InputState.String(), next.InputState.String()},
		{"state", cur.State.String(), next.State.String()},
	} {
		if f.old != f.new {
			g.logger.Warn("configuration change needs a restart; ignored", "field", f.name)
		}
	}

	g.reloadAuth(cur, next)
	g.reloadPolicy(cur, next)

	wanted := map[string]Server{}
	for _, s := range next.Servers {
		wanted[s.Name] = s
	}
	running := map[string]Server{}
	var kept, added, removed int
	for _, s := range cur.Servers {
		if n, ok := wanted[s.Name]; ok && n.sameAs(s) {
			running[s.Name] = s
			kept++
			continue
		}
		g.remove(s)
		removed++
	}
	// The rules are checked against the tools once the new upstreams
	// have listed too; those kept have.
	g.rules.start(next)
	applied := make([]Server, 0, len(next.Servers))
	for _, s := range next.Servers {
		if _, ok := running[s.Name]; ok {
			applied = append(applied, s)
			if due := g.rules.ready(s.Name); due != nil {
				g.checkRuleTools(due)
			}
			continue
		}
		if err := g.add(s); err != nil {
			g.logger.Error("upstream refused", "namespace", s.Name, "error", err)
			continue
		}
		applied = append(applied, s)
		added++
	}
	updated := *cur
	updated.Servers = applied
	updated.OpenAPI = g.reloadAPIs(cur.OpenAPI, next.OpenAPI)
	updated.Auth = next.Auth
	updated.Policy, updated.RateLimits = next.Policy, next.RateLimits
	g.mu.Lock()
	g.cfg = &updated
	g.mu.Unlock()
	g.logger.Info("configuration reloaded", "kept", kept, "added", added, "removed", removed)
}

// closeOwned closes what the gateway opened for itself: the audit log
// and the shared state's client.
func (g *gateway) closeOwned() {
	if g.code != nil {
		g.code.Close()
	}
	if g.closeState != nil {
		g.closeState()
	}
	if g.audit == nil {
		return
	}
	if err := g.audit.Close(); err != nil {
		g.logger.Error("closing the audit log", "error", err)
	}
}

// durationOf returns *d, or 0 for nil.
func durationOf(d *time.Duration) time.Duration {
	if d == nil {
		return 0
	}
	return *d
}

// logState logs an upstream's new state: a warning when it is not
// working, with the reason; its server's name and version once ready.
func logState(logger *slog.Logger, ns string, st toolkit.ConnectorState) {
	level := slog.LevelInfo
	if st.Status == toolkit.StatusReconnecting || st.Status == toolkit.StatusFailed || st.Status == toolkit.StatusNeedsAuthorization {
		level = slog.LevelWarn
	}
	attrs := []any{"namespace", ns, "status", st.Status}
	if st.Status == toolkit.StatusReady {
		attrs = append(attrs, "server", st.Name, "version", st.Version)
	} else if st.LastError != "" {
		attrs = append(attrs, "error", st.LastError)
	}
	logger.Log(context.Background(), level, "upstream state", attrs...)
}

// upstream returns the configuration of the upstream at endpoint.
func (g *gateway) upstream(endpoint string) (Server, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.upstreams[endpoint]
	return s, ok
}

// connectorOptions turns an upstream's configuration into connector
// options.
func (g *gateway) connectorOptions(endpoint string) []mcp.Option {
	s, ok := g.upstream(endpoint)
	if !ok {
		return nil
	}
	// Sampling and elicitation requests of an upstream go to the client
	// whose call they belong to.
	opts := []mcp.Option{mcp.OptServerRequests(mcp.ServerRequests{Forward: true})}
	if t := s.Timeouts.Connect; t > 0 {
		opts = append(opts, mcp.OptTimeouts(mcp.Timeouts{Connect: t}))
	}
	if t := s.Timeouts.Reconnect; t > 0 {
		opts = append(opts, mcp.OptReconnect(mcp.Reconnect{Wait: t}))
	}
	if t := s.Timeouts.BackoffMax; t > 0 {
		opts = append(opts, mcp.OptReconnect(mcp.Reconnect{BackoffMin: min(mcp.DefaultBackoffMin, t), BackoffMax: t}))
	}
	for k, v := range s.Headers {
		opts = append(opts, mcp.OptHeader(k, v))
	}
	if n := s.MaxConcurrency; n > 0 {
		opts = append(opts, mcp.OptLimits(mcp.Limits{MaxConcurrency: n}))
	}
	if n := s.MaxResultBytes; n > 0 {
		opts = append(opts, mcp.OptLimits(mcp.Limits{MaxResultBytes: n}))
	}
	if s.perClient() {
		limits := mcp.ClientSessionLimits{
			Max:          s.MaxUpstreamSessions,
			PerPrincipal: s.MaxUpstreamSessionsPerPrincipal,
			Idle:         s.UpstreamIdleTimeout,
		}
		if g.state != nil {
			// A principal's share holds across the fleet.
			limits.Leases = g.state.SessionLeases()
		}
		opts = append(opts, mcp.OptPerClient(limits))
	}
	if len(s.Extensions) > 0 {
		opts = append(opts, mcp.OptExtensions(s.Extensions))
	}
	if n := s.MaxListItems; n > 0 {
		opts = append(opts, mcp.OptLimits(mcp.Limits{MaxListItems: n}))
	}
	if n := s.MaxListBytes; n > 0 {
		opts = append(opts, mcp.OptLimits(mcp.Limits{MaxListBytes: n}))
	}
	oauth, err := g.oauthOptions(s)
	if err != nil {
		// add made the redirect listener: not expected.
		g.logger.Error("upstream OAuth", "namespace", s.Name, "error", err)
	}
	return append(opts, oauth...)
}

// wrapConnector applies an upstream's tool filter and call timeout.
func (g *gateway) wrapConnector(endpoint string, c toolkit.Connector) toolkit.Connector {
	s, ok := g.upstream(endpoint)
	if !ok || (len(s.Tools.Allow) == 0 && len(s.Tools.Deny) == 0 && s.Timeouts.Call == 0) {
		return c
	}
	return &filtered{Connector: c, filter: s.Tools, timeout: s.Timeouts.Call}
}

// upstreamSessionsOf counts the client sessions of the upstream at url
// when it has per_client sessions; nil otherwise.
func (g *gateway) upstreamSessionsOf(url string) *upstreamSessions {
	s, ok := g.upstream(url)
	if !ok || !s.perClient() {
		return nil
	}
	n, ok := g.d.clientSessions(url)
	if !ok {
		return nil
	}
	if s.OAuth != nil && s.OAuth.PerUser {
		n.Users = g.d.userAuthorizations(url)
	}
	return &n
}

// upstreamSessionCounts returns, by namespace, the client sessions of the
// upstreams with per_client sessions.
func (g *gateway) upstreamSessionCounts() map[string]upstreamSessions {
	out := map[string]upstreamSessions{}
	for _, st := range g.tk.Connectors() {
		if n := g.upstreamSessionsOf(st.URL); n != nil {
			out[st.Namespace] = *n
		}
	}
	return out
}

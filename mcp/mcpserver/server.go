package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/metric"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/resource"
)

// Server exposes a Toolkit to MCP clients: over stdio (Run, ServeStdio) and
// over streamable HTTP, stateful or stateless (Handler, Serve). It is built
// on the go-sdk server: the toolkit's tools, prompts, resources and
// resource templates are registered with it under the names of the naming
// policy (see the guide docs/serving.md), and re-synchronised whenever the toolkit
// publishes a change ([toolkit.Toolkit.Subscribe]), so that clients get
// list_changed notifications and stable pagination.
type Server struct {
	tk     *toolkit.Toolkit
	cfg    *config
	server *sdk.Server
	logger *slog.Logger

	// extCache is the advertised extensions (extensions.go).
	extCache atomic.Pointer[extensionsCache]

	syncMu sync.Mutex                 // serialises synchronisation
	kinds  [toolkit.NumKinds]kindSync // guarded by syncMu (sync.go)

	mu sync.Mutex // guards the tables below
	// namers assign exposed names, per kind (see the guide docs/serving.md).
	namers [toolkit.NumKinds]*namer
	// regs holds what is registered with the SDK server, per kind: exposed
	// name → item.
	regs [toolkit.NumKinds]map[string]registration
	// tmplRoutes resolves a URI read through a toolkit template, in the
	// order reads try them (see readTemplated).
	tmplRoutes []templateRoute
	// static holds the URI templates of WithResourceTemplate, which toolkit
	// templates never replace, parsed (nil: not parsed by package
	// resource, taken to match any URI).
	static map[string]*resource.URITemplate

	unfollow func()       // ends the server's subscription to the toolkit
	skillRes skillListing // the SKILL.md resources registered (skills.go)

	startup *startupGate  // WithStartupWait; nil without it
	unmeter func()        // unregisters WithMeterProvider's instruments
	calls   *callTracker  // calls.go
	subs    subscriptions // what each session follows (subscriptions.go)
	search  *toolSearch   // WithToolSearch; nil without it (toolsearch.go)
	// metaTools are the governed meta-tools of tool search, by name
	// (toolsearch_govern.go); set before serving, read only after.
	metaTools map[string]*metaTool
	clients   *clientTable // WithClientSessions; nil without it (clients.go)
	rounds    *inputRounds // calls of 2026-07-28 clients waiting for input (inputrounds.go)

	refusals metric.Int64Counter // sessions refused by a ceiling (metrics.go); nil without metrics
}

// New returns a server that exposes tk. impl names the server to
// clients; nil means {Name: "toolkit", Version: "v0"}. It registers the
// toolkit's current items at once, and follows the toolkit's changes from
// then on until Close.
func New(tk *toolkit.Toolkit, impl *sdk.Implementation, opts ...Option) (*Server, error) {
	if tk == nil {
		return nil, fmt.Errorf("%w: nil toolkit", toolkit.ErrBadParameter)
	}
	cfg := &config{}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(cfg); err != nil {
			return nil, err
		}
	}
	if impl == nil {
		impl = &sdk.Implementation{Name: "toolkit", Version: "v0"}
	}
	logger := slog.New(slog.DiscardHandler)
	if cfg.logger != nil {
		logger = toolkit.RedactLogger(cfg.logger)
	}
	keys, err := newStateKeys(cfg.inputKeys)
	if err != nil {
		return nil, fmt.Errorf("%w: WithInputStateKeys: %v", toolkit.ErrBadParameter, err)
	}
	keys.shared = cfg.replays
	s := &Server{
		tk:     tk,
		cfg:    cfg,
		logger: logger,
		static: map[string]*resource.URITemplate{},
		rounds: newInputRounds(keys),
	}
	for k := range toolkit.NumKinds {
		s.namers[k] = newNamer(kinds[k].uris, cfg.qualify, cfg.sep)
		s.regs[k] = map[string]registration{}
	}
	sopts := &sdk.ServerOptions{
		Instructions:       cfg.instructions,
		Logger:             cfg.sdkLogger,
		PageSize:           cfg.pageSize,
		KeepAlive:          cfg.keepAlive,
		CompletionHandler:  s.complete,
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: s.unsubscribe,
		SetCacheable:       setCacheable,
		Capabilities: &sdk.ServerCapabilities{
			Logging:     &sdk.LoggingCapabilities{},
			Completions: &sdk.CompletionCapabilities{},
			Tools:       &sdk.ToolCapabilities{ListChanged: true},
			Prompts:     &sdk.PromptCapabilities{ListChanged: true},
			Resources:   &sdk.ResourceCapabilities{ListChanged: true, Subscribe: true},
		},
	}
	if cfg.sessions.clients {
		s.clients = newClientTable(cfg.sessions.observers)
		sopts.InitializedHandler, sopts.RootsListChangedHandler = s.clients.started, s.clients.rootsChanged
	}
	s.server = sdk.NewServer(impl, sopts)
	s.calls = newCallTracker(cfg.sessions.limit())
	mw := []sdk.Middleware{s.calls.middleware, sessionSlotMiddleware, s.policyMiddleware, s.extensionsMiddleware, s.appsMiddleware}
	if tk.Audits() {
		// Without an audit, requests pay nothing for it.
		mw = append([]sdk.Middleware{s.auditMiddleware}, mw...)
	}
	s.server.AddReceivingMiddleware(mw...)
	if err := s.addSkills(); err != nil {
		return nil, err
	}
	for _, t := range cfg.templates {
		if err := safely(func() { s.server.AddResourceTemplate(t.tmpl, t.handler) }); err != nil {
			return nil, fmt.Errorf("%w: resource template %q: %v", toolkit.ErrBadParameter, t.tmpl.URITemplate, err)
		}
		s.static[t.tmpl.URITemplate], _ = resource.ParseURITemplate(t.tmpl.URITemplate)
	}
	if mp := cfg.gateway.meters; mp != nil {
		unmeter, err := s.recordMetrics(mp)
		if err != nil {
			return nil, err
		}
		s.unmeter = unmeter
	}
	if d := cfg.gateway.startupWait; d > 0 {
		s.startup = newStartupGate(d)
		s.server.AddReceivingMiddleware(s.startupMiddleware)
	}
	if cfg.search != nil {
		s.search = newToolSearch(*cfg.search)
		s.addMetaTools()
	}
	// Subscribe first and list second, so no change falls in between.
	s.unfollow = tk.Subscribe(s.onEvent)
	if err := s.Sync(context.Background()); err != nil {
		s.Close()
		return nil, err
	}
	s.syncSkills()
	return s, nil
}

// SDK returns the underlying go-sdk server, for what this package does not
// cover (for example custom methods or extra middleware). Items registered
// on it directly are not touched by synchronisation unless their names
// collide with toolkit items.
func (s *Server) SDK() *sdk.Server { return s.server }

// Run serves one client over transport t until the client disconnects or
// ctx is cancelled.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	return s.server.Run(ctx, t)
}

// ServeStdio serves one client over the process's standard input and
// output until it disconnects or ctx is cancelled.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.Run(ctx, &sdk.StdioTransport{})
}

// Close stops following the toolkit and closes every client session
// (stdio and HTTP alike); Run returns when its session closes. Stateful
// HTTP sessions otherwise live until the client ends them or
// WithSessionTimeout expires.
func (s *Server) Close() error {
	s.unfollow()
	if s.startup != nil {
		s.startup.close()
	}
	if s.unmeter != nil {
		s.unmeter()
	}
	s.calls.cancelAll()
	s.clients.close()
	s.rounds.closeAll()
	var errs []error
	for ss := range s.server.Sessions() {
		if err := ss.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// onEvent applies a toolkit event: list changes re-synchronise the
// registered items (clients then get list_changed notifications) and
// resource updates are sent to the clients subscribed to the resource.
func (s *Server) onEvent(ev toolkit.ConnectorEvent) {
	ctx := context.Background()
	var err error
	switch ev.Kind {
	case toolkit.ConnectorEventResourceUpdated:
		s.resourceUpdated(ctx, ev)
	case toolkit.ConnectorEventPolicyChanged:
		s.announceTools()
	case toolkit.ConnectorEventSkillListChanged:
		s.syncSkills()
	default:
		// A list change; resources and templates share theirs.
		var errs []error
		for _, k := range ev.Kind.Kinds() {
			errs = append(errs, s.sync(ctx, k, ev.Namespace, false))
		}
		err = errors.Join(errs...)
	}
	if err != nil {
		s.logger.Warn("mcp server: synchronising with the toolkit", "event", ev.Kind.String(), "namespace", ev.Namespace, "error", err)
	}
}

// Sync registers the toolkit's current tools, prompts, resources and
// resource templates with the server, adding and removing only what
// changed. The toolkit's events make it happen for the kind that changed;
// call it after changes the toolkit does not report (an item that mutates
// its own description or schema in place).
func (s *Server) Sync(ctx context.Context) error {
	var errs []error
	for k := range toolkit.NumKinds {
		errs = append(errs, s.sync(ctx, k, "", true))
	}
	return errors.Join(errs...)
}

// sdkTool describes t for MCP under the exposed name. It refuses input
// schemas that are not objects, and schemas the schema guard refuses.
func sdkTool(name string, t toolkit.Tool) (st *sdk.Tool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: tool %q: %v", toolkit.ErrSchema, name, r)
		}
	}()
	in, out, err := toolSchemas(name, t)
	if err != nil {
		return nil, err
	}
	meta := t.Meta()
	st = &sdk.Tool{
		Name:        name,
		Title:       meta.Title,
		Description: t.Description(),
		InputSchema: in,
	}
	// Annotations only when a hint says something: hints at their
	// defaults mean what no annotations mean, and a gateway writes no
	// field its upstream did not.
	if meta.ReadOnlyHint || meta.DestructiveHint != nil || meta.IdempotentHint || meta.OpenWorldHint != nil {
		st.Annotations = &sdk.ToolAnnotations{
			Title:           meta.Title,
			ReadOnlyHint:    meta.ReadOnlyHint,
			DestructiveHint: meta.DestructiveHint,
			IdempotentHint:  meta.IdempotentHint,
			OpenWorldHint:   meta.OpenWorldHint,
		}
	}
	if out != nil {
		st.OutputSchema = out
	}
	// Marshal once here so that a schema the SDK cannot send is refused now
	// rather than on every tools/list.
	if _, err := json.Marshal(st); err != nil {
		return nil, fmt.Errorf("%w: tool %q: %v", toolkit.ErrSchema, name, err)
	}
	return st, nil
}

// sdkTemplate describes t for MCP under the exposed URI template,
// turning a panic of its methods into an error.
func sdkTemplate(exposed string, t toolkit.ResourceTemplate) (st *sdk.ResourceTemplate, err error) {
	defer func() {
		if r := recover(); r != nil {
			st, err = nil, fmt.Errorf("%w: resource template %q: %v", toolkit.ErrBadParameter, exposed, r)
		}
	}()
	st = &sdk.ResourceTemplate{URITemplate: exposed, Name: t.Name(), Description: t.Description(), MIMEType: t.Type()}
	if st.Name == "" {
		st.Name = exposed
	}
	return st, nil
}

// subscribe passes a client's subscription on to the resource when it is a
// bridge.Subscriber (a connector's resources are: a gateway subscribes upstream to
// what its clients follow). Other resources report their updates through
// toolkit events anyway.
//
// Only URIs the server can read may be followed (a resource's, or one a
// template matches), and a session may follow maxSubscriptions of them at
// most: a client cannot make the server hold what it likes.
func (s *Server) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	uri := req.Params.URI
	if !s.readable(uri) {
		return sdk.ResourceNotFoundError(uri)
	}
	if err := s.subs.add(req.Session, uri); err != nil {
		return err
	}
	if sub := s.subscriber(ctx, uri); sub != nil {
		if err := sub.Subscribe(ctx); err != nil {
			s.subs.remove(req.Session, uri)
			return err
		}
	}
	return nil
}

func (s *Server) unsubscribe(ctx context.Context, req *sdk.UnsubscribeRequest) error {
	s.subs.remove(req.Session, req.Params.URI)
	if sub := s.subscriber(ctx, req.Params.URI); sub != nil {
		return sub.Unsubscribe(ctx)
	}
	return nil
}

// readable reports whether uri is a resource the server exposes or a URI
// one of its templates matches.
func (s *Server) readable(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.regs[toolkit.KindResource][uri]; ok {
		return true
	}
	if _, _, ok := routeOf(s.tmplRoutes, uri); ok {
		return true
	}
	for _, t := range s.static {
		if t == nil {
			return true
		}
		if _, ok := t.Match(uri); ok {
			return true
		}
	}
	return false
}

// subscriber returns the bridge.Subscriber behind an exposed resource URI, or nil.
func (s *Server) subscriber(ctx context.Context, uri string) bridge.Subscriber {
	s.mu.Lock()
	reg, ok := s.regs[toolkit.KindResource][uri]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	item, err := s.tk.LookupType(ctx, toolkit.ListTypeResources, reg.key)
	if err != nil {
		return nil
	}
	sub, _ := item.Value.(bridge.Subscriber)
	return sub
}

// resourceUpdated tells the subscribers of a resource that it changed.
func (s *Server) resourceUpdated(ctx context.Context, ev toolkit.ConnectorEvent) {
	if ev.URI == "" {
		return
	}
	s.mu.Lock()
	uri, ok := s.namers[toolkit.KindResource].exposed(ev.URI + "#" + ev.Namespace)
	s.mu.Unlock()
	if !ok {
		// Not (yet) listed: clients may have subscribed to the plain URI.
		uri = ev.URI
	}
	if err := s.server.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
		s.logger.Warn("mcp server: resource update", "uri", uri, "error", err)
	}
}

// ExposedName returns the name under which the item with the toolkit key
// ("namespace.name" for tools and prompts, "uri#namespace" for resources,
// "uriTemplate#namespace" for templates) is offered to clients, for the
// given kind; for templates, the exposed URI template.
func (s *Server) ExposedName(kind toolkit.ListType, key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := kind.Kind()
	if !ok {
		return "", false
	}
	return s.namers[k].exposed(key)
}

// ItemKey returns the toolkit key of the item of the given kind offered
// to clients under exposed (a tool's or a prompt's name, a resource's
// URI, a template's URI template): the inverse of ExposedName.
func (s *Server) ItemKey(kind toolkit.ListType, exposed string) (string, bool) {
	k, ok := kind.Kind()
	if !ok {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	reg, ok := s.regs[k][exposed]
	return reg.key, ok
}

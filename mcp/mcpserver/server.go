package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/resource"
)

// Server exposes a Toolkit to MCP clients: over stdio (Run, ServeStdio) and
// over streamable HTTP, stateful or stateless (Handler, Serve). It is built
// on the go-sdk server: the toolkit's tools, prompts, resources and
// resource templates are registered with it under the names of the naming
// policy (see names_policy.go), and re-synchronised whenever the toolkit
// reports a change, so that clients get list_changed notifications and
// stable pagination.
//
// The server learns of changes through toolkit events, which go to the
// toolkit's delegate. Wire them in one of two ways:
//
//	relay := mcp.ServerDelegate(appDelegate)          // wraps the app's delegate
//	tk, _ := toolkit.New(toolkit.WithDelegate(relay), ...)
//	srv, _ := mcpserver.New(tk, nil, mcp.WithEventRelay(relay))
//
// or call srv.OnEvent from the application's own delegate's OnEvent. A
// server that has received no event re-reads the toolkit on every list
// request (and logs a warning once), so clients still see current lists,
// but without list_changed notifications.
type Server struct {
	tk     *toolkit.Toolkit
	cfg    *config
	server *sdk.Server
	logger *slog.Logger

	syncMu sync.Mutex // serialises synchronisation

	mu        sync.Mutex // guards the tables below
	tools     *namer
	prompts   *namer
	resources *namer
	templates *namer
	regTools  map[string]registration
	regPrmpts map[string]registration
	regRes    map[string]registration
	regTmpls  map[string]registration
	// tmplRoutes resolves a URI read through a toolkit template, in the
	// order reads try them (see readTemplated).
	tmplRoutes []templateRoute
	// static holds the URI templates of WithResourceTemplate, which toolkit
	// templates never replace.
	static map[string]bool

	// synced holds, per kind, 1 + the toolkit generation of the last
	// synchronisation (0: never), so that a sync without changes is free.
	synced [4]atomic.Uint64

	events atomic.Bool // an event arrived or a relay is attached
	warned atomic.Bool
	relays []*EventRelay
}

// Kinds of item, indexes of Server.synced.
const (
	kindTool = iota
	kindPrompt
	kindResource
	kindTemplate
)

// upToDate reports whether kind was synchronised at generation gen.
func (s *Server) upToDate(kind int, gen uint64) bool { return s.synced[kind].Load() == gen+1 }

// registration is one registration with the SDK server: the toolkit key of the
// item and a fingerprint of what was registered.
type registration struct {
	key string
	fp  string
}

// New returns a server that exposes tk. impl names the server to
// clients; nil means {Name: "toolkit", Version: "v0"}. It registers the
// toolkit's current items at once.
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
	logger := cfg.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		tk:        tk,
		cfg:       cfg,
		logger:    logger,
		tools:     newNamer(false, cfg.qualify, cfg.sep),
		prompts:   newNamer(false, cfg.qualify, cfg.sep),
		resources: newNamer(true, cfg.qualify, cfg.sep),
		templates: newNamer(true, cfg.qualify, cfg.sep),
		regTools:  map[string]registration{},
		regPrmpts: map[string]registration{},
		regRes:    map[string]registration{},
		regTmpls:  map[string]registration{},
		static:    map[string]bool{},
	}
	s.server = sdk.NewServer(impl, &sdk.ServerOptions{
		Instructions:       cfg.instructions,
		Logger:             cfg.sdkLogger,
		PageSize:           cfg.pageSize,
		KeepAlive:          cfg.keepAlive,
		CompletionHandler:  s.complete,
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: s.unsubscribe,
		Capabilities: &sdk.ServerCapabilities{
			Logging:     &sdk.LoggingCapabilities{},
			Completions: &sdk.CompletionCapabilities{},
			Tools:       &sdk.ToolCapabilities{ListChanged: true},
			Prompts:     &sdk.PromptCapabilities{ListChanged: true},
			Resources:   &sdk.ResourceCapabilities{ListChanged: true, Subscribe: true},
		},
	})
	for _, t := range cfg.templates {
		if err := safely(func() { s.server.AddResourceTemplate(t.tmpl, t.handler) }); err != nil {
			return nil, fmt.Errorf("%w: resource template %q: %v", toolkit.ErrBadParameter, t.tmpl.URITemplate, err)
		}
		s.static[t.tmpl.URITemplate] = true
	}
	s.server.AddReceivingMiddleware(s.lazySync)
	for _, r := range cfg.relays {
		r.attach(s)
		s.relays = append(s.relays, r)
		s.events.Store(true)
	}
	if err := s.Sync(context.Background()); err != nil {
		s.Close()
		return nil, err
	}
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

// Close detaches the server from its event relays and closes every client
// session (stdio and HTTP alike); Run returns when its session closes.
// Stateful HTTP sessions otherwise live until the client ends them or
// WithSessionTimeout expires.
func (s *Server) Close() error {
	s.mu.Lock()
	relays := s.relays
	s.relays = nil
	s.mu.Unlock()
	for _, r := range relays {
		r.detach(s)
	}
	var errs []error
	for ss := range s.server.Sessions() {
		if err := ss.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// OnEvent applies a toolkit event: list changes re-synchronise the
// registered items (clients then get list_changed notifications) and
// resource updates are sent to the clients subscribed to the resource.
// Call it from the application delegate's OnEvent, or use ServerDelegate.
func (s *Server) OnEvent(ev toolkit.ConnectorEvent) {
	s.events.Store(true)
	ctx := context.Background()
	var err error
	switch ev.Kind {
	case toolkit.ConnectorEventToolListChanged:
		err = s.syncTools(ctx)
	case toolkit.ConnectorEventPromptListChanged:
		err = s.syncPrompts(ctx)
	case toolkit.ConnectorEventResourceListChanged:
		// The event covers resources and templates alike.
		err = errors.Join(s.syncResources(ctx), s.syncTemplates(ctx))
	case toolkit.ConnectorEventResourceUpdated:
		s.resourceUpdated(ctx, ev)
	}
	if err != nil {
		s.logger.Warn("mcp server: synchronising with the toolkit", "event", ev.Kind.String(), "namespace", ev.Namespace, "error", err)
	}
}

// Sync registers the toolkit's current tools, prompts, resources and
// resource templates with the server, adding and removing only what
// changed. Events call it for the kind that changed; call it after changes
// the toolkit does not report.
func (s *Server) Sync(ctx context.Context) error {
	return errors.Join(s.syncTools(ctx), s.syncPrompts(ctx), s.syncResources(ctx), s.syncTemplates(ctx))
}

// lazySync keeps lists current for a server that receives no events.
func (s *Server) lazySync(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if !s.events.Load() {
			var err error
			switch method {
			case "tools/list":
				err = s.syncTools(ctx)
			case "prompts/list":
				err = s.syncPrompts(ctx)
			case "resources/list":
				err = s.syncResources(ctx)
			case "resources/templates/list":
				err = s.syncTemplates(ctx)
			}
			if err != nil {
				s.logger.Warn("mcp server: synchronising with the toolkit", "error", err)
			}
			if method == "tools/list" && s.warned.CompareAndSwap(false, true) {
				s.logger.Warn("mcp server receives no toolkit events: clients get no list_changed notifications; use mcp.ServerDelegate or call Server.OnEvent from the delegate")
			}
		}
		return next(ctx, method, req)
	}
}

// safely runs f and turns a panic into an error: the SDK panics on some
// invalid registrations.
func safely(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}

// fingerprint returns a stable text form of v for change detection.
func fingerprint(key string, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return key + "\x00!" + err.Error()
	}
	return key + "\x00" + string(b)
}

// syncTools registers the toolkit's tools with the SDK server.
func (s *Server) syncTools(ctx context.Context) error {
	gen := s.tk.Generation()
	if s.upToDate(kindTool, gen) {
		return nil
	}
	resp, err := s.tk.List(ctx, toolkit.ListRequest{Type: toolkit.ListTypeTools})
	if err != nil {
		return err
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()

	items := make([]nameItem, 0, len(resp.Items))
	values := make(map[string]toolkit.Tool, len(resp.Items))
	for _, it := range resp.Items {
		t, ok := it.Value.(toolkit.Tool)
		if !ok {
			continue
		}
		key := it.Key()
		items = append(items, nameItem{Key: key, Namespace: it.Namespace, Name: it.Name})
		values[key] = t
	}
	s.mu.Lock()
	table := s.tools.assign(items)
	old := s.regTools
	s.mu.Unlock()

	next := make(map[string]registration, len(table))
	var remove []string
	type add struct {
		tool *sdk.Tool
		h    sdk.ToolHandler
	}
	var adds []add
	for name, it := range table {
		st, structured, err := sdkTool(name, values[it.Key])
		if err != nil {
			s.logger.Warn("mcp server: skipping tool", "tool", it.Key, "error", err)
			continue
		}
		reg := registration{key: it.Key, fp: fingerprint(it.Key, st)}
		next[name] = reg
		if old[name] == reg {
			continue
		}
		adds = append(adds, add{st, s.toolHandler(it.Key, structured)})
	}
	for name := range old {
		if _, ok := next[name]; !ok {
			remove = append(remove, name)
		}
	}
	if len(remove) > 0 {
		s.server.RemoveTools(remove...)
	}
	for _, a := range adds {
		if err := safely(func() { s.server.AddTool(a.tool, a.h) }); err != nil {
			s.logger.Warn("mcp server: skipping tool", "tool", a.tool.Name, "error", err)
			delete(next, a.tool.Name)
		}
	}
	s.mu.Lock()
	s.regTools = next
	s.mu.Unlock()
	s.synced[kindTool].Store(gen + 1)
	return nil
}

// sdkTool describes t for MCP under the exposed name. It refuses input
// schemas that are not objects. structured reports an output schema.
func sdkTool(name string, t toolkit.Tool) (st *sdk.Tool, structured bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: tool %q: %v", toolkit.ErrSchema, name, r)
		}
	}()
	in, err := t.InputSchema()
	if err != nil {
		return nil, false, fmt.Errorf("%w: tool %q: input schema: %v", toolkit.ErrSchema, name, err)
	}
	if in == nil {
		in = &jsonschema.Schema{Type: "object"}
	}
	if in.Type != "object" {
		return nil, false, fmt.Errorf("%w: tool %q: input schema is not an object schema (type %q)", toolkit.ErrSchema, name, in.Type)
	}
	out, err := t.OutputSchema()
	if err != nil {
		return nil, false, fmt.Errorf("%w: tool %q: output schema: %v", toolkit.ErrSchema, name, err)
	}
	meta := t.Meta()
	st = &sdk.Tool{
		Name:        name,
		Title:       meta.Title,
		Description: t.Description(),
		InputSchema: in,
		Annotations: &sdk.ToolAnnotations{
			Title:           meta.Title,
			ReadOnlyHint:    meta.ReadOnlyHint,
			DestructiveHint: meta.DestructiveHint,
			IdempotentHint:  meta.IdempotentHint,
			OpenWorldHint:   meta.OpenWorldHint,
		},
	}
	if out != nil {
		st.OutputSchema = out
	}
	// Marshal once here so that a schema the SDK cannot send is refused now
	// rather than on every tools/list.
	if _, err := json.Marshal(st); err != nil {
		return nil, false, fmt.Errorf("%w: tool %q: %v", toolkit.ErrSchema, name, err)
	}
	return st, out != nil, nil
}

// syncPrompts registers the toolkit's prompts with the SDK server.
func (s *Server) syncPrompts(ctx context.Context) error {
	gen := s.tk.Generation()
	if s.upToDate(kindPrompt, gen) {
		return nil
	}
	resp, err := s.tk.List(ctx, toolkit.ListRequest{Type: toolkit.ListTypePrompts})
	if err != nil {
		return err
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()

	items := make([]nameItem, 0, len(resp.Items))
	values := make(map[string]toolkit.Prompt, len(resp.Items))
	for _, it := range resp.Items {
		p, ok := it.Value.(toolkit.Prompt)
		if !ok {
			continue
		}
		key := it.Key()
		items = append(items, nameItem{Key: key, Namespace: it.Namespace, Name: it.Name})
		values[key] = p
	}
	s.mu.Lock()
	table := s.prompts.assign(items)
	old := s.regPrmpts
	s.mu.Unlock()

	next := make(map[string]registration, len(table))
	var adds []*sdk.Prompt
	addKeys := map[string]string{}
	for name, it := range table {
		sp, err := sdkPrompt(name, values[it.Key])
		if err != nil {
			s.logger.Warn("mcp server: skipping prompt", "prompt", it.Key, "error", err)
			continue
		}
		reg := registration{key: it.Key, fp: fingerprint(it.Key, sp)}
		next[name] = reg
		if old[name] == reg {
			continue
		}
		adds = append(adds, sp)
		addKeys[name] = it.Key
	}
	var remove []string
	for name := range old {
		if _, ok := next[name]; !ok {
			remove = append(remove, name)
		}
	}
	if len(remove) > 0 {
		s.server.RemovePrompts(remove...)
	}
	for _, p := range adds {
		if err := safely(func() { s.server.AddPrompt(p, s.promptHandler(addKeys[p.Name])) }); err != nil {
			s.logger.Warn("mcp server: skipping prompt", "prompt", p.Name, "error", err)
			delete(next, p.Name)
		}
	}
	s.mu.Lock()
	s.regPrmpts = next
	s.mu.Unlock()
	s.synced[kindPrompt].Store(gen + 1)
	return nil
}

// syncResources registers the toolkit's resources with the SDK server.
func (s *Server) syncResources(ctx context.Context) error {
	gen := s.tk.Generation()
	if s.upToDate(kindResource, gen) {
		return nil
	}
	resp, err := s.tk.List(ctx, toolkit.ListRequest{Type: toolkit.ListTypeResources})
	if err != nil {
		return err
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()

	items := make([]nameItem, 0, len(resp.Items))
	values := make(map[string]toolkit.Resource, len(resp.Items))
	for _, it := range resp.Items {
		r, ok := it.Value.(toolkit.Resource)
		if !ok {
			continue
		}
		key := it.Key()
		items = append(items, nameItem{Key: key, Namespace: it.Namespace, Name: it.URI})
		values[key] = r
	}
	s.mu.Lock()
	table := s.resources.assign(items)
	old := s.regRes
	s.mu.Unlock()

	next := make(map[string]registration, len(table))
	var adds []*sdk.Resource
	addKeys := map[string]string{}
	for uri, it := range table {
		r := values[it.Key]
		if u, err := url.Parse(uri); err != nil || u.Scheme == "" {
			s.logger.Warn("mcp server: skipping resource with an invalid URI", "resource", it.Key)
			continue
		}
		sr := &sdk.Resource{URI: uri, Name: r.Name(), Description: r.Description(), MIMEType: r.Type()}
		if sr.Name == "" {
			sr.Name = it.Name
		}
		reg := registration{key: it.Key, fp: fingerprint(it.Key, sr)}
		next[uri] = reg
		if old[uri] == reg {
			continue
		}
		adds = append(adds, sr)
		addKeys[uri] = it.Key
	}
	var remove []string
	for uri := range old {
		if _, ok := next[uri]; !ok {
			remove = append(remove, uri)
		}
	}
	if len(remove) > 0 {
		s.server.RemoveResources(remove...)
	}
	for _, r := range adds {
		if err := safely(func() { s.server.AddResource(r, s.resourceHandler(addKeys[r.URI])) }); err != nil {
			s.logger.Warn("mcp server: skipping resource", "resource", r.URI, "error", err)
			delete(next, r.URI)
		}
	}
	s.mu.Lock()
	s.regRes = next
	s.mu.Unlock()
	s.synced[kindResource].Store(gen + 1)
	return nil
}

// templateRoute is one toolkit template registered with the SDK server:
// suffix is what its exposed URI template adds to the toolkit's ("" or
// "#namespace", see names_policy.go), tmpl the toolkit's URI template.
type templateRoute struct {
	suffix string
	ns     string
	tmpl   *resource.URITemplate
}

// syncTemplates registers the toolkit's resource templates with the SDK
// server, under exposed URI templates chosen like resource URIs: a URI
// template that two sources share is exposed as "uriTemplate#namespace"
// for the later one, so a client reads "uri#namespace" from it. Every
// exposed template has the same read handler, readTemplated, which
// resolves the URI through the toolkit. A toolkit template whose exposed
// URI template is one of WithResourceTemplate is skipped with a log line;
// so is one the SDK refuses.
func (s *Server) syncTemplates(ctx context.Context) error {
	gen := s.tk.Generation()
	if s.upToDate(kindTemplate, gen) {
		return nil
	}
	resp, err := s.tk.List(ctx, toolkit.ListRequest{Type: toolkit.ListTypeTemplates})
	if err != nil {
		return err
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()

	items := make([]nameItem, 0, len(resp.Items))
	values := make(map[string]toolkit.ResourceTemplate, len(resp.Items))
	order := make(map[string]int, len(resp.Items))
	for i, it := range resp.Items {
		t, ok := it.Value.(toolkit.ResourceTemplate)
		if !ok {
			continue
		}
		key := it.Key()
		items = append(items, nameItem{Key: key, Namespace: it.Namespace, Name: it.URI})
		values[key] = t
		order[key] = i
	}
	s.mu.Lock()
	table := s.templates.assign(items)
	old := s.regTmpls
	s.mu.Unlock()

	next := make(map[string]registration, len(table))
	routes := make(map[string]templateRoute, len(table))
	var adds []*sdk.ResourceTemplate
	for exposed, it := range table {
		if s.static[exposed] {
			s.logger.Warn("mcp server: skipping resource template: WithResourceTemplate registered the same URI template", "template", it.Key)
			continue
		}
		tmpl, err := resource.ParseURITemplate(it.Name)
		suffix, found := strings.CutPrefix(exposed, it.Name)
		if err != nil || !found {
			s.logger.Warn("mcp server: skipping resource template", "template", it.Key, "error", err)
			continue
		}
		st, err := sdkTemplate(exposed, values[it.Key])
		if err != nil {
			s.logger.Warn("mcp server: skipping resource template", "template", it.Key, "error", err)
			continue
		}
		reg := registration{key: it.Key, fp: fingerprint(it.Key, st)}
		next[exposed] = reg
		routes[exposed] = templateRoute{suffix: suffix, ns: it.Namespace, tmpl: tmpl}
		if old[exposed] == reg {
			continue
		}
		adds = append(adds, st)
	}
	var remove []string
	for exposed := range old {
		if _, ok := next[exposed]; !ok {
			remove = append(remove, exposed)
		}
	}
	if len(remove) > 0 {
		s.server.RemoveResourceTemplates(remove...)
	}
	for _, t := range adds {
		if err := safely(func() { s.server.AddResourceTemplate(t, s.readTemplated) }); err != nil {
			s.logger.Warn("mcp server: skipping resource template", "template", t.URITemplate, "error", err)
			delete(next, t.URITemplate)
			delete(routes, t.URITemplate)
		}
	}
	// Qualified templates first (their suffix tells them apart), then in
	// toolkit order, as Lookup tries templates.
	list := make([]string, 0, len(routes))
	for exposed := range routes {
		list = append(list, exposed)
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := routes[list[i]], routes[list[j]]
		if len(a.suffix) != len(b.suffix) {
			return len(a.suffix) > len(b.suffix)
		}
		return order[next[list[i]].key] < order[next[list[j]].key]
	})
	ordered := make([]templateRoute, len(list))
	for i, exposed := range list {
		ordered[i] = routes[exposed]
	}
	s.mu.Lock()
	s.regTmpls = next
	s.tmplRoutes = ordered
	s.mu.Unlock()
	s.synced[kindTemplate].Store(gen + 1)
	return nil
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
func (s *Server) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	if sub := s.subscriber(ctx, req.Params.URI); sub != nil {
		return sub.Subscribe(ctx)
	}
	return nil
}

func (s *Server) unsubscribe(ctx context.Context, req *sdk.UnsubscribeRequest) error {
	if sub := s.subscriber(ctx, req.Params.URI); sub != nil {
		return sub.Unsubscribe(ctx)
	}
	return nil
}

// subscriber returns the bridge.Subscriber behind an exposed resource URI, or nil.
func (s *Server) subscriber(ctx context.Context, uri string) bridge.Subscriber {
	s.mu.Lock()
	reg, ok := s.regRes[uri]
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
	uri, ok := s.resources.exposed(ev.URI + "#" + ev.Namespace)
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
	switch kind {
	case toolkit.ListTypeTools:
		return s.tools.exposed(key)
	case toolkit.ListTypePrompts:
		return s.prompts.exposed(key)
	case toolkit.ListTypeResources:
		return s.resources.exposed(key)
	case toolkit.ListTypeTemplates:
		return s.templates.exposed(key)
	}
	return "", false
}

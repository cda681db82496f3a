package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
)

// Connector is a toolkit.Connector for one remote MCP server. Create it with
// New and start it with Run; it is safe for concurrent use.
type Connector struct {
	url    string
	ep     *endpoint
	o      options
	logger *slog.Logger
	names  naming // its namespace and the host of its result URIs (naming.go)

	link link      // how the connector reaches the server
	life lifecycle // the connector's state and its ready session (supervisor.go)
	sig  signals   // from SDK handlers and callers to the supervisor
	up   upstream  // chooses the session of each request (upstream.go)

	snap  atomic.Pointer[catalog]
	calls callRegistry // the requests in flight and their slots (inflight.go)

	subs   subscriptions // the subscriptions callers asked for (subscriptions.go)
	srv    serverSide    // what answers the server's requests and notifications
	skills skillCache    // the skills extension (skills.go)
}

// link is how a connector reaches its server: its SDK client and the
// transports it makes (transport.go).
type link struct {
	client *sdk.Client
	impl   *sdk.Implementation // how the connector names itself to servers

	httpClient *http.Client
	ownHTTP    *http.Transport // closed when Run returns; nil with OptHTTPClient
	preferSSE  atomic.Bool     // the SSE transport worked last time
	// preferStateful: a handshake asking for the stateless protocol timed out
	// (protocol.go).
	preferStateful atomic.Bool
	// scanned: the connector makes its transports itself and scans them for
	// progress and log notifications (notifications.go); false with
	// OptDialer, where the SDK's handlers deliver them.
	scanned bool
	// dials counts connection attempts.
	dials atomic.Int64
	// challenge is the WWW-Authenticate of the server's last 401 answer
	// while the connector has no OAuth (unauthorized.go).
	challenge atomic.Pointer[[]string]
}

// lifecycle is a connector's state and its ready session.
type lifecycle struct {
	running atomic.Bool

	mu      sync.Mutex
	state   toolkit.ConnectorState
	cur     *live         // the ready session, or nil
	readyCh chan struct{} // closed while ready; replaced when leaving ready
	stopped bool          // Run returned and was not started again
}

// signals carry news from SDK handlers and callers to the supervisor.
type signals struct {
	wake    chan struct{}
	kick    chan struct{} // a call started waiting for a session
	waiters atomic.Int32  // calls waiting for a session
	pending atomic.Uint32
	updMu   sync.Mutex
	updated []string              // resource URIs reported updated, not yet delivered
	reason  atomic.Pointer[error] // why the session was last suspected or lost
}

// subscriptions are the resource subscriptions callers asked for
// (SubscribeResource), by URI.
type subscriptions struct {
	mu sync.Mutex
	by map[string]int // the callers' subscriptions, by URI
	// on are the URIs subscribed to on the server (or to be, at the next
	// connection); flying the URIs whose subscription is being sent
	// (subscriptions.go).
	on     map[string]bool
	flying map[string]*subFlight

	// acks are the subscriptions waiting for their server's
	// acknowledgement (subscriptions.go).
	acksMu sync.Mutex
	acks   map[ackKey]chan struct{}
}

// serverSide answers the server's requests and rate-limits its logs.
type serverSide struct {
	// reqs answers the server's requests (requests.go); roots mirrors the
	// roots of OptRoots or OptRootSet in the SDK client (roots.go).
	reqs     serverRequests
	requests serverRequestGate // bounds the server requests waiting (requests_bound.go)
	roots    rootsMirror
	// noteLogs rate-limits the log notifications of the server.
	noteLogs *rateLimiter
}

// Signals for signals.pending.
const (
	sigTools uint32 = 1 << iota
	sigPrompts
	sigResources
	sigUpdated
	sigSuspect
	sigLost
	sigAuth // what the OAuth handler's Pending reports changed
)

var (
	_ toolkit.Connector      = (*Connector)(nil)
	_ toolkit.TemplateLister = (*Connector)(nil)
)

// New returns a connector for the MCP server at url (see the package
// documentation for the URL forms), identifying itself as clientName and
// clientVersion. Nothing is contacted before Run.
//
// A URL New cannot use, an empty clientName and each invalid option are
// reported together, in that order, each wrapping toolkit.ErrBadParameter
// (errors.Join), so a bad option never hides what is wrong with the URL.
func New(url, clientName, clientVersion string, opts ...Option) (*Connector, error) {
	o, optErr := applyOptions(opts)
	var ep *endpoint
	var urlErr, nameErr error
	if o.dialer != nil {
		if url == "" {
			urlErr = fmt.Errorf("%w: empty connector URL", errs.ErrBadParameter)
		}
		ep = &endpoint{kind: -1, display: url}
	} else {
		ep, urlErr = parseEndpoint(url)
	}
	if clientName == "" {
		nameErr = fmt.Errorf("%w: connector %q: empty client name", errs.ErrBadParameter, toolkit.RedactURL(url))
	}
	if err := errors.Join(urlErr, nameErr, optErr); err != nil {
		return nil, err
	}
	c := &Connector{
		url:  url,
		ep:   ep,
		o:    o,
		life: lifecycle{readyCh: make(chan struct{})},
		sig:  signals{wake: make(chan struct{}, 1), kick: make(chan struct{}, 1)},
		srv:  serverSide{noteLogs: newLogLimiter()},
	}
	if o.maxConcurrency > 0 {
		c.calls.slots = make(chan struct{}, o.maxConcurrency)
	}
	c.link.scanned = o.dialer == nil
	// Every log line of the connector goes through toolkit.RedactHandler.
	if o.namespace != "" {
		c.names.ns.Store(&o.namespace)
	}
	c.logger = c.namedLogger(toolkit.RedactLogger(o.logger))
	c.link.httpClient = o.httpClient
	if c.link.httpClient == nil {
		c.link.ownHTTP = http.DefaultTransport.(*http.Transport).Clone()
		c.link.httpClient = &http.Client{Transport: c.link.ownHTTP}
	}
	c.life.state = toolkit.ConnectorState{URL: ep.display, Status: toolkit.StatusConnecting}
	c.snap.Store(&catalog{})
	c.link.impl = &sdk.Implementation{Name: clientName, Version: clientVersion}
	copts := &sdk.ClientOptions{
		Logger:                      c.logger,
		Capabilities:                &sdk.ClientCapabilities{Extensions: c.clientExtensions(nil)},
		ToolListChangedHandler:      func(context.Context, *sdk.ToolListChangedRequest) { c.signal(sigTools) },
		PromptListChangedHandler:    func(context.Context, *sdk.PromptListChangedRequest) { c.signal(sigPrompts) },
		ResourceListChangedHandler:  func(context.Context, *sdk.ResourceListChangedRequest) { c.signal(sigResources) },
		ResourceUpdatedHandler:      c.handleResourceUpdated,
		LoggingMessageHandler:       c.handleLog,
		ProgressNotificationHandler: c.handleProgress,
		// The connector runs the rounds itself (roundTrips).
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
	}
	c.setupServerRequests(copts)
	c.link.client = sdk.NewClient(c.link.impl, copts)
	addSkillMethods(c.link.client)
	c.link.client.AddReceivingMiddleware(c.receiving)
	c.link.client.AddSendingMiddleware(c.roundTrips)
	c.initRoots()
	c.up = newUpstream(c)
	return c, nil
}

// URL returns the URL the connector was created with.
func (c *Connector) URL() string { return c.url }

// State returns the connector's current state.
func (c *Connector) State() toolkit.ConnectorState {
	c.life.mu.Lock()
	defer c.life.mu.Unlock()
	return c.life.state
}

// ListTools returns the server's tools as last listed. It does no I/O.
func (c *Connector) ListTools(ctx context.Context) ([]toolkit.Tool, error) {
	return slices.Clone(c.snap.Load().tools), nil
}

// ListPrompts returns the server's prompts as last listed. It does no I/O.
func (c *Connector) ListPrompts(ctx context.Context) ([]toolkit.Prompt, error) {
	return slices.Clone(c.snap.Load().prompts), nil
}

// ListResources returns the server's resources as last listed. It does no
// I/O.
func (c *Connector) ListResources(ctx context.Context) ([]toolkit.Resource, error) {
	return slices.Clone(c.snap.Load().resources), nil
}

// ListResourceTemplates returns the server's resource templates as last
// listed (resources/templates/list, refreshed with the resources on
// resources/list_changed). It does no I/O. It makes the connector a
// toolkit.TemplateLister.
func (c *Connector) ListResourceTemplates(ctx context.Context) ([]toolkit.ResourceTemplate, error) {
	return slices.Clone(c.snap.Load().templates), nil
}

// signal wakes the supervisor with the given signal bits.
func (c *Connector) signal(bits uint32) {
	for {
		old := c.sig.pending.Load()
		if c.sig.pending.CompareAndSwap(old, old|bits) {
			break
		}
	}
	select {
	case c.sig.wake <- struct{}{}:
	default:
	}
}

// suspectCurrent asks the supervisor to check the current session.
func (c *Connector) suspectCurrent(reason error) {
	c.setReason(reason)
	c.signal(sigSuspect)
}

// lost tells the supervisor that the session l is gone; callers wait for
// the next session at once.
func (c *Connector) lost(l *live, reason error) {
	if c.up.lose(l) {
		return
	}
	c.life.mu.Lock()
	current := c.life.cur == l
	if current {
		c.leaveReadyLocked()
	}
	c.life.mu.Unlock()
	if current {
		c.setReason(reason)
		c.signal(sigLost)
	}
}

func (c *Connector) setReason(err error) { c.sig.reason.Store(&err) }

func (c *Connector) lastReason() error {
	if p := c.sig.reason.Load(); p != nil && *p != nil {
		return *p
	}
	return errors.New("connection suspected lost")
}

func (c *Connector) handleResourceUpdated(ctx context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
	if c.o.onResourceUpdated == nil || req.Params == nil {
		return
	}
	c.sig.updMu.Lock()
	if len(c.sig.updated) < maxPendingUpdates && !slices.Contains(c.sig.updated, req.Params.URI) {
		c.sig.updated = append(c.sig.updated, req.Params.URI)
	}
	c.sig.updMu.Unlock()
	c.signal(sigUpdated)
}

// maxPendingUpdates bounds the resource updates queued between two turns of
// the supervisor; repeats of a queued URI are merged.
const maxPendingUpdates = 1024

// serverName names the server in errors: the connector's namespace once
// known, else the server's own name once known, else the connector's URL
// without secrets.
func (c *Connector) serverName() string {
	if p := c.names.ns.Load(); p != nil {
		return *p
	}
	c.life.mu.Lock()
	defer c.life.mu.Unlock()
	if c.life.state.Name != "" {
		return c.life.state.Name
	}
	return c.ep.display
}

// setState updates the state under the lock and returns a copy for the
// callback.
func (c *Connector) setState(f func(s *toolkit.ConnectorState)) toolkit.ConnectorState {
	c.life.mu.Lock()
	defer c.life.mu.Unlock()
	f(&c.life.state)
	return c.life.state
}

// changeState is setState that also reports whether the state changed.
func (c *Connector) changeState(f func(s *toolkit.ConnectorState)) (toolkit.ConnectorState, bool) {
	c.life.mu.Lock()
	defer c.life.mu.Unlock()
	prev := c.life.state
	f(&c.life.state)
	return c.life.state, c.life.state != prev
}

// report hands a state to the state callback.
func (c *Connector) report(ctx context.Context, s toolkit.ConnectorState) {
	c.logger.Debug("connector state", "status", s.Status, "error", s.LastError)
	if c.o.onState != nil {
		c.o.onState(ctx, &s)
	}
}

package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/oauth"
)

// Protocol versions a connector may ask for.
const (
	// DefaultProtocolVersion is the protocol version the connector asks for
	// unless told otherwise: the newest, StatelessProtocolVersion. A server
	// that does not speak it is spoken to in the newest version it does
	// (the guide docs/connectors.md, "Protocol versions").
	DefaultProtocolVersion = StatelessProtocolVersion
	// StatelessProtocolVersion is the stateless protocol version
	// (server/discover, no session, multi round-trip requests); see the
	// guide docs/connectors.md for how session loss is detected with it.
	StatelessProtocolVersion = "2026-07-28"
	// StatefulProtocolVersion is the newest protocol version of the
	// initialize handshake and its session, the one a server that does not
	// speak StatelessProtocolVersion is asked for.
	StatefulProtocolVersion = "2025-11-25"
)

// Defaults of the connector's options.
const (
	DefaultConnectTimeout   = 30 * time.Second
	DefaultReconnectWait    = 10 * time.Second
	DefaultBackoffMin       = 250 * time.Millisecond
	DefaultBackoffMax       = 30 * time.Second
	DefaultStableAfter      = 10 * time.Second
	DefaultTerminateTimeout = 2 * time.Second
	DefaultMaxMessageBytes  = 16 << 20
	DefaultMaxListItems     = 100_000  // Limits.MaxListItems
	DefaultMaxListBytes     = 64 << 20 // Limits.MaxListBytes
	DefaultLogLevel         = "info"
)

// Option configures a Connector in New, or every connector of a Delegate
// in NewDelegate. An option given an invalid value makes New (or
// NewDelegate) fail with an error that wraps toolkit.ErrBadParameter and
// names the option.
type Option func(*options) error

type options struct {
	namespace          string
	onState            func(context.Context, *toolkit.ConnectorState)
	onTools            func(context.Context)
	onPrompts          func(context.Context)
	onResources        func(context.Context)
	onResourceUpdated  func(context.Context, string)
	connectTimeout     time.Duration
	callTimeout        time.Duration
	reconnectWait      time.Duration
	backoffMin         time.Duration
	backoffMax         time.Duration
	stableAfter        time.Duration
	maxAttempts        int
	terminateTimeout   time.Duration
	maxMessage         int
	maxConcurrency     int
	maxResult          int64
	header             http.Header
	httpClient         *http.Client
	logger             *slog.Logger
	protocolVersion    string
	protocolAsked      bool // OptProtocolVersion was given
	logLevel           string
	subscribeResources bool
	forwardRequests    bool
	sampling           SamplingFunc    // ServerRequests.Sampling
	elicitation        ElicitationFunc // ServerRequests.Elicitation
	roots              *RootSet        // OptRoots, OptRootSet
	extensions         map[string]any  // OptExtensions
	dialer             func(context.Context) (sdk.Transport, error)
	oauth              *oauthSetup         // OptOAuth and its kin (oauth.go)
	oauthAllow         *oauth.AllowList    // OptOAuthAllow
	perClient          int                 // OptPerClient: the most client sessions; 0 without it
	clientLimits       ClientSessionLimits // ClientSessionLimits
	perUser            UserFlow            // OptOAuthPerUser (peruser.go)
	userWait           time.Duration       // Timeouts.UserAuthorization

	// hooks are the seams of tests (testhooks.go); zero in production.
	hooks testHooks

	// maxItems is the most items of one kind kept from a server, and
	// maxListBytes the most bytes of their definitions (Limits.MaxListItems,
	// Limits.MaxListBytes; tests set them lower still).
	maxItems, maxListBytes int
}

// applyOptions returns the default options with opts applied in order
// (nil ones skipped), and the errors of the invalid ones joined.
func applyOptions(opts []Option) (options, error) {
	o := defaultOptions()
	var bad []error
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&o); err != nil {
			bad = append(bad, err)
		}
	}
	return o, errors.Join(bad...)
}

func defaultOptions() options {
	return options{
		connectTimeout:   DefaultConnectTimeout,
		reconnectWait:    DefaultReconnectWait,
		backoffMin:       DefaultBackoffMin,
		backoffMax:       DefaultBackoffMax,
		stableAfter:      DefaultStableAfter,
		terminateTimeout: DefaultTerminateTimeout,
		maxMessage:       DefaultMaxMessageBytes,
		protocolVersion:  DefaultProtocolVersion,
		logLevel:         DefaultLogLevel,
		hooks:            testHooks{kickFloor: time.Second},
		maxItems:         DefaultMaxListItems,
		maxListBytes:     DefaultMaxListBytes,
	}
}

// OptOnStateChange sets the function called, from the supervising
// goroutine and in order, with the connector's full state each time it
// changes.
func OptOnStateChange(f func(ctx context.Context, state *toolkit.ConnectorState)) Option {
	return func(o *options) error { o.onState = f; return nil }
}

// OptOnToolListChanged sets the function called when the server's tool list
// really changed (after a list_changed notification or a reconnection).
func OptOnToolListChanged(f func(ctx context.Context)) Option {
	return func(o *options) error { o.onTools = f; return nil }
}

// OptOnPromptListChanged sets the function called when the server's prompt
// list really changed.
func OptOnPromptListChanged(f func(ctx context.Context)) Option {
	return func(o *options) error { o.onPrompts = f; return nil }
}

// OptOnResourceListChanged sets the function called when the server's
// resource list really changed.
func OptOnResourceListChanged(f func(ctx context.Context)) Option {
	return func(o *options) error { o.onResources = f; return nil }
}

// OptOnResourceUpdated sets the function called with the URI of a resource
// the server reports as updated. Servers report updates of subscribed
// resources only; see OptSubscribeResources.
func OptOnResourceUpdated(f func(ctx context.Context, uri string)) Option {
	return func(o *options) error { o.onResourceUpdated = f; return nil }
}

// OptSubscribeResources makes the connector subscribe to every listed
// resource when the server supports subscriptions.
func OptSubscribeResources() Option {
	return func(o *options) error { o.subscribeResources = true; return nil }
}

// ServerRequests says how the connector answers the requests a server
// sends while one of its tools runs: sampling (a model call), elicitation
// (a question to the user) and roots/list. Zero fields leave their setting
// as it is: none, unless an earlier OptServerRequests set it.
type ServerRequests struct {
	// Forward makes the connector pass those requests to the caller: the
	// toolkit.Session of the call, when it implements
	// [bridge.ServerRequestHandler] (sampling, elicitation) or
	// [bridge.RootsLister] (roots). The sessions of an mcpserver.Server's
	// clients do, by passing the request on to their MCP client, so a
	// gateway is transparent to both. The connector then tells servers it
	// supports sampling, elicitation and roots even when it has no
	// handler of its own (Sampling, Elicitation, OptRoots), which answer
	// when the caller cannot.
	//
	// A caller's session that implements those interfaces answers first
	// whenever the connector advertises the capability: with Forward, or
	// with a handler of its own. The guide docs/connectors.md tells how a
	// request is tied to its call.
	Forward bool
	// Sampling answers the server's sampling requests
	// (sampling/createMessage) when the caller's session does not:
	// typically the application's own model. The connector then
	// advertises sampling. Without it (and without Forward), a sampling
	// request is refused with a JSON-RPC error and an info log line says
	// how to answer such requests.
	Sampling SamplingFunc
	// Elicitation answers the server's elicitation requests
	// (elicitation/create) when the caller's session does not: typically
	// the application's user interface. The connector then advertises
	// elicitation, and the SDK checks the request's schema and the
	// answer's content. Without it (and without Forward), an elicitation
	// request is refused like an unanswered sampling request.
	Elicitation ElicitationFunc
}

// OptServerRequests sets how the connector answers the requests of its
// server (see ServerRequests).
func OptServerRequests(r ServerRequests) Option {
	return func(o *options) error {
		o.forwardRequests = o.forwardRequests || r.Forward
		if r.Sampling != nil {
			o.sampling = r.Sampling
		}
		if r.Elicitation != nil {
			o.elicitation = r.Elicitation
		}
		return nil
	}
}

// OptRoots gives the connector roots of its own: the directories and files
// (file:// URIs) it offers the server, which asks for them with
// roots/list. The connector advertises the roots capability with
// listChanged, and [Connector.SetRoots] replaces them at run time, telling
// the server with notifications/roots/list_changed. OptRoots with no
// roots offers an empty list that SetRoots may fill later. A caller whose
// session implements [bridge.RootsLister] answers for its own calls first.
// See OptRootSet for roots shared by many connectors.
func OptRoots(roots ...*sdk.Root) Option {
	return func(o *options) error {
		rs, err := newRootSet("OptRoots", roots)
		if err != nil {
			return err
		}
		o.roots = rs
		return nil
	}
}

// OptRootSet makes the connector offer the roots of rs, a set the
// application may share between connectors (give it to every connector
// through [Delegate] options, say): [RootSet.Set] replaces the roots of
// every connector using it, and each tells its server. Otherwise as
// OptRoots.
func OptRootSet(rs *RootSet) Option {
	return func(o *options) error {
		o.roots = rs
		return errs.Given("OptRootSet", rs != nil, "root set")
	}
}

// OptExtensions makes the connector declare extensions to its server
// (SEP-1724 capabilities.extensions): ext maps each extension id
// ("{vendor-prefix}/{extension-name}", such as
// "io.modelcontextprotocol/ui") to its settings object (nil: {}). A
// server that offers what an extension adds only to clients that declare
// it (an MCP Apps server's UI tools) then offers it to the connector. The
// connector keeps a copy. An upstream session opened for one client
// (OptPerClient) declares these and that client's own, the client's
// settings winning; the shared session declares these alone: it never
// speaks for a client, as one client's declaration says nothing of the
// others': give it to a shared connector only when every client of the
// gateway can use what the extension brings. The server's extensions are
// in the connector's state (toolkit.ConnectorState.Extensions), bounded
// like a `_meta`.
func OptExtensions(ext map[string]any) Option {
	return func(o *options) error {
		e, err := toolkit.NewExtensions(ext)
		if err == nil {
			o.extensions, err = e.Map()
		}
		if err != nil {
			return fmt.Errorf("OptExtensions: %w", err)
		}
		return nil
	}
}

// Timeouts bound the connector's waits. A zero field leaves its setting
// as it is: the default, unless an earlier OptTimeouts set it.
type Timeouts struct {
	// Connect bounds one connection attempt: the handshake and the
	// listing of every item (default DefaultConnectTimeout).
	Connect time.Duration
	// Call bounds every remote request made for a caller (tool calls,
	// prompt renders, resource reads), including any wait for a slot
	// (Limits.MaxConcurrency); by default only the caller's context
	// bounds them.
	Call time.Duration
	// Terminate is how long a stdio server is given to exit after its
	// stdin is closed, and again after SIGTERM, before it is killed
	// (default DefaultTerminateTimeout).
	Terminate time.Duration
	// UserAuthorization bounds how long a call of a connector made with
	// OptOAuthPerUser waits for its user to authorize access through URL
	// elicitation (default DefaultUserAuthorizationWait); beyond, it
	// fails with an error wrapping ErrAuthorizationPending, and the
	// authorization goes on (a later call finds the token).
	UserAuthorization time.Duration
}

// OptTimeouts sets the connector's timeouts (see Timeouts); a negative
// field is an error naming it.
func OptTimeouts(t Timeouts) Option {
	return func(o *options) error {
		if err := errors.Join(
			errs.AtLeast("OptTimeouts: Connect", t.Connect, 0),
			errs.AtLeast("OptTimeouts: Call", t.Call, 0),
			errs.AtLeast("OptTimeouts: Terminate", t.Terminate, 0),
			errs.AtLeast("OptTimeouts: UserAuthorization", t.UserAuthorization, 0),
		); err != nil {
			return err
		}
		setNonZero(&o.connectTimeout, t.Connect)
		setNonZero(&o.callTimeout, t.Call)
		setNonZero(&o.terminateTimeout, t.Terminate)
		setNonZero(&o.userWait, t.UserAuthorization)
		return nil
	}
}

// Reconnect says how the connector reconnects, and how long calls wait
// for it. A zero field leaves its setting as it is: the default, unless an
// earlier OptReconnect set it.
type Reconnect struct {
	// Wait bounds how long a call made while the connector is not ready
	// waits for it before failing with toolkit.ErrUnavailable (default
	// DefaultReconnectWait); negative: such a call fails at once.
	Wait time.Duration
	// BackoffMin is the delay before the second reconnection attempt
	// (default DefaultBackoffMin), BackoffMax the cap of the delays
	// (default DefaultBackoffMax); each further attempt doubles the delay,
	// and a random part of up to half of it is taken off (jitter).
	BackoffMin, BackoffMax time.Duration
	// StableAfter is how long a connection must stay up before the
	// backoff starts again from the beginning (default
	// DefaultStableAfter). A server that accepts connections and drops
	// them at once is thus retried with growing delays.
	StableAfter time.Duration
	// MaxAttempts makes the connector give up (state Failed, Run returns
	// an error) after this many consecutive failed connection attempts;
	// by default it retries forever.
	MaxAttempts int
}

// OptReconnect sets how the connector reconnects (see Reconnect). A
// negative field (but Wait), or a BackoffMax below BackoffMin, is an error
// naming it.
func OptReconnect(r Reconnect) Option {
	return func(o *options) error {
		if err := errors.Join(
			errs.AtLeast("OptReconnect: BackoffMin", r.BackoffMin, 0),
			errs.AtLeast("OptReconnect: BackoffMax", r.BackoffMax, 0),
			errs.AtLeast("OptReconnect: StableAfter", r.StableAfter, 0),
			errs.AtLeast("OptReconnect: MaxAttempts", r.MaxAttempts, 0),
		); err != nil {
			return err
		}
		if r.Wait < 0 {
			o.reconnectWait = 0
		}
		setNonZero(&o.reconnectWait, max(r.Wait, 0))
		setNonZero(&o.backoffMin, r.BackoffMin)
		setNonZero(&o.backoffMax, r.BackoffMax)
		setNonZero(&o.stableAfter, r.StableAfter)
		setNonZero(&o.maxAttempts, r.MaxAttempts)
		return errs.AtLeast("OptReconnect: BackoffMax", o.backoffMax, o.backoffMin)
	}
}

// Limits bound what the connector takes from its server and how much it
// asks of it at once. A zero field leaves its setting as it is: the
// default, unless an earlier OptLimits set it.
type Limits struct {
	// MaxMessageBytes bounds one message from the server: a stdio line,
	// a server-sent event or a JSON response body (default
	// DefaultMaxMessageBytes). A larger message breaks the request or the
	// session.
	MaxMessageBytes int
	// MaxConcurrency bounds the requests made for callers (tool calls,
	// prompt renders, resource reads) in flight on the connector at once;
	// further callers wait for a slot, bounded by their context and
	// Timeouts.Call, and one that gives up never sends its request. By
	// default there is no limit.
	MaxConcurrency int
	// MaxResultBytes bounds the size of a tool result, a rendered prompt
	// or a resource read: the length of its texts and bytes, plus the
	// JSON of a tool's structured content. A larger result is not handed
	// on: the call fails with an error wrapping toolkit.ErrToolFailed that
	// names the limit. By default there is no limit (MaxMessageBytes still
	// bounds every message).
	MaxResultBytes int64
	// MaxListItems bounds the items of one kind (tools, prompts,
	// resources, resource templates) a connector takes from its server:
	// it stops paging once the server has sent that many, the ones it
	// skips included, and keeps the first, with one warning. It is 1 to
	// DefaultMaxListItems, the default.
	MaxListItems int
	// MaxListBytes bounds the definitions of one kind of item a connector
	// keeps from its server, measured as their JSON (names, descriptions,
	// schemas): it stops paging before the item that would pass it, and
	// keeps those before it, with one warning. A tool's schemas are kept
	// as the compact JSON the server sent, shared by every tool with the
	// same schema, and decoded when asked for: what the connector holds of
	// a listing is about 2 to 5 times the bytes of the answers that
	// brought it, 10 at most whatever their shape (schemas of thousands of
	// empty subschemas, the smallest tools a server can list), so it
	// bounds a connector's memory for its server's items. It is 1024 to
	// DefaultMaxListBytes, the default.
	MaxListBytes int64
}

// OptLimits sets the connector's limits (see Limits); a field out of its
// range is an error naming it.
func OptLimits(l Limits) Option {
	return func(o *options) error {
		var items, bytes error
		if l.MaxListItems != 0 && (l.MaxListItems < 1 || l.MaxListItems > DefaultMaxListItems) {
			items = errs.Option("OptLimits: MaxListItems", l.MaxListItems, fmt.Sprintf("want 1 to %d", DefaultMaxListItems))
		}
		if l.MaxListBytes != 0 && (l.MaxListBytes < 1024 || l.MaxListBytes > DefaultMaxListBytes) {
			bytes = errs.Option("OptLimits: MaxListBytes", l.MaxListBytes, fmt.Sprintf("want 1024 to %d", DefaultMaxListBytes))
		}
		if err := errors.Join(
			errs.AtLeast("OptLimits: MaxMessageBytes", l.MaxMessageBytes, 0),
			errs.AtLeast("OptLimits: MaxConcurrency", l.MaxConcurrency, 0),
			errs.AtLeast("OptLimits: MaxResultBytes", l.MaxResultBytes, 0),
			items, bytes,
		); err != nil {
			return err
		}
		setNonZero(&o.maxMessage, l.MaxMessageBytes)
		setNonZero(&o.maxConcurrency, l.MaxConcurrency)
		setNonZero(&o.maxResult, l.MaxResultBytes)
		setNonZero(&o.maxItems, l.MaxListItems)
		setNonZero(&o.maxListBytes, int(l.MaxListBytes))
		return nil
	}
}

// setNonZero sets *dst to v unless v is zero.
func setNonZero[T comparable](dst *T, v T) {
	var zero T
	if v != zero {
		*dst = v
	}
}

// OptHeader adds an HTTP header to every request (for example
// Authorization). It may be given several times.
func OptHeader(key, value string) Option {
	return func(o *options) error {
		if key == "" {
			return fmt.Errorf("%w: empty header name", errs.ErrBadParameter)
		}
		if o.header == nil {
			o.header = http.Header{}
		}
		o.header.Add(key, value)
		return nil
	}
}

// OptHTTPClient sets the HTTP client. Its Timeout, if any, also bounds the
// long-lived event streams, so leave it zero. By default each connector has
// a client of its own, whose idle connections are closed when Run returns.
func OptHTTPClient(c *http.Client) Option {
	return func(o *options) error {
		o.httpClient = c
		return errs.Given("OptHTTPClient", c != nil, "HTTP client")
	}
}

// OptLogger sets the connector's logger (default slog.Default()).
func OptLogger(l *slog.Logger) Option {
	return func(o *options) error { o.logger = l; return nil }
}

// OptProtocolVersion sets the MCP protocol version the connector asks for
// (default DefaultProtocolVersion; StatefulProtocolVersion with OptOAuth
// and its kin, whose authorization waiting for the user would race the
// go-sdk client's fallback to initialize). From
// StatelessProtocolVersion on the connector sends server/discover first
// and falls back to the initialize handshake; an older version goes
// straight to initialize. The server may negotiate an older one.
func OptProtocolVersion(v string) Option {
	return func(o *options) error {
		switch v {
		case "2024-11-05", "2025-03-26", "2025-06-18", StatefulProtocolVersion, StatelessProtocolVersion:
			o.protocolVersion, o.protocolAsked = v, true
			return nil
		}
		return fmt.Errorf("%w: unsupported MCP protocol version %q", errs.ErrBadParameter, v)
	}
}

// OptLogLevel sets the level of the log messages asked from servers that
// support logging ("debug", "info", "notice", "warning", "error",
// "critical", "alert" or "emergency"; default DefaultLogLevel); "" asks for
// none.
func OptLogLevel(level string) Option {
	return func(o *options) error {
		switch level {
		case "", "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency":
			o.logLevel = level
			return nil
		}
		return fmt.Errorf("%w: unknown log level %q", errs.ErrBadParameter, level)
	}
}

// OptDialer replaces the transport the URL selects: dial is called for each
// connection attempt and returns a fresh transport (for example one end of
// sdk.NewInMemoryTransports). The URL then only names the connector.
func OptDialer(dial func(ctx context.Context) (sdk.Transport, error)) Option {
	return func(o *options) error {
		o.dialer = dial
		return errs.Given("OptDialer", dial != nil, "dialer")
	}
}

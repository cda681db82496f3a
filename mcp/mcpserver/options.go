package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
)

// Option configures a Server (New, Serve). An option given an invalid
// value makes New fail with an error wrapping toolkit.ErrBadParameter that
// names the option.
type Option func(*config) error

// HTTPOption configures the HTTP face of a Server (Handler, SSEHandler,
// ServeListener, ServeHTTP, or WithHTTP for New and Serve). An option given
// an invalid value makes the function it is given to fail with an error
// that wraps toolkit.ErrBadParameter and names the option.
type HTTPOption func(*httpConfig) error

type staticTemplate struct {
	tmpl    *sdk.ResourceTemplate
	handler sdk.ResourceHandler
}

type config struct {
	logger       *slog.Logger
	sdkLogger    *slog.Logger
	loggerName   string
	instructions string
	pageSize     int
	keepAlive    time.Duration
	qualify      bool
	gateway      gatewayConfig // options_gateway.go
	sep          string
	completion   func(context.Context, *sdk.CompleteRequest) (*sdk.CompleteResult, error)
	templates    []staticTemplate
	http         []HTTPOption
	sessions     sessionConfig   // options_sessions.go
	search       *ToolSearch     // options_toolsearch.go
	inputKeys    [][]byte        // options_inputstate.go
	replays      ReplaySet       // options_inputstate.go
	extensions   map[string]any  // options_gateway.go
	namespaces   map[string]bool // namespaces.go; nil: all
}

// httpConfig is what HTTPOptions set.
type httpConfig struct {
	stateless      bool
	jsonResponse   bool
	verifier       auth.TokenVerifier
	authOpts       *auth.RequireBearerTokenOptions
	prm            *oauthex.ProtectedResourceMetadata // auth.go
	prmURL         string
	origins        []string
	hosts          []string
	maxBody        int64
	sessionTimeout time.Duration
	noRebinding    bool
	path           string
	eventStore     sdk.EventStore
	sse            sseConfig     // options_sessions.go
	ceilings       ceilingConfig // options_ceilings.go
}

// WithLogger sets the server's logger (the default discards everything).
// The server's own diagnostics (skipped items, failed notifications) keep
// their level; the protocol-level records of the underlying go-sdk server
// and HTTP handler are logged at debug level with component=go-sdk.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		c.logger = l
		c.sdkLogger = nil
		if l != nil {
			c.sdkLogger = slog.New(debugHandler{toolkit.RedactHandler(l.Handler())}).With("component", "go-sdk")
		}
		return nil
	}
}

// debugHandler logs every record at debug level: what the go-sdk calls
// info is protocol detail to an application.
type debugHandler struct{ h slog.Handler }

func (d debugHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	return d.h.Enabled(ctx, slog.LevelDebug)
}

func (d debugHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return d.h.Handle(ctx, r)
}

func (d debugHandler) WithAttrs(as []slog.Attr) slog.Handler { return debugHandler{d.h.WithAttrs(as)} }
func (d debugHandler) WithGroup(name string) slog.Handler    { return debugHandler{d.h.WithGroup(name)} }

// WithLoggerName sets the "logger" field of the log notifications tools
// send through their session's Logger.
func WithLoggerName(name string) Option {
	return func(c *config) error { c.loggerName = name; return nil }
}

// WithInstructions sets the instructions sent to clients on initialization.
func WithInstructions(s string) Option {
	return func(c *config) error { c.instructions = s; return nil }
}

// WithPageSize sets the page size of list results (default
// sdk.DefaultPageSize).
func WithPageSize(n int) Option {
	return func(c *config) error { c.pageSize = n; return errs.AtLeast("WithPageSize", n, 0) }
}

// WithKeepAlive makes the server ping each client at the given interval and
// close sessions that stop answering.
func WithKeepAlive(d time.Duration) Option {
	return func(c *config) error { c.keepAlive = d; return nil }
}

// WithQualifiedNames exposes every item under its qualified name
// (namespace, separator, name; "uri#namespace" for resources), even when
// its bare name is unique.
func WithQualifiedNames() Option {
	return func(c *config) error { c.qualify = true; return nil }
}

// WithNameSeparator sets the separator of qualified tool and prompt names:
// "_" (the default; safe for every model API), "." or "-".
func WithNameSeparator(sep string) Option {
	return func(c *config) error {
		switch sep {
		case "_", ".", "-":
			c.sep = sep
			return nil
		}
		return fmt.Errorf("%w: WithNameSeparator(%q): want \"_\", \".\" or \"-\"", toolkit.ErrBadParameter, sep)
	}
}

// WithCompletion sets a hook for completion/complete. It runs first; when it
// returns a nil result and no error, the server completes the arguments of
// a prompt or template whose item is a [bridge.Completer] with the item's
// answer (an upstream server's, in a gateway), and other prompt arguments
// from the enum values of the prompt's input schema.
func WithCompletion(h func(context.Context, *sdk.CompleteRequest) (*sdk.CompleteResult, error)) Option {
	return func(c *config) error { c.completion = h; return nil }
}

// WithResourceTemplate registers a resource template directly with the
// server, outside the toolkit: reads of URIs that match it go to handler.
// The toolkit's own templates (toolkit.WithResourceTemplate, and those of
// connectors) are served without it; this option is for templates an
// application serves over MCP only. It wins over a toolkit template with
// the same URI template, which is then not exposed.
func WithResourceTemplate(t *sdk.ResourceTemplate, handler sdk.ResourceHandler) Option {
	return func(c *config) error {
		c.templates = append(c.templates, staticTemplate{t, handler})
		return errs.Given("WithResourceTemplate", t != nil && handler != nil, "template or handler")
	}
}

// WithStateless makes the HTTP handler stateless: no Mcp-Session-Id, a
// temporary session per request, no server-to-client requests (sampling,
// elicitation) and no standalone notification stream. Stateless servers
// can run behind any load balancer.
func WithStateless() HTTPOption {
	return func(c *httpConfig) error { c.stateless = true; return nil }
}

// WithJSONResponse makes the HTTP handler answer with application/json
// instead of an event stream (notifications sent during a request are then
// dropped).
func WithJSONResponse() HTTPOption {
	return func(c *httpConfig) error { c.jsonResponse = true; return nil }
}

// WithBearerAuth requires a bearer token on every HTTP request, checked by
// verifier (see the go-sdk auth package). Requests without a valid token get
// 401. opts may be nil. A token whose TokenInfo names its issuer
// (Extra["iss"], as [github.com/llmkit/toolkit/mcp/oauth.JWTVerifier]
// does) is an identity provider's: the connectors that act as each user
// may exchange it upstream (see
// [github.com/llmkit/toolkit/mcp/bridge.CallCredentials]); any other is
// never handed to them.
func WithBearerAuth(verifier auth.TokenVerifier, opts *auth.RequireBearerTokenOptions) HTTPOption {
	return func(c *httpConfig) error {
		c.verifier, c.authOpts = verifier, opts
		return errs.Given("WithBearerAuth", verifier != nil, "token verifier")
	}
}

// WithAllowedOrigins lists the browser origins ("https://app.example.com")
// allowed besides the server's own. A request whose Origin header is neither
// is refused with 403.
func WithAllowedOrigins(origins ...string) HTTPOption {
	return func(c *httpConfig) error { c.origins = append(c.origins, origins...); return nil }
}

// WithAllowedHosts restricts the Host header of HTTP requests to the given
// host names (with or without port). Without it, only servers reached on a
// loopback address check the Host header (it must then be a loopback name).
func WithAllowedHosts(hosts ...string) HTTPOption {
	return func(c *httpConfig) error { c.hosts = append(c.hosts, hosts...); return nil }
}

// WithMaxBodyBytes limits the size of HTTP request bodies (default
// sdk.DefaultMaxRequestBodyBytes, 4 MiB). Larger requests get 413.
func WithMaxBodyBytes(n int64) HTTPOption {
	return func(c *httpConfig) error { c.maxBody = n; return errs.Above("WithMaxBodyBytes", n, 0) }
}

// WithSessionTimeout closes stateful HTTP sessions that get no request for
// d (DefaultSessionTimeout when not set or 0; a negative d keeps idle
// sessions until the client ends them).
func WithSessionTimeout(d time.Duration) HTTPOption {
	return func(c *httpConfig) error { c.sessionTimeout = d; return nil }
}

// WithoutRebindingProtection turns off the Host and Origin checks. Only for
// servers behind a proxy that does them.
func WithoutRebindingProtection() HTTPOption {
	return func(c *httpConfig) error { c.noRebinding = true; return nil }
}

// WithPath sets the URL path Serve mounts the MCP endpoint at (default
// "/mcp").
func WithPath(p string) HTTPOption {
	return func(c *httpConfig) error {
		if err := checkPath("WithPath", p); err != nil {
			return err
		}
		c.path = p
		return nil
	}
}

// WithEventStore keeps the events of stateful HTTP streams in store so that
// a client that lost a stream can resume it (Last-Event-ID).
func WithEventStore(store sdk.EventStore) HTTPOption {
	return func(c *httpConfig) error { c.eventStore = store; return nil }
}

// WithHTTP sets the HTTP options that Handler, ServeListener and Serve
// start from; the options given to Handler and ServeListener add to them
// and win. Serving over stdio ignores them.
func WithHTTP(opts ...HTTPOption) Option {
	return func(c *config) error {
		var h httpConfig
		if err := h.apply(opts); err != nil {
			return err
		}
		c.http = append(c.http, opts...)
		return nil
	}
}

// apply applies opts in order, skipping nil ones.
func (c *httpConfig) apply(opts []HTTPOption) error {
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(c); err != nil {
			return err
		}
	}
	return nil
}

// checkPath checks that the URL path given to option starts with '/'.
func checkPath(option, p string) error {
	if p == "" || p[0] != '/' {
		return errs.Option(option, fmt.Sprintf("%q", p), "the path must start with /")
	}
	return nil
}

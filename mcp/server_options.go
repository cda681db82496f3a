package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// ServerOption configures a Server (NewServer), its HTTP handler (Handler)
// or both (Serve). Options that concern only HTTP are ignored by stdio.
type ServerOption func(*serverConfig) error

type srvTemplate struct {
	tmpl    *sdk.ResourceTemplate
	handler sdk.ResourceHandler
}

type serverConfig struct {
	logger       *slog.Logger
	sdkLogger    *slog.Logger
	loggerName   string
	instructions string
	pageSize     int
	keepAlive    time.Duration
	qualify      bool
	sep          string
	completion   func(context.Context, *sdk.CompleteRequest) (*sdk.CompleteResult, error)
	templates    []srvTemplate
	relays       []*EventRelay

	// HTTP
	stateless      bool
	jsonResponse   bool
	verifier       auth.TokenVerifier
	authOpts       *auth.RequireBearerTokenOptions
	origins        []string
	hosts          []string
	maxBody        int64
	sessionTimeout time.Duration
	noRebinding    bool
	path           string
	eventStore     sdk.EventStore
}

// WithServerLogger sets the logger for the server's own diagnostics
// (skipped items, failed notifications). The default discards them.
func WithServerLogger(l *slog.Logger) ServerOption {
	return func(c *serverConfig) error { c.logger = l; return nil }
}

// WithSDKLogger sets the logger of the underlying go-sdk server and HTTP
// handler (protocol-level activity). The default discards it.
func WithSDKLogger(l *slog.Logger) ServerOption {
	return func(c *serverConfig) error { c.sdkLogger = l; return nil }
}

// WithLoggerName sets the "logger" field of the log notifications tools
// send through their session's Logger.
func WithLoggerName(name string) ServerOption {
	return func(c *serverConfig) error { c.loggerName = name; return nil }
}

// WithInstructions sets the instructions sent to clients on initialization.
func WithInstructions(s string) ServerOption {
	return func(c *serverConfig) error { c.instructions = s; return nil }
}

// WithPageSize sets the page size of list results (default
// sdk.DefaultPageSize).
func WithPageSize(n int) ServerOption {
	return func(c *serverConfig) error {
		if n < 0 {
			return fmt.Errorf("%w: page size %d", toolkit.ErrBadParameter, n)
		}
		c.pageSize = n
		return nil
	}
}

// WithKeepAlive makes the server ping each client at the given interval and
// close sessions that stop answering.
func WithKeepAlive(d time.Duration) ServerOption {
	return func(c *serverConfig) error { c.keepAlive = d; return nil }
}

// WithQualifiedNames exposes every item under its qualified name
// (namespace, separator, name; "uri#namespace" for resources), even when
// its bare name is unique.
func WithQualifiedNames() ServerOption {
	return func(c *serverConfig) error { c.qualify = true; return nil }
}

// WithNameSeparator sets the separator of qualified tool and prompt names:
// "_" (the default; safe for every model API), "." or "-".
func WithNameSeparator(sep string) ServerOption {
	return func(c *serverConfig) error {
		switch sep {
		case "_", ".", "-":
			c.sep = sep
			return nil
		}
		return fmt.Errorf("%w: name separator %q: want \"_\", \".\" or \"-\"", toolkit.ErrBadParameter, sep)
	}
}

// WithCompletion sets a hook for completion/complete. It runs first; when it
// returns a nil result and no error, the server completes prompt arguments
// from the enum values of the prompt's input schema.
func WithCompletion(h func(context.Context, *sdk.CompleteRequest) (*sdk.CompleteResult, error)) ServerOption {
	return func(c *serverConfig) error { c.completion = h; return nil }
}

// WithResourceTemplate registers a resource template directly with the
// server, outside the toolkit: reads of URIs that match it go to handler.
// The toolkit's own templates (toolkit.WithResourceTemplate, and those of
// connectors) are served without it; this option is for templates an
// application serves over MCP only. It wins over a toolkit template with
// the same URI template, which is then not exposed.
func WithResourceTemplate(t *sdk.ResourceTemplate, handler sdk.ResourceHandler) ServerOption {
	return func(c *serverConfig) error {
		if t == nil || handler == nil {
			return fmt.Errorf("%w: resource template: nil template or handler", toolkit.ErrBadParameter)
		}
		c.templates = append(c.templates, srvTemplate{t, handler})
		return nil
	}
}

// WithEventRelay attaches the server to a relay made by ServerDelegate, so
// that toolkit events reach it.
func WithEventRelay(r *EventRelay) ServerOption {
	return func(c *serverConfig) error {
		if r == nil {
			return fmt.Errorf("%w: nil event relay", toolkit.ErrBadParameter)
		}
		c.relays = append(c.relays, r)
		return nil
	}
}

// WithStateless makes the HTTP handler stateless: no Mcp-Session-Id, a
// temporary session per request, no server-to-client requests (sampling,
// elicitation) and no standalone notification stream. Stateless servers
// can run behind any load balancer.
func WithStateless() ServerOption {
	return func(c *serverConfig) error { c.stateless = true; return nil }
}

// WithJSONResponse makes the HTTP handler answer with application/json
// instead of an event stream (notifications sent during a request are then
// dropped).
func WithJSONResponse() ServerOption {
	return func(c *serverConfig) error { c.jsonResponse = true; return nil }
}

// WithBearerAuth requires a bearer token on every HTTP request, checked by
// verifier (see the go-sdk auth package). Requests without a valid token get
// 401. opts may be nil.
func WithBearerAuth(verifier auth.TokenVerifier, opts *auth.RequireBearerTokenOptions) ServerOption {
	return func(c *serverConfig) error {
		if verifier == nil {
			return fmt.Errorf("%w: nil token verifier", toolkit.ErrBadParameter)
		}
		c.verifier, c.authOpts = verifier, opts
		return nil
	}
}

// WithAllowedOrigins lists the browser origins ("https://app.example.com")
// allowed besides the server's own. A request whose Origin header is neither
// is refused with 403.
func WithAllowedOrigins(origins ...string) ServerOption {
	return func(c *serverConfig) error { c.origins = append(c.origins, origins...); return nil }
}

// WithAllowedHosts restricts the Host header of HTTP requests to the given
// host names (with or without port). Without it, only servers reached on a
// loopback address check the Host header (it must then be a loopback name).
func WithAllowedHosts(hosts ...string) ServerOption {
	return func(c *serverConfig) error { c.hosts = append(c.hosts, hosts...); return nil }
}

// WithMaxBodyBytes limits the size of HTTP request bodies (default
// sdk.DefaultMaxRequestBodyBytes, 4 MiB). Larger requests get 413.
func WithMaxBodyBytes(n int64) ServerOption {
	return func(c *serverConfig) error {
		if n <= 0 {
			return fmt.Errorf("%w: body limit %d", toolkit.ErrBadParameter, n)
		}
		c.maxBody = n
		return nil
	}
}

// WithSessionTimeout closes stateful HTTP sessions idle for d.
func WithSessionTimeout(d time.Duration) ServerOption {
	return func(c *serverConfig) error { c.sessionTimeout = d; return nil }
}

// WithoutRebindingProtection turns off the Host and Origin checks. Only for
// servers behind a proxy that does them.
func WithoutRebindingProtection() ServerOption {
	return func(c *serverConfig) error { c.noRebinding = true; return nil }
}

// WithPath sets the URL path Serve mounts the MCP endpoint at (default
// "/mcp").
func WithPath(p string) ServerOption {
	return func(c *serverConfig) error {
		if p == "" || p[0] != '/' {
			return fmt.Errorf("%w: path %q must start with /", toolkit.ErrBadParameter, p)
		}
		c.path = p
		return nil
	}
}

// WithEventStore keeps the events of stateful HTTP streams in store so that
// a client that lost a stream can resume it (Last-Event-ID).
func WithEventStore(store sdk.EventStore) ServerOption {
	return func(c *serverConfig) error { c.eventStore = store; return nil }
}

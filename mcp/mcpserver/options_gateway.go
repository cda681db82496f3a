package mcpserver

import (
	"fmt"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"go.opentelemetry.io/otel/metric"
)

// gatewayConfig is what the options of this file set.
type gatewayConfig struct {
	startupWait time.Duration
	meters      metric.MeterProvider
}

// WithStartupWait makes the server hold its first answers about items
// until the toolkit's connectors have settled, for at most d after New. A
// request for a list (tools, prompts, resources, templates) or for an item
// (tools/call, prompts/get, resources/read) that arrives within d of New
// waits until every connector is ready or has failed
// ([toolkit.Toolkit.WaitConnectors]) or until d has passed since New,
// whichever comes first (or until the request is cancelled), and is then
// answered from the toolkit's current items. The wait happens once: later
// requests are answered at once, and upstreams that become ready later
// arrive with a list_changed notification as usual. Initialize and ping
// never wait.
//
// It is for clients that list once and never again: a one-shot client,
// typically over stdio, would otherwise see an empty list while the
// upstreams are still connecting. The connectors start only while the
// toolkit's Run is active; call it before the first client can arrive.
// A negative d makes New fail; 0 (the default) turns the wait off.
func WithStartupWait(d time.Duration) Option {
	return func(c *config) error { c.gateway.startupWait = d; return errs.AtLeast("WithStartupWait", d, 0) }
}

// WithMeterProvider makes the server record OpenTelemetry metrics with a
// meter of mp (MeterName): toolkit.mcp.server.sessions (MetricSessions), a
// gauge of the client sessions open (stdio, stateful HTTP, and the
// temporary sessions of stateless HTTP requests in flight), and the counts
// and durations of prompt gets and resource reads (MetricRequests,
// MetricRequestDuration). The toolkit's
// own metrics (calls, connectors) are toolkit.WithMeterProvider's. A nil
// mp records nothing.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) error { c.gateway.meters = mp; return nil }
}

// WithExtensions makes the server advertise the extensions of ext
// (SEP-1724 capabilities.extensions: extension id to settings object,
// nil meaning {}) besides those its connectors' servers declare: the
// extensions its builtins provide (an MCP Apps view served by a builtin
// tool and resource, say). The server keeps a copy. An id of more than
// 256 bytes, or settings that are not a JSON object, make New fail.
func WithExtensions(ext map[string]any) Option {
	return func(c *config) error {
		e, err := toolkit.NewExtensions(ext)
		if err == nil {
			c.extensions, err = e.Map()
		}
		if err != nil {
			return fmt.Errorf("WithExtensions: %w", err)
		}
		return nil
	}
}

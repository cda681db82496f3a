package mcpserver

import (
	"cmp"
	"fmt"
	"time"

	"github.com/llmkit/toolkit/internal/errs"
)

// Defaults of the ceilings of the HTTP face (see the guide
// docs/serving.md, "Bounds").
const (
	// DefaultIdleTimeout is how long a keep-alive connection may wait for
	// its next request before ServeHTTP closes it (WithIdleTimeout).
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultReadTimeout is how long a request's body may take to arrive
	// (WithReadTimeout).
	DefaultReadTimeout = 30 * time.Second
	// DefaultMaxSessions is how many sessions one HTTP handler keeps open
	// at once (WithMaxSessions).
	DefaultMaxSessions = 1000
	// DefaultMaxSessionsPerPrincipal is how many of them one authenticated
	// principal may hold (WithMaxSessionsPerPrincipal).
	DefaultMaxSessionsPerPrincipal = 100
)

// Ranges of the ceilings: a value outside is an error naming the option.
const (
	minCeilingTimeout = time.Millisecond
	maxCeilingTimeout = 24 * time.Hour
	maxCeilingCount   = 1 << 20
)

// SessionRetryAfter is the Retry-After header (seconds) of the 503 answer
// to a request that would open a session beyond WithMaxSessions or
// WithMaxSessionsPerPrincipal.
const SessionRetryAfter = 10

// ceilingConfig is what the ceiling options set; zero values mean the
// defaults.
type ceilingConfig struct {
	idleTimeout     time.Duration
	readTimeout     time.Duration
	maxSessions     int
	maxPerPrincipal int
}

func (c ceilingConfig) idle() time.Duration { return cmp.Or(c.idleTimeout, DefaultIdleTimeout) }
func (c ceilingConfig) read() time.Duration { return cmp.Or(c.readTimeout, DefaultReadTimeout) }
func (c ceilingConfig) sessions() int       { return cmp.Or(c.maxSessions, DefaultMaxSessions) }
func (c ceilingConfig) perPrincipal() int {
	return cmp.Or(c.maxPerPrincipal, DefaultMaxSessionsPerPrincipal)
}

// checkTimeout checks the duration given to a ceiling option.
func checkTimeout(option string, d time.Duration) error {
	if d < minCeilingTimeout || d > maxCeilingTimeout {
		return errs.Option(option, d, fmt.Sprintf("want between %v and %v", minCeilingTimeout, maxCeilingTimeout))
	}
	return nil
}

// checkCount checks the count given to a ceiling option.
func checkCount(option string, n int) error {
	if n < 1 || n > maxCeilingCount {
		return errs.Option(option, n, fmt.Sprintf("want between 1 and %d", maxCeilingCount))
	}
	return nil
}

// WithIdleTimeout closes a keep-alive connection that has waited d for
// its next request (DefaultIdleTimeout when not given); d must be between
// 1ms and 24h. It is the http.Server's IdleTimeout, so it applies where
// this package runs the server: ServeListener, Serve and ServeHTTP. An
// event stream is a request in progress, never idle.
func WithIdleTimeout(d time.Duration) HTTPOption {
	return func(c *httpConfig) error {
		if err := checkTimeout("WithIdleTimeout", d); err != nil {
			return err
		}
		c.ceilings.idleTimeout = d
		return nil
	}
}

// WithReadTimeout gives a request's body d to arrive in full, counted from
// the end of its headers (DefaultReadTimeout when not given); d must be
// between 1ms and 24h. A body still incomplete then ends its request (the
// answer is 400 and the connection is closed), so clients that declare a
// large body and send it slowly, or never, cannot hold connections. Only
// the body is timed: the response that follows, an event stream of a
// POST or of a GET, lasts as long as it needs. It applies to Handler and
// SSEHandler wherever they are served, through read deadlines of the
// http.ResponseController of each request (a ResponseWriter without them
// is served untimed).
func WithReadTimeout(d time.Duration) HTTPOption {
	return func(c *httpConfig) error {
		if err := checkTimeout("WithReadTimeout", d); err != nil {
			return err
		}
		c.ceilings.readTimeout = d
		return nil
	}
}

// WithMaxSessions bounds the sessions a handler keeps open at once
// (DefaultMaxSessions when not given); n must be between 1 and 1,048,576.
// A request that would open one more (a stateful POST without
// Mcp-Session-Id: an initialize; a legacy SSE GET) is refused with 503
// Service Unavailable and Retry-After: SessionRetryAfter; the requests
// of sessions already open are served as usual. A session's slot is free
// again when it ends: DELETE, WithSessionTimeout, Server.Close, or for
// SSE the end of its GET. Each handler (Handler, SSEHandler, ServeListener)
// counts its own sessions; stateless handlers have none to count.
func WithMaxSessions(n int) HTTPOption {
	return func(c *httpConfig) error {
		if err := checkCount("WithMaxSessions", n); err != nil {
			return err
		}
		c.ceilings.maxSessions = n
		return nil
	}
}

// WithMaxSessionsPerPrincipal bounds the sessions one authenticated
// principal (the UserID of the verified token's auth.TokenInfo, see
// WithBearerAuth) holds at once in a handler
// (DefaultMaxSessionsPerPrincipal when not given); n must be between 1
// and 1,048,576. Beyond it, the principal's next session is refused as
// WithMaxSessions refuses one, while other principals still get theirs.
// Requests without a token are counted only by WithMaxSessions.
func WithMaxSessionsPerPrincipal(n int) HTTPOption {
	return func(c *httpConfig) error {
		if err := checkCount("WithMaxSessionsPerPrincipal", n); err != nil {
			return err
		}
		c.ceilings.maxPerPrincipal = n
		return nil
	}
}

package mcpserver

import (
	"time"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// DefaultSessionTimeout is how long a stateful HTTP session may go without
// a request before the server closes it, unless WithSessionTimeout says
// otherwise. Clients that vanish without ending their session (DELETE)
// would otherwise hold its memory for as long as the server runs.
const DefaultSessionTimeout = 30 * time.Minute

// DefaultMaxSessionCalls is how many calls (tools/call, prompts/get,
// resources/read, completion/complete) one client session may have in
// flight at once, unless WithMaxSessionCalls says otherwise.
const DefaultMaxSessionCalls = 64

// CodeTooManyCalls is the JSON-RPC error code of a call refused because its
// session already has the maximum of calls in flight (WithMaxSessionCalls).
// The client may send it again once one of its calls has been answered.
const CodeTooManyCalls = -32029

// sessionConfig is what the session options of a Server set.
type sessionConfig struct {
	maxCalls    int
	maxCallsSet bool

	clients   bool                    // WithClientSessions (clients.go)
	observers []bridge.ClientObserver // told of each session that starts
}

// limit returns the per-session limit in force; 0 means none.
func (c sessionConfig) limit() int {
	if !c.maxCallsSet {
		return DefaultMaxSessionCalls
	}
	return c.maxCalls
}

// WithMaxSessionCalls limits the calls (tools/call, prompts/get,
// resources/read, completion/complete) one client session may have in
// flight at once, on every transport; DefaultMaxSessionCalls when not
// given, 0 for no limit. A call beyond the limit is not queued: it is
// refused at once with a JSON-RPC error of code CodeTooManyCalls, so a
// client (a JSON-RPC batch, say) cannot make the server hold thousands of
// calls. Other requests (lists, pings) are not counted.
func WithMaxSessionCalls(n int) Option {
	return func(c *config) error {
		if err := errs.AtLeast("WithMaxSessionCalls", n, 0); err != nil {
			return err
		}
		c.sessions.maxCalls, c.sessions.maxCallsSet = n, true
		return nil
	}
}

// sseConfig is what the legacy SSE options set.
type sseConfig struct {
	path string
}

// WithSSEPath makes ServeListener and Serve also serve the legacy HTTP+SSE
// transport of protocol version 2024-11-05 at path (see
// Server.SSEHandler), for clients that do not speak streamable HTTP. The
// path must start with / and differ from the streamable endpoint's.
func WithSSEPath(path string) HTTPOption {
	return func(c *httpConfig) error {
		if err := checkPath("WithSSEPath", path); err != nil {
			return err
		}
		c.sse.path = path
		return nil
	}
}

// defaultSessionTimeout is DefaultSessionTimeout; tests shorten it.
var defaultSessionTimeout = DefaultSessionTimeout

// effectiveTimeout is the idle timeout handed to the go-sdk: the default
// for 0, none for a negative d.
func effectiveTimeout(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return defaultSessionTimeout
	case d < 0:
		return 0
	}
	return d
}

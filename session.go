package toolkit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Session gives a running tool the services of the client session that
// called it. Outside MCP it is a no-op session; SessionFromContext never
// returns nil. Implementations must be safe for concurrent use.
type Session interface {
	// ID returns the identifier of the client session ("" when unknown).
	ID() string
	// ClientInfo returns the name and version of the connected MCP client,
	// or nil outside an MCP session.
	ClientInfo() *mcp.Implementation
	// Capabilities returns the capabilities the client advertised, or nil
	// outside an MCP session.
	Capabilities() *mcp.ClientCapabilities
	// Meta returns the _meta map of the current request, or nil.
	Meta() map[string]any
	// Logger returns a logger whose records reach the client (as MCP
	// notifications/message inside an MCP session).
	Logger() *slog.Logger
	// Progress reports progress to the caller. total is 0 when unknown. At
	// most one message may be given.
	Progress(progress, total float64, message ...string) error
}

// MetaValue is one key/value pair of session metadata.
type MetaValue struct {
	Key   string
	Value any
}

type sessionKey struct{}

// ContextWithSession returns a copy of ctx that carries s. Servers and
// connectors use it to hand a full session to the tools they run.
func ContextWithSession(ctx context.Context, s Session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

// WithSession returns a copy of ctx that carries a session with the given ID
// and metadata. The ID is also stored in the metadata under the key "id".
// Progress reports are logged at debug level.
func WithSession(ctx context.Context, id string, meta ...MetaValue) context.Context {
	m := make(map[string]any, len(meta)+1)
	for _, kv := range meta {
		m[kv.Key] = kv.Value
	}
	m["id"] = id
	return ContextWithSession(ctx, &localSession{id: id, meta: m})
}

// SessionFromContext returns the session carried by ctx, or a no-op session
// that logs through the toolkit's logger (or slog.Default outside a call).
// It never returns nil.
func SessionFromContext(ctx context.Context) Session {
	if s, ok := ctx.Value(sessionKey{}).(Session); ok && s != nil {
		return s
	}
	if f := frameFrom(ctx); f != nil && f.tk != nil {
		return &f.tk.noop
	}
	return &defaultSession
}

var defaultSession localSession

// localSession is the session used outside MCP: it has an ID and metadata,
// logs through a slog.Logger and reports progress to the log.
type localSession struct {
	id     string
	meta   map[string]any
	once   sync.Once
	logger *slog.Logger
}

func (s *localSession) ID() string                            { return s.id }
func (s *localSession) ClientInfo() *mcp.Implementation       { return nil }
func (s *localSession) Capabilities() *mcp.ClientCapabilities { return nil }

// Meta returns a copy of the metadata, so callers cannot race on it.
func (s *localSession) Meta() map[string]any {
	if s.meta == nil {
		return nil
	}
	m := make(map[string]any, len(s.meta))
	for k, v := range s.meta {
		m[k] = v
	}
	return m
}

func (s *localSession) Logger() *slog.Logger {
	s.once.Do(func() {
		if s.logger == nil {
			s.logger = slog.Default()
		}
	})
	return s.logger
}

func (s *localSession) Progress(progress, total float64, message ...string) error {
	if err := CheckProgressMessage(message); err != nil {
		return err
	}
	if l := s.Logger(); l.Enabled(context.Background(), slog.LevelDebug) {
		l.Debug("progress", "session", s.id, "progress", progress, "total", total, "message", message)
	}
	return nil
}

// CheckProgressMessage returns an error wrapping ErrBadParameter when more
// than one progress message is given. Session implementations share it.
func CheckProgressMessage(message []string) error {
	if len(message) > 1 {
		return fmt.Errorf("%w: progress takes at most one message, got %d", ErrBadParameter, len(message))
	}
	return nil
}

package toolkit

import (
	"context"
	"fmt"
	"log/slog"

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
// The session logs through the logger of the toolkit running the call it is
// used in (see SessionFromContext), and through slog.Default outside any
// call. Progress reports are logged at debug level.
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
// Inside a toolkit call, a session made by WithSession also logs through the
// toolkit's logger. It never returns nil.
func SessionFromContext(ctx context.Context) Session {
	if s, ok := ctx.Value(sessionKey{}).(Session); ok && s != nil {
		if ls, ok := s.(*localSession); ok && ls.logger == nil {
			// The view made when the call began, if this session is the
			// one the call began with (a tool may set another).
			if f := frameFrom(ctx); f != nil && f.session.localSession == ls {
				return &f.session
			}
		}
		return s
	}
	if f := frameFrom(ctx); f != nil && f.tk != nil {
		return &f.tk.noop
	}
	return &defaultSession
}

var defaultSession localSession

// localSession is the session used outside MCP: it has an ID and metadata,
// logs through a slog.Logger and reports progress to the log. Its fields
// are set before it is shared and never change.
type localSession struct {
	id   string
	meta map[string]any
	// logger is the toolkit's logger for a toolkit's no-op session; nil for
	// sessions made by WithSession, which log through the toolkit running
	// the call (callSession) or through slog.Default.
	logger *slog.Logger
}

// callSession is a session made by WithSession as seen from inside a
// toolkit call: the same session, logging through the toolkit's logger.
type callSession struct {
	*localSession
	logger *slog.Logger
}

func (s *callSession) Logger() *slog.Logger { return s.logger }

func (s *callSession) Progress(progress, total float64, message ...string) error {
	return s.progress(s.logger, progress, total, message)
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
	if s.logger != nil {
		return s.logger
	}
	return slog.Default()
}

func (s *localSession) Progress(progress, total float64, message ...string) error {
	return s.progress(s.Logger(), progress, total, message)
}

// progress logs a progress report to l at debug level.
func (s *localSession) progress(l *slog.Logger, progress, total float64, message []string) error {
	if err := CheckProgressMessage(message); err != nil {
		return err
	}
	if l.Enabled(context.Background(), slog.LevelDebug) {
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

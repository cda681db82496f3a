package toolkit

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"

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
// toolkit's logger, unless [WithSessionLogger] gave it a logger. It never
// returns nil.
func SessionFromContext(ctx context.Context) Session {
	s, _ := ctx.Value(sessionKey{}).(Session)
	f := frameFrom(ctx)
	// Inside a call, the view made when the call began, if s is the session
	// the call began with (a tool may set another).
	switch v := s.(type) {
	case nil:
		if f != nil && f.tk != nil {
			return &f.tk.noop
		}
		return &defaultSession
	case *localSession:
		if v != nil && v.logger == nil && f != nil && f.session.localSession == v {
			return &f.session
		}
	case *hookSession:
		if v != nil && f != nil && f.hook != nil && f.hook.origin == v {
			return f.hook
		}
	}
	return s
}

// SessionAs finds the first session in s's chain that implements T: s
// itself, then the session its Unwrap() Session method returns, and so
// on, as errors.As does for errors. The sessions WithProgressFunc and
// WithSessionLogger make wrap the session they refine, so code that looks
// for an optional method of a session (the MCP server's client session, a
// handler of server requests) finds it through them.
func SessionAs[T any](s Session) (T, bool) {
	for s != nil {
		if t, ok := s.(T); ok {
			return t, true
		}
		u, ok := s.(interface{ Unwrap() Session })
		if !ok {
			break
		}
		s = u.Unwrap()
	}
	var zero T
	return zero, false
}

// WithProgressFunc returns a copy of ctx whose session reports progress to
// fn: a tool that calls SessionFromContext(ctx).Progress(p, total, msg)
// calls fn(p, total, msg) (msg is "" when none is given), and so does the
// progress a remote tool's server reports while it runs. fn may be called
// from other goroutines than the caller's, concurrently when calls made
// with ctx run concurrently.
//
// The rest of the session in ctx is kept: its ID, client information,
// capabilities, metadata and logger (see [WithSessionLogger]). When ctx
// has no session, or one without an ID, the session has an ID of its own
// ("local-" and a number): a session with an ID is one that takes
// progress, so the MCP connector asks the remote server for it. A nil fn
// gives progress back to the session in ctx.
//
// The session it makes has a method Unwrap() Session that returns the
// session it overrides, through which methods of that session beyond
// [Session] remain reachable.
func WithProgressFunc(ctx context.Context, fn func(progress, total float64, message string)) context.Context {
	h := hookOf(ctx)
	h.progress = fn
	return ContextWithSession(ctx, h)
}

// WithSessionLogger returns a copy of ctx whose session's Logger is l: the
// records a tool logs through SessionFromContext(ctx).Logger(), and the log
// messages a remote tool's server sends while it runs, go to l. The rest
// of the session in ctx is kept, and a session of its own is made when
// ctx has none, as with [WithProgressFunc]; the two compose. A nil l gives
// logging back to the session in ctx.
func WithSessionLogger(ctx context.Context, l *slog.Logger) context.Context {
	h := hookOf(ctx)
	h.logger = l
	return ContextWithSession(ctx, h)
}

// hookOf returns a copy of the hookSession in ctx, or a new one over the
// session in ctx.
func hookOf(ctx context.Context) *hookSession {
	switch s := ctx.Value(sessionKey{}).(type) {
	case *hookSession:
		if s != nil {
			h := *s
			h.origin = nil
			return &h
		}
	case Session:
		return &hookSession{base: s, id: localID()}
	}
	return &hookSession{base: &defaultSession, id: localID()}
}

var localIDs atomic.Uint64

// localID returns a new ID for a session made by WithProgressFunc or
// WithSessionLogger.
func localID() string { return "local-" + strconv.FormatUint(localIDs.Add(1), 10) }

// hookSession is a session whose progress or logger is replaced (by
// WithProgressFunc, WithSessionLogger); the rest is its base's. Its fields
// are set before it is shared and never change.
type hookSession struct {
	base     Session // never nil
	id       string  // the ID when base has none
	progress func(progress, total float64, message string)
	logger   *slog.Logger
	// origin is, for s as seen inside a call, the session it was made
	// from; nil otherwise.
	origin *hookSession
}

// Unwrap returns the session s overrides.
func (s *hookSession) Unwrap() Session { return s.base }

func (s *hookSession) ID() string {
	if id := s.base.ID(); id != "" {
		return id
	}
	return s.id
}

func (s *hookSession) ClientInfo() *mcp.Implementation       { return s.base.ClientInfo() }
func (s *hookSession) Capabilities() *mcp.ClientCapabilities { return s.base.Capabilities() }
func (s *hookSession) Meta() map[string]any                  { return s.base.Meta() }

func (s *hookSession) Logger() *slog.Logger {
	if s.logger != nil {
		return s.logger
	}
	return s.base.Logger()
}

func (s *hookSession) Progress(progress, total float64, message ...string) error {
	if s.progress == nil {
		return s.base.Progress(progress, total, message...)
	}
	if err := CheckProgressMessage(message); err != nil {
		return err
	}
	var msg string
	if len(message) == 1 {
		msg = message[0]
	}
	s.progress(progress, total, msg)
	return nil
}

// inCall returns s as seen inside a call of tk, whose frame is f: a base
// made by WithSession (or none) logs through tk's logger, as it would
// without s.
func (s *hookSession) inCall(tk *Toolkit, f *frame) *hookSession {
	v := *s
	v.origin = s
	if ls, ok := s.base.(*localSession); ok && ls.logger == nil {
		f.session = callSession{localSession: ls, logger: tk.logger}
		v.base = &f.session
	}
	return &v
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

package mcpserver

import (
	"context"
	"log/slog"
	"maps"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// serverSession is the toolkit.Session a tool sees when it runs for an MCP
// client of a Server. Its logger sends notifications/message and Progress
// sends notifications/progress, both in the context of the request that
// called the tool, so that they reach the client on that request's stream
// (the only stream a stateless HTTP server has).
type serverSession struct {
	ctx   context.Context // the request's context, as the SDK gave it
	ss    *sdk.ServerSession
	req   requestInfo
	meta  map[string]any // the request's _meta; read only
	token any            // progress token, nil when the client gave none
	name  string
	extra *sdk.RequestExtra
	proto string // negotiated protocol version

	clients *clientTable // the server's, with WithClientSessions (clients.go)

	once   sync.Once
	logger *slog.Logger

	infoOnce sync.Once // client info and capabilities are decoded on demand
	info     *sdk.Implementation
	caps     *sdk.ClientCapabilities
}

// requestInfo is what a session needs of an SDK request.
type requestInfo interface {
	ClientInfo() *sdk.Implementation
	ClientCapabilities() *sdk.ClientCapabilities
}

var _ toolkit.Session = (*serverSession)(nil)

// newServerSession builds the session of one request. params may be nil.
func newServerSession[P sdk.Params](ctx context.Context, req *sdk.ServerRequest[P], loggerName string) *serverSession {
	s := &serverSession{ctx: ctx, ss: req.Session, req: req, name: loggerName, extra: req.Extra}
	s.proto = req.ProtocolVersion()
	if p := req.GetParams(); p != nil {
		if m := p.GetMeta(); len(m) > 0 {
			s.meta = m
		}
	}
	if pp, ok := any(req.Params).(interface{ GetProgressToken() any }); ok {
		s.token = pp.GetProgressToken()
	}
	return s
}

// ID returns the MCP session ID ("" for a stateless or stdio session).
func (s *serverSession) ID() string {
	if s.ss == nil {
		return ""
	}
	return s.ss.ID()
}

func (s *serverSession) loadInfo() {
	s.infoOnce.Do(func() {
		s.info = s.req.ClientInfo()
		s.caps = s.req.ClientCapabilities()
	})
}

// ClientInfo returns the client's name and version.
func (s *serverSession) ClientInfo() *sdk.Implementation { s.loadInfo(); return s.info }

// Capabilities returns the capabilities the client advertised.
func (s *serverSession) Capabilities() *sdk.ClientCapabilities { s.loadInfo(); return s.caps }

// Meta returns a copy of the request's _meta.
func (s *serverSession) Meta() map[string]any {
	if s.meta == nil {
		return nil
	}
	return maps.Clone(s.meta)
}

// Logger returns a logger whose records become notifications/message for
// the client, filtered by the level the client set with logging/setLevel
// (nothing is sent before the client sets a level).
func (s *serverSession) Logger() *slog.Logger {
	s.once.Do(func() {
		s.logger = slog.New(&serverLogHandler{s: s, name: s.name})
	})
	return s.logger
}

// Progress sends notifications/progress with the request's progress token.
// When the client gave no token it does nothing and returns nil, so tools
// may report progress unconditionally.
func (s *serverSession) Progress(progress, total float64, message ...string) error {
	if err := toolkit.CheckProgressMessage(message); err != nil {
		return err
	}
	if s.token == nil || s.ss == nil {
		return nil
	}
	p := &sdk.ProgressNotificationParams{ProgressToken: s.token, Progress: progress, Total: total}
	if len(message) == 1 {
		p.Message = message[0]
	}
	return s.ss.NotifyProgress(s.ctx, p)
}

var _ bridge.ProgressTaker = (*serverSession)(nil)

// TakesProgress reports whether the client's request carried a progress
// token: without one, Progress sends nothing.
func (s *serverSession) TakesProgress() bool { return s.token != nil && s.ss != nil }

var _ bridge.LogForwarder = (*serverSession)(nil)

// ForwardLog sends an MCP server's log notification to the client as it
// came (level, logger and data unchanged), in the context of the request,
// filtered like Logger's records by the level the client set.
func (s *serverSession) ForwardLog(_ context.Context, params *sdk.LoggingMessageParams) error {
	if s.ss == nil {
		return errNoClient
	}
	p := *params
	return s.ss.Log(s.ctx, &p)
}

// ServerSession returns the SDK session of the client.
func (s *serverSession) ServerSession() *sdk.ServerSession { return s.ss }

// ProtocolVersion returns the protocol version of the request.
func (s *serverSession) ProtocolVersion() string { return s.proto }

// RequestExtra returns the transport's extra information about the request.
func (s *serverSession) RequestExtra() *sdk.RequestExtra { return s.extra }

// RequestExtraFromContext returns what the transport knows about the MCP
// request being served: over HTTP its headers and, with WithBearerAuth, the
// verified token's information. It returns nil outside a Server's request
// or when the transport has nothing to add (stdio).
func RequestExtraFromContext(ctx context.Context) *sdk.RequestExtra {
	if s, ok := toolkit.SessionAs[interface{ RequestExtra() *sdk.RequestExtra }](toolkit.SessionFromContext(ctx)); ok {
		return s.RequestExtra()
	}
	return nil
}

// ServerSessionFromContext returns the MCP server session of the client whose
// request is being served, or nil when ctx does not come from a Server.
// Its requests to the client (CreateMessage, Elicit, ListRoots) reach
// clients of the initialize handshake only; a tool that asks its client
// should ask through the call's toolkit.Session instead, as a
// bridge.ServerRequestHandler, which also asks a 2026-07-28 client (in
// rounds of input-required results; see the guide docs/serving.md).
func ServerSessionFromContext(ctx context.Context) *sdk.ServerSession {
	if s, ok := toolkit.SessionAs[interface{ ServerSession() *sdk.ServerSession }](toolkit.SessionFromContext(ctx)); ok {
		return s.ServerSession()
	}
	return nil
}

// serverLogHandler is a slog.Handler that sends records to the client as
// notifications/message. Data is a JSON object with the message under "msg"
// and the attributes (groups as nested objects).
type serverLogHandler struct {
	s      *serverSession
	name   string
	attrs  []slog.Attr
	groups []string
}

func (h *serverLogHandler) Enabled(context.Context, slog.Level) bool { return h.s.ss != nil }

func (h *serverLogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	h2 := *h
	h2.attrs = append(h.attrs[:len(h.attrs):len(h.attrs)], h.nest(as)...)
	return &h2
}

func (h *serverLogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.groups = append(h.groups[:len(h.groups):len(h.groups)], name)
	return &h2
}

// nest puts as inside the handler's open groups.
func (h *serverLogHandler) nest(as []slog.Attr) []slog.Attr {
	if len(h.groups) == 0 {
		return as
	}
	out := as
	for i := len(h.groups) - 1; i >= 0; i-- {
		args := make([]any, len(out))
		for j, a := range out {
			args[j] = a
		}
		out = []slog.Attr{slog.Group(h.groups[i], args...)}
	}
	return out
}

func (h *serverLogHandler) Handle(_ context.Context, r slog.Record) error {
	data := map[string]any{"msg": r.Message}
	add := func(a slog.Attr) bool {
		putAttr(data, a)
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	var recAttrs []slog.Attr
	r.Attrs(func(a slog.Attr) bool { recAttrs = append(recAttrs, a); return true })
	for _, a := range h.nest(recAttrs) {
		add(a)
	}
	// The request's context routes the notification to the request's stream
	// and carries the per-request log level of newer protocol versions.
	return h.s.ss.Log(h.s.ctx, &sdk.LoggingMessageParams{
		Level:  sdkLevel(r.Level),
		Logger: h.name,
		Data:   data,
	})
}

// putAttr stores a resolved attribute in m, groups as nested maps.
func putAttr(m map[string]any, a slog.Attr) {
	v := a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if v.Kind() == slog.KindGroup {
		sub := m
		if a.Key != "" {
			next, ok := m[a.Key].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[a.Key] = next
			}
			sub = next
		}
		for _, g := range v.Group() {
			putAttr(sub, g)
		}
		return
	}
	switch v.Kind() {
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			m[a.Key] = err.Error()
			return
		}
		m[a.Key] = v.Any()
	case slog.KindDuration:
		m[a.Key] = v.Duration().String()
	default:
		m[a.Key] = v.Any()
	}
}

// sdkLevel maps a slog level to the nearest MCP logging level.
func sdkLevel(l slog.Level) sdk.LoggingLevel {
	switch {
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelInfo+2:
		return "info"
	case l < slog.LevelWarn:
		return "notice"
	case l < slog.LevelError:
		return "warning"
	case l < slog.LevelError+4:
		return "error"
	case l < slog.LevelError+8:
		return "critical"
	case l < slog.LevelError+12:
		return "alert"
	}
	return "emergency"
}

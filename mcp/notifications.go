package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/bridge"
	"github.com/llmkit/toolkit/mcp/internal/wire"
)

// The go-sdk client hands notifications to a queue of their own and
// settles a call as soon as its response is read, so a progress or log
// notification a server sends just before the result may be handled after
// the call returned, when nobody listens any more. For the transports the
// connector makes itself (stdio, streamable HTTP, SSE), a noteScanner reads
// the bytes the SDK reads, as it reads them, and delivers progress and log
// notifications before the SDK sees the bytes that follow: a notification
// sent before the result reaches the caller before the result does. The
// SDK's own handlers then stand aside (Connector.scanned).

// maxNoteLine bounds the lines and events a noteScanner keeps. Progress and
// log notifications are small; longer lines (large results) are passed
// over without being copied.
const maxNoteLine = 64 << 10

// Method names the scanner looks for.
var (
	noteProgress = []byte(`"notifications/progress"`)
	noteMessage  = []byte(`"notifications/message"`)
)

// noteScanner finds notifications in a stream of newline-delimited JSON
// (stdio) or server-sent events (HTTP).
type noteScanner struct {
	c   *Connector
	sse bool
	// owner is the call whose response stream this is (a streamable HTTP
	// POST), or nil for a stream shared by every call.
	owner *inflight

	// pooled: line and data come from a wire.Scratch (sc, once fed), given
	// back by release when the stream ended.
	pooled bool
	sc     *wire.Scratch

	line      []byte
	skipLine  bool   // the current line is longer than maxNoteLine
	data      []byte // SSE: the data of the current event
	skipEvent bool   // SSE: the current event is longer than maxNoteLine
}

// feed scans p, the next bytes of the stream.
func (s *noteScanner) feed(p []byte) {
	if s.pooled && s.sc == nil {
		s.sc = wire.GetScratch()
		s.line, s.data = s.sc.Line, s.sc.Data
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !s.skipLine {
			if len(s.line)+len(chunk) > s.max() {
				s.skipLine, s.line = true, s.line[:0]
			} else {
				s.line = append(s.line, chunk...)
			}
		}
		if i < 0 {
			return
		}
		p = p[i+1:]
		s.endLine(bytes.TrimSuffix(s.line, []byte{'\r'}), s.skipLine)
		s.line, s.skipLine = s.line[:0], false
	}
}

// release gives the scanner's buffers back to the pool: the stream ended,
// and s is not fed again.
func (s *noteScanner) release() {
	if s.sc == nil {
		return
	}
	s.sc.Line, s.sc.Data = s.line, s.data
	s.sc.Put()
	s.sc, s.line, s.data, s.pooled = nil, nil, nil, false
}

func (s *noteScanner) max() int { return maxNoteLine }

// endLine handles one complete line; skipped reports a line too long to
// keep.
func (s *noteScanner) endLine(line []byte, skipped bool) {
	if !s.sse {
		if !skipped {
			s.message(line)
		}
		return
	}
	switch {
	case skipped:
		s.skipEvent = true
	case len(line) == 0: // the end of an event
		if !s.skipEvent && len(s.data) > 0 {
			s.message(s.data)
		}
		s.data, s.skipEvent = s.data[:0], false
	default:
		v, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok || s.skipEvent {
			return
		}
		v = bytes.TrimPrefix(v, []byte(" "))
		if len(s.data)+len(v)+1 > s.max() {
			s.skipEvent = true
			return
		}
		if len(s.data) > 0 {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, v...)
	}
}

// message delivers msg if it is a progress or log notification. A log
// notification over the rate limit is dropped before it is decoded.
func (s *noteScanner) message(msg []byte) {
	progress := bytes.Contains(msg, noteProgress)
	if !progress && !bytes.Contains(msg, noteMessage) {
		return
	}
	taken, dropped := false, 0
	if !progress {
		ok, d := s.c.srv.noteLogs.take()
		if !ok {
			return
		}
		taken, dropped = true, d
	}
	var n struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &n) != nil || n.ID != nil || len(n.Params) == 0 {
		return
	}
	switch n.Method {
	case "notifications/progress":
		var p sdk.ProgressNotificationParams
		if json.Unmarshal(n.Params, &p) == nil {
			s.c.deliverProgress(&p)
		}
	case "notifications/message":
		if !taken {
			ok, d := s.c.srv.noteLogs.take()
			if !ok {
				return
			}
			dropped = d
		}
		var p sdk.LoggingMessageParams
		if json.Unmarshal(n.Params, &p) == nil {
			s.c.deliverLog(context.Background(), &p, s.owner, dropped)
		}
	}
}

// deliverProgress hands a progress notification to the caller whose token
// it carries; one that matches no call in flight is dropped.
func (c *Connector) deliverProgress(p *sdk.ProgressNotificationParams) {
	in := c.calls.get(tokenKey(p.ProgressToken))
	if in == nil || !in.progressGate(c.o.hooks.now).pass(p.Progress) {
		return
	}
	var msg []string
	if p.Message != "" {
		msg = []string{p.Message}
	}
	if err := in.session.Progress(p.Progress, p.Total, msg...); err != nil {
		c.logger.Debug("forwarding progress failed", "error", err)
	}
}

// Bounds of the progress of one call passed to its caller.
const (
	progressBurst = 100 // notifications at once
	progressRate  = 10  // then notifications a second
)

// progressGate passes on the progress notifications of one call: only
// values that increase (the protocol's rule, which a server may break, and
// which the caller's own client may enforce), and at most progressBurst at
// once then progressRate a second, so that a server cannot flood the
// caller. A value dropped for the rate is soon followed by a larger one.
type progressGate struct {
	mu   sync.Mutex
	last float64
	sent bool
	lim  *rateLimiter
}

// pass reports whether progress may be passed on, and records it if so.
func (g *progressGate) pass(progress float64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sent && !(progress > g.last) || math.IsNaN(progress) {
		return false
	}
	if ok, _ := g.lim.take(); !ok {
		return false
	}
	g.last, g.sent = progress, true
	return true
}

// deliverLog logs a server's log message: to the session of owner, the
// call on whose response stream it came, when known; else to the session
// of the only call in flight; else to the connector's logger. The caller
// took a token of c.srv.noteLogs; dropped is the count of messages it
// refused since the last one logged.
func (c *Connector) deliverLog(ctx context.Context, p *sdk.LoggingMessageParams, owner *inflight, dropped int) {
	logger := c.logger
	var session toolkit.Session
	switch {
	case owner != nil:
		session = owner.session
	default:
		session = c.calls.sole()
	}
	if session != nil {
		if f, ok := toolkit.SessionAs[bridge.LogForwarder](session); ok && f.ForwardLog(ctx, p) == nil {
			return // passed on as it came
		}
		logger = session.Logger()
	}
	var msg string
	switch d := p.Data.(type) {
	case string:
		msg = d
	default:
		b, _ := json.Marshal(d)
		msg = string(b)
	}
	msg = truncateLine(msg)
	var level slog.Level
	switch p.Level {
	case "debug":
		level = slog.LevelDebug
	case "info", "notice":
		level = slog.LevelInfo
	case "warning":
		level = slog.LevelWarn
	default:
		level = slog.LevelError
	}
	if dropped > 0 {
		logger.Log(ctx, level, msg, "server", c.serverName(), "logger", truncateLine(p.Logger), "dropped", dropped)
		return
	}
	logger.Log(ctx, level, msg, "server", c.serverName(), "logger", truncateLine(p.Logger))
}

// flushNoteLogs logs how many log messages of the server were dropped by
// the rate limit and not yet reported.
func (c *Connector) flushNoteLogs() {
	if n := c.srv.noteLogs.flush(); n > 0 {
		c.logger.Warn("server log messages not logged (rate limit)", "dropped", n)
	}
}

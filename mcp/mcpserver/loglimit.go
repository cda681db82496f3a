package mcpserver

import (
	"log/slog"
	"sync/atomic"

	"golang.org/x/time/rate"
)

// Bounds of the log lines about refused requests: logBurst at once, then
// logRate a second, whatever clients send.
const (
	logBurst = 10
	logRate  = 1
)

// logLimiter bounds the log lines of one kind of refusal; the next line
// written says how many were dropped.
type logLimiter struct {
	lim     *rate.Limiter
	dropped atomic.Int64
}

func newLogLimiter() *logLimiter { return &logLimiter{lim: rate.NewLimiter(logRate, logBurst)} }

// warn logs msg with args unless too many lines were written lately.
func (l *logLimiter) warn(logger *slog.Logger, msg string, args ...any) {
	if !l.lim.Allow() {
		l.dropped.Add(1)
		return
	}
	if n := l.dropped.Swap(0); n > 0 {
		args = append(args, "dropped", n)
	}
	logger.Warn(msg, args...)
}

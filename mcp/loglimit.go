package mcp

import (
	"sync"
	"time"
	"unicode/utf8"
)

// Bounds of what a server can make the connector log: its stderr lines,
// its log notifications and the lines the connector skips on its stdout.
const (
	// maxLogLine caps the text of one logged line; the rest is cut off.
	maxLogLine = 4 << 10
	// logBurst lines may be logged at once, then logRate a second.
	logBurst = 100
	logRate  = 20
)

// logLimiter rate-limits the log records made of what a server sends: a
// token bucket of logBurst lines refilled at logRate lines a second, that
// counts the lines it refuses so that the next record (or a summary when
// the source ends) says how many were dropped. A flood thus costs a
// bounded volume of log, whatever the server does. The zero value is not
// usable; use newLogLimiter.
type logLimiter struct {
	mu      sync.Mutex
	now     func() time.Time // time.Now but in tests
	tokens  float64
	last    time.Time
	dropped int
}

func newLogLimiter() *logLimiter {
	return &logLimiter{now: time.Now, tokens: logBurst}
}

// take reports whether a line may be logged now. When it may, dropped is
// the number of lines refused since the last one allowed, for the record
// to say so; when it may not, the line is counted as dropped.
func (l *logLimiter) take() (ok bool, dropped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.last.IsZero() {
		l.tokens = min(logBurst, l.tokens+now.Sub(l.last).Seconds()*logRate)
	}
	l.last = now
	if l.tokens < 1 {
		l.dropped++
		return false, 0
	}
	l.tokens--
	dropped, l.dropped = l.dropped, 0
	return true, dropped
}

// flush returns the number of lines refused since the last one allowed and
// starts counting again: the source ended, and a summary record says so.
func (l *logLimiter) flush() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.dropped
	l.dropped = 0
	return n
}

// truncateLine cuts s to at most maxLogLine bytes (on a rune boundary),
// marking a cut with "…".
func truncateLine(s string) string {
	if len(s) <= maxLogLine {
		return s
	}
	cut := maxLogLine
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

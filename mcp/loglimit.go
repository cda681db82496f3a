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

// rateLimiter rate-limits what is made of what a server sends (log
// records, progress passed on): a token bucket of burst items refilled at
// rate items a second, that counts the items it refuses so that the next
// record (or a summary when the source ends) says how many were dropped. A
// flood thus costs a bounded volume, whatever the server does. The zero
// value is not usable; use newRateLimiter or newLogLimiter.
type rateLimiter struct {
	mu          sync.Mutex
	now         func() time.Time // time.Now but in tests
	burst, rate float64
	tokens      float64
	last        time.Time
	dropped     int
}

func newRateLimiter(burst, rate float64, now func() time.Time) *rateLimiter {
	if now == nil {
		now = time.Now
	}
	return &rateLimiter{now: now, burst: burst, rate: rate, tokens: burst}
}

// newLogLimiter returns the limiter of one source of log lines.
func newLogLimiter() *rateLimiter { return newRateLimiter(logBurst, logRate, nil) }

// take reports whether an item (a line) may go now. When it may, dropped
// is the number of items refused since the last one allowed, for the
// record to say so; when it may not, the item is counted as dropped.
func (l *rateLimiter) take() (ok bool, dropped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.last.IsZero() {
		l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
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
func (l *rateLimiter) flush() int {
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

package oauth

import "time"

// clock tells the time and runs functions later: the real one, or a
// test's.
type clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d; stop cancels the
	// call and reports whether it did.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// realClock is the system's clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

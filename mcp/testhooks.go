package mcp

import "time"

// testHooks are the seams tests set through an Option of their own
// (export_test.go and the package's tests); production code leaves them
// zero, but for kickFloor, whose default is set by defaultOptions.
type testHooks struct {
	// beforeBackoff is called with each backoff delay.
	beforeBackoff func(attempt int, d time.Duration)
	// afterRefresh is called at the end of each refresh of the listing.
	afterRefresh func(kinds uint32, err error)
	// waiting is called when a call starts waiting for a session.
	waiting func()
	// queued is called when a call starts waiting for a slot
	// (Limits.MaxConcurrency).
	queued func()
	// userIdle is ClientSessionLimits.Idle, shorter.
	userIdle time.Duration
	// userWaiting is called when a call starts waiting for its user's
	// authorization (OptOAuthPerUser).
	userWaiting func()
	// redirectTaken is called when a user's authorization has its
	// redirect, before the user is no longer asked (OptOAuthPerUser).
	redirectTaken func()
	// clientClosed is called when a client's upstream session
	// (OptPerClient) is closed and its process, if any, reaped.
	clientClosed func()
	// kickFloor is the least time between a failed attempt and the next
	// one that a waiting call may bring forward.
	kickFloor time.Duration
	// now is the connector's clock (nil: time.Now).
	now func() time.Time
	// answeredWait is answeredStreamWait (0), shorter.
	answeredWait time.Duration
}

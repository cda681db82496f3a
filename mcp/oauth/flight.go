package oauth

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
)

// One authorization at a time. The authorizations of one protected
// resource for one token store (so, for the authorization server the
// resource names, one identity) are made one at a time across the
// process: a gate per resource and store holds the authorization in
// flight, if any, and after a failed one the time before the next may
// start. Requests that need an authorization while one is in flight join
// it; while the user is asked, or a failure is waited out, they fail at
// once with a PendingError.

// Retry policy of failed authorizations.
const (
	// retryMin is the wait after the first failure; it doubles with each
	// failure that follows, up to retryMax.
	retryMin = time.Second
	retryMax = 5 * time.Minute
	// authorizeTimeout bounds one authorization, the user's part
	// included: an authorization server forgets an authorization request
	// after a while, so a user who never came back is asked again, with
	// a new URL.
	authorizeTimeout = 10 * time.Minute
	// refusedSoon is how soon after an authorization the server refusing
	// the token it gave makes that authorization a failure (so that a
	// server that refuses every token does not have the user asked again
	// and again without a pause).
	refusedSoon = time.Minute
)

// Causes of the end of an authorization's context.
var (
	errStopped          = errors.New("the authorization was stopped")
	errAuthorizeTimeout = fmt.Errorf("the authorization did not complete within %v", authorizeTimeout)
)

// PendingError is the error of a request that cannot be sent because an
// authorization is pending: the user is being asked to authorize access,
// or an authorization failed and the next attempt is not due yet. It
// wraps [ErrAuthorizationPending] (and so toolkit.ErrUnavailable) and,
// after a failure, that failure's error.
type PendingError struct {
	// Reason says why, on one line: why an authorization is needed and
	// whom the user is asked by, or why the last one failed and when the
	// next may start.
	Reason string
	// RetryAt is when the next attempt may start after a failed
	// authorization; zero while the user is asked.
	RetryAt time.Time
	// Err is the error of the failed authorization (nil while the user
	// is asked).
	Err error
}

// Error implements error.
func (e *PendingError) Error() string { return "authorization pending: " + e.Reason }

// Unwrap returns [ErrAuthorizationPending] and the failure, if any.
func (e *PendingError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrAuthorizationPending}
	}
	return []error{ErrAuthorizationPending, e.Err}
}

// gateKey names the gate of a resource, a token store and a principal: a
// store that cannot be a map key (and no store) gives each handler its own
// gate.
type gateKey struct {
	store     any
	resource  string
	principal string
}

// gates are the gates of the process with something to remember: an
// authorization in flight, or a failure being waited out. A gate is
// removed when neither is left (dead then), so the map holds only the
// resources that need an authorization.
var gates sync.Map // gateKey → *gate

// gate is the authorization state of one gateKey.
type gate struct {
	key gateKey

	mu       sync.Mutex
	dead     bool    // removed from gates: look it up again
	flight   *flight // in progress
	failures int     // consecutive failed authorizations
	quick    int     // tokens refused right after their authorization, in a row
	retryAt  time.Time
	lastErr  error         // of the last failure
	changed  chan struct{} // closed and replaced on each change
	stop     func() bool   // stops the timer that ends the wait
}

// flight is one authorization in progress.
type flight struct {
	owner     *Handler
	reason    string // why it was needed
	done      chan struct{}
	err       error       // set before done is closed
	cancel    func()      // ends it (Handler.Stop)
	stopTimer func() bool // stops its timeout

	asked  chan struct{} // closed when the user is asked
	asking atomic.Bool   // the user is being asked now
	at     atomic.Pointer[string]

	// The fleet's flights (flight_shared.go).
	sent      string                                  // the access token refused, if any
	recorded  atomic.Bool                             // it is the fleet's, in the registry
	following atomic.Bool                             // it shows another process's URL
	elsewhere atomic.Bool                             // that one brought the token
	follow    atomic.Pointer[context.CancelCauseFunc] // ends the following
}

// flightKey is the context key of the flight a context runs.
type flightKey struct{}

// flightOf returns the flight that ctx runs, or nil.
func flightOf(ctx context.Context) *flight {
	f, _ := ctx.Value(flightKey{}).(*flight)
	return f
}

// noWaitKey marks the contexts of [NoWait].
type noWaitKey struct{}

// NoWait returns a copy of ctx for requests whose authorization must not
// wait for the user: when a request sent with it needs an authorization
// that asks the user, [Handler.Authorize] returns a [PendingError] as
// soon as the user is asked, and the authorization goes on without it
// ([Handler.Pending] tells when it ends). A connector makes its
// connection attempts so, and waits for the user without holding a
// connection open.
func NoWait(ctx context.Context) context.Context {
	return context.WithValue(ctx, noWaitKey{}, true)
}

func noWait(ctx context.Context) bool {
	v, _ := ctx.Value(noWaitKey{}).(bool)
	return v
}

// gateKeyOf returns the key of h's gate.
func (h *Handler) gateKeyOf() gateKey {
	store := h.store
	if ps, ok := store.(principalStore); ok {
		store = ps.PrincipalTokenStore
	}
	if store != nil && reflect.TypeOf(store).Comparable() {
		return gateKey{store: store, resource: h.resource, principal: h.principal}
	}
	return gateKey{store: h, resource: h.resource, principal: h.principal}
}

// findGate returns h's gate, or nil when it has nothing to remember.
func (h *Handler) findGate() *gate {
	if g, ok := gates.Load(h.key); ok {
		return g.(*gate)
	}
	return nil
}

// lockGate returns h's gate, made if needed, locked.
func (h *Handler) lockGate() *gate {
	for {
		v, _ := gates.LoadOrStore(h.key, &gate{key: h.key, changed: make(chan struct{})})
		g := v.(*gate)
		g.mu.Lock()
		if !g.dead {
			return g
		}
		g.mu.Unlock()
	}
}

// notifyLocked wakes those waiting for a change of g; g.mu is held.
func (g *gate) notifyLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// releaseLocked removes g from gates when it holds nothing; g.mu is held.
func (g *gate) releaseLocked(now time.Time) {
	if g.flight == nil && g.failures == 0 && g.quick == 0 && !now.Before(g.retryAt) {
		g.dead = true
		gates.CompareAndDelete(g.key, g)
	}
}

// pendingLocked returns the PendingError of g at now, or nil; g.mu is
// held.
func (g *gate) pendingLocked(now time.Time) *PendingError {
	if f := g.flight; f != nil {
		if !f.asking.Load() {
			return nil
		}
		reason := f.reason + "; waiting for the user to authorize access"
		if at := f.at.Load(); at != nil && *at != "" {
			reason += " at " + *at
		}
		return &PendingError{Reason: reason}
	}
	if g.lastErr != nil && now.Before(g.retryAt) {
		wait := g.retryAt.Sub(now).Round(time.Second)
		return &PendingError{
			Reason:  fmt.Sprintf("%v; next attempt in %v", g.lastErr, max(wait, time.Second)),
			RetryAt: g.retryAt,
			Err:     g.lastErr,
		}
	}
	return nil
}

// Pending reports whether the requests of the handler must wait for an
// authorization: while the user is asked to authorize access, and after
// a failed authorization until the next attempt is due (see [Handler]).
// It returns nil otherwise, and else a [PendingError] saying why, with a
// channel closed when that changes (the user answered, the wait is
// over). Fail requests with the error rather than make them wait for a
// person.
func (h *Handler) Pending() (changed <-chan struct{}, err error) {
	if h == nil {
		return nil, nil
	}
	g := h.findGate()
	if g == nil {
		return nil, nil
	}
	g.mu.Lock()
	f := g.flight
	g.mu.Unlock()
	if f != nil && h.followed(f) {
		// Another process's authorization brought the token.
		return nil, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if pe := g.pendingLocked(h.clock.Now()); pe != nil {
		return g.changed, pe
	}
	return nil, nil
}

// Waiting reports whether the user is being asked to authorize access
// (in [Config.Authorize]). Requests sent meanwhile would wait for the
// person: fail them with [ErrAuthorizationPending] instead (see
// [Handler.Pending]).
func (h *Handler) Waiting() bool {
	if h == nil {
		return false
	}
	g := h.findGate()
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.flight != nil && g.flight.asking.Load()
}

// join returns the flight in progress on h's gate, or starts one (own is
// then true, and the caller runs it), or returns the PendingError of a
// failure still waited out.
func (h *Handler) join(reason string) (f *flight, own bool, pe *PendingError) {
	g := h.lockGate()
	defer g.mu.Unlock()
	if g.flight != nil {
		return g.flight, false, nil
	}
	if pe := g.pendingLocked(h.clock.Now()); pe != nil {
		return nil, false, pe
	}
	f = &flight{owner: h, reason: reason, done: make(chan struct{}), asked: make(chan struct{})}
	g.flight = f
	g.notifyLocked()
	return f, true, nil
}

// land ends f, h's flight, with err: a failure (unless f was stopped)
// starts the wait before the next attempt, a success forgets earlier
// failures.
func (h *Handler) land(f *flight, err error, stopped bool) {
	g := h.lockGate()
	now := h.clock.Now()
	if g.flight == f {
		g.flight = nil
	}
	switch {
	case err == nil:
		if g.stop != nil {
			g.stop()
			g.stop = nil
		}
		g.failures, g.retryAt, g.lastErr = 0, time.Time{}, nil
	case !stopped:
		h.failLocked(g, err, now)
	}
	g.notifyLocked()
	g.releaseLocked(now)
	g.mu.Unlock()
	f.err = err
	close(f.done)
	h.changed()
}

// failLocked counts a failed authorization, with err, and starts the
// wait before the next one; g.mu is held.
func (h *Handler) failLocked(g *gate, err error, now time.Time) {
	if g.stop != nil {
		g.stop()
	}
	g.failures++
	wait := min(retryMin<<min(g.failures-1, 20), retryMax)
	var se *ServerError
	if errors.As(err, &se) && se.RetryAfter > wait {
		wait = se.RetryAfter
	}
	g.retryAt, g.lastErr = now.Add(wait), err
	g.stop = h.clock.AfterFunc(wait, func() {
		g.mu.Lock()
		g.notifyLocked()
		g.releaseLocked(h.clock.Now())
		g.mu.Unlock()
		h.changed()
	})
}

// refusedSoon notes that the server refused, for why, the token of s
// (401, or 403 insufficient_scope): when an authorization had just given
// it, and the one before was refused as soon, that authorization failed (a
// server that refuses every token, or asks for a scope it never grants,
// would otherwise have the user asked again and again without a pause)
// and it reports true.
func (h *Handler) refusedSoon(s *savingSource, why string) bool {
	now := h.clock.Now()
	soon := !s.born.IsZero() && now.Sub(s.born) < refusedSoon
	if !soon && h.findGate() == nil {
		return false
	}
	g := h.lockGate()
	failed := false
	switch {
	case !soon:
		g.quick = 0
	case g.quick < 1:
		g.quick++
	default:
		g.quick, failed = 0, true
		h.failLocked(g, fmt.Errorf("%s, right after an authorization gave it", why), now)
		g.notifyLocked()
	}
	g.releaseLocked(now)
	g.mu.Unlock()
	if failed {
		h.changed()
	}
	return failed
}

// ask marks f as asking the user, at host, until the returned function is
// called.
func (h *Handler) ask(f *flight, host string) (answered func()) {
	f.at.Store(&host)
	f.asking.Store(true)
	close(f.asked)
	h.notify()
	return func() {
		f.asking.Store(false)
		h.notify()
	}
}

// notify wakes those waiting for a change of h's gate, and tells the
// application.
func (h *Handler) notify() {
	if g := h.findGate(); g != nil {
		g.mu.Lock()
		if !g.dead {
			g.notifyLocked()
		}
		g.mu.Unlock()
	}
	h.changed()
}

// changed calls [HandlerConfig.OnChange].
func (h *Handler) changed() {
	if h.onChange != nil {
		h.onChange()
	}
}

// Stop ends the authorization this handler has in flight, if any (the
// token exchanges in flight, for [Enterprise] and [TokenExchange]), and
// waits until it has ended; the user's answer, if it comes, is not used.
// A stopped authorization does not count as a failure. The handler stays
// usable: a later request that needs an authorization starts one.
func (h *Handler) Stop() {
	if sh, ok := h.inner.(*subjectHandler); ok {
		sh.stop()
	}
	h.mu.Lock()
	fs := make([]*flight, 0, len(h.flights))
	for f := range h.flights {
		fs = append(fs, f)
	}
	h.mu.Unlock()
	for _, f := range fs {
		f.cancel()
		<-f.done
	}
}

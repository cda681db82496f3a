package oauth

import (
	"context"
	"errors"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// One authorization at a time across a fleet. The gate of flight.go holds
// one process's authorization; the processes of a fleet that share a
// token store share their flights through a [FlightRegistry] too
// ([Config.Flights]): the first to ask the user records its authorization
// URL, and the others show the user that URL rather than their own, and
// wait for the token it brings to appear in the shared store.

// FlightRegistry records the authorizations in flight of the processes of
// a fleet that share a token store, so that a user is asked once, with
// one URL, whichever replicas need the authorization at once (see
// [Config.Flights]). Package github.com/llmkit/toolkit/redisstate has one
// on Redis.
type FlightRegistry interface {
	// Begin records, under key, this process's authorization that sends
	// the user to authURL, for at most ttl, unless another process
	// already has one recorded: it then returns that one's URL and false,
	// and else authURL and true.
	Begin(ctx context.Context, key, authURL string, ttl time.Duration) (ownerURL string, mine bool, err error)
	// End forgets this process's record under key, if it is still there.
	End(ctx context.Context, key string) error
}

// FlightWatcher is implemented by a [FlightRegistry] that tells the
// processes following an authorization when it ends, so that they take
// its token as soon as it is stored rather than at their next look (a
// follower of a registry without it looks every two seconds).
type FlightWatcher interface {
	// WatchFlight calls wake with true once the watch of the flight
	// recorded under key is in place, each time that flight may have
	// ended (it ended, or the watch came back after a gap in which its
	// end may have gone unheard), and with false when the watch is lost,
	// until stop is called; never after stop returned. wake is called
	// from any goroutine and must not block.
	WatchFlight(key string, wake func(live bool)) (stop func())
}

// followPoll is how often an authorization that follows another process's
// looks for the token in the shared store while no [FlightWatcher] tells
// it when that authorization ends (a request of the user's looks at
// once).
const followPoll = 2 * time.Second

// sharedDown is set while the registry fails: its warning is logged once.
var sharedDown atomic.Bool

// Causes of the end of a following authorization's wait.
var (
	errFollowed  = errors.New("the user authorized access through another process's authorization")
	errOwnerGone = errors.New("the other process's authorization ended without a token")
)

// followingKey marks the contexts of [Config.Authorize] calls that follow
// another process's authorization.
type followingKey struct{}

// Follows reports whether the [Config.Authorize] call made with ctx is
// given the URL of another process's authorization of the same user (see
// [FlightRegistry]). The redirect of that URL goes to the other process:
// Authorize shows the user the URL, does not wait for the redirect, and
// returns once ctx ends (the token came, or the other authorization
// ended without one).
func Follows(ctx context.Context) bool {
	v, _ := ctx.Value(followingKey{}).(bool)
	return v
}

// sharedKey is the key of h's authorizations in the registry.
func (h *Handler) sharedKey() string { return h.principal + "\x00" + h.resource }

// begin records f, which sends the user to authURL, in the registry when
// there is one, and returns the URL of another process's authorization
// of the user to follow instead, or "" when f is the fleet's.
func (h *Handler) begin(ctx context.Context, f *flight, authURL string) string {
	if h.shared == nil || f == nil {
		return ""
	}
	owner, mine, err := h.shared.Begin(ctx, h.sharedKey(), authURL, authorizeTimeout)
	switch {
	case err != nil:
		if !sharedDown.Swap(true) {
			h.logger.Warn("OAuth: authorizations are shared by this process alone until the fleet's record of them answers", "error", err)
		}
		return ""
	case mine:
		sharedDown.Store(false)
		f.recorded.Store(true)
		return ""
	case !SameAuthorization(authURL, owner):
		// Not one this process could have made: never send the user there.
		h.logger.Warn("OAuth: the fleet's record of an authorization in flight is not one of this server's; ignored")
		return ""
	}
	sharedDown.Store(false)
	return owner
}

// end forgets f's record in the registry, if it made one.
func (h *Handler) end(f *flight) {
	if !f.recorded.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.shared.End(ctx, h.sharedKey()); err != nil {
		h.logger.Debug("OAuth: the fleet's record of an authorization could not be removed; it expires", "error", err)
	}
}

// follow shows the user ownerURL, the URL of another process's
// authorization, with fetch, until the token that authorization brings is
// in the store (f then succeeds) or it ends without one: the user is then
// asked by f at its own URL, authURL, when f can take the registry's
// record.
func (h *Handler) follow(ctx context.Context, f *flight, fetch auth.AuthorizationCodeFetcher, args *auth.AuthorizationArgs, ownerURL string) (*auth.AuthorizationResult, error) {
	fctx, cancel := context.WithCancelCause(context.WithValue(ctx, followingKey{}, true))
	defer cancel(nil)
	f.follow.Store(&cancel)
	f.following.Store(true)
	defer f.following.Store(false)
	done := make(chan struct{})
	defer close(done)
	w := watchFlight(h.shared, h.sharedKey())
	defer w.stop()
	tick, stop := after(h.clock, followPoll)
	go h.awaitOwner(fctx, f, args.URL, done, w, tick, stop)
	shown := *args
	shown.URL = ownerURL
	res, err := fetch(fctx, &shown)
	switch cause := context.Cause(fctx); {
	case errors.Is(cause, errFollowed):
		return nil, errFollowed
	case errors.Is(cause, errOwnerGone) && ctx.Err() == nil && !f.elsewhere.Load():
		return fetch(ctx, args)
	case err == nil:
		// The redirect is the other process's: a result here is none.
		return nil, errors.New("the authorization of another process cannot complete here")
	}
	return res, err
}

// ownerWatch says when to look again for the end of another process's
// authorization: when the registry's [FlightWatcher] wakes it and, while
// no watch is live, every followPoll.
type ownerWatch struct {
	wake chan struct{} // one look due
	live atomic.Bool   // the watch is in place: no polling
	stop func()        // ends the watch
}

// watchFlight starts the watch of the flight recorded under key in r.
func watchFlight(r FlightRegistry, key string) *ownerWatch {
	w := &ownerWatch{wake: make(chan struct{}, 1), stop: func() {}}
	if fw, ok := r.(FlightWatcher); ok {
		w.stop = fw.WatchFlight(key, func(live bool) {
			w.live.Store(live)
			select {
			case w.wake <- struct{}{}:
			default:
			}
		})
	}
	return w
}

// await calls look each time w wakes it and, while w is not live, at
// each tick (the first one's, then every followPoll on clk), until look
// returns true or ctx ends or done is closed.
func (w *ownerWatch) await(ctx context.Context, done <-chan struct{}, clk clock, tick <-chan struct{}, stop func() bool, look func() bool) {
	defer func() { stop() }()
	for {
		select {
		case <-tick:
			tick = nil
		case <-w.wake:
		case <-done:
			return
		case <-ctx.Done():
			return
		}
		if look() {
			return
		}
		switch {
		case w.live.Load():
			stop()
			tick = nil
		case tick == nil:
			tick, stop = after(clk, followPoll)
		}
	}
}

// FollowFlight waits for the end of another process's authorization, the
// one recorded under key in r, for a program that runs its own
// authorizations (a [Handler] does this itself): it calls look each time
// that authorization may have ended (when r, a [FlightWatcher], says so;
// every two seconds while r has no watch in place) until look returns
// true, or ctx ends. look finds the token in the shared store or, with
// r.Begin, that the authorization ended without one.
func FollowFlight(ctx context.Context, r FlightRegistry, key string, look func() bool) {
	w := watchFlight(r, key)
	defer w.stop()
	tick, stop := after(realClock{}, followPoll)
	w.await(ctx, nil, realClock{}, tick, stop, look)
}

// after returns a channel closed after d on clk, and the function that
// stops it.
func after(clk clock, d time.Duration) (<-chan struct{}, func() bool) {
	c := make(chan struct{})
	return c, clk.AfterFunc(d, func() { close(c) })
}

// awaitOwner looks for the token of the authorization f follows each time
// w says it may have ended, until fctx ends or done is closed, and takes
// the registry's record, for authURL, when that authorization ended
// without one.
func (h *Handler) awaitOwner(fctx context.Context, f *flight, authURL string, done <-chan struct{}, w *ownerWatch, tick <-chan struct{}, stop func() bool) {
	w.await(fctx, done, h.clock, tick, stop, func() bool {
		if h.followed(f) {
			return true
		}
		_, mine, err := h.shared.Begin(fctx, h.sharedKey(), authURL, authorizeTimeout)
		if err != nil || !mine {
			return false
		}
		// The token, if the other authorization got one, was saved
		// before its record went.
		f.recorded.Store(true) // ended with f
		if !h.followed(f) {
			(*f.follow.Load())(errOwnerGone)
		}
		return true
	})
}

// followed reports whether the token of the authorization f follows is in
// the store, and then takes it and ends f's wait, successfully.
func (h *Handler) followed(f *flight) bool {
	if !f.following.Load() {
		return false
	}
	s := h.stored(f.sent)
	if s == nil {
		return false
	}
	h.ts.Store(s)
	if f.elsewhere.CompareAndSwap(false, true) {
		(*f.follow.Load())(errFollowed)
	}
	return true
}

// SameAuthorization reports whether other, the URL of another process's
// authorization (from a [FlightRegistry]), is one of the same
// authorization endpoint, client, redirect URI and response type as own,
// this process's, with one state: a record that says otherwise is not
// trusted with the user.
func SameAuthorization(own, other string) bool {
	a, err1 := url.Parse(own)
	b, err2 := url.Parse(other)
	if err1 != nil || err2 != nil || b.Scheme != a.Scheme || b.Host != a.Host || b.Path != a.Path || b.User != nil || b.Fragment != "" {
		return false
	}
	qa, qb := a.Query(), b.Query()
	for _, p := range []string{"client_id", "redirect_uri", "response_type"} {
		if len(qb[p]) != 1 || qa.Get(p) != qb.Get(p) {
			return false
		}
	}
	return len(qb["state"]) == 1 && qb.Get("state") != ""
}

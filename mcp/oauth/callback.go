package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/llmkit/toolkit/internal/errs"
)

// Bounds of a [Callback] when its [CallbackConfig] gives none.
const (
	// DefaultMaxPendingRedirects is the most authorizations that wait for
	// their redirect at once.
	DefaultMaxPendingRedirects = 1000
	// DefaultMaxPendingRedirectsPerPrincipal is the most of them one
	// principal has.
	DefaultMaxPendingRedirectsPerPrincipal = 8
	// DefaultRedirectExpiry is how long an authorization waits for its
	// redirect (the authorization of a [Handler] ends after as long).
	DefaultRedirectExpiry = authorizeTimeout
)

// MaxRedirectQuery is the longest query, in bytes, of a redirect a
// [Callback] reads; a longer one is answered 414 URI Too Long and ends
// nothing. Authorization codes, states and issuers are far shorter.
const MaxRedirectQuery = 16 << 10

// redirectParameters are the parameters of an authorization response
// (RFC 6749 §4.1.2 and §4.1.2.1, RFC 9207) that a redirect must not
// repeat (RFC 6749 §3.1): a [Callback] refuses one that does.
var redirectParameters = []string{"state", "code", "error", "iss"}

// ErrTooManyAuthorizations, message "unavailable: too many authorizations
// in progress", is wrapped by the error of [Callback.Expect] when the
// callback already waits for as many redirects as it may, in all or for
// the principal. It matches toolkit.ErrUnavailable.
var ErrTooManyAuthorizations = fmt.Errorf("%w: too many authorizations in progress", errs.ErrUnavailable)

// CallbackConfig bounds a [Callback]; zero values take the defaults.
type CallbackConfig struct {
	// MaxPending is the most authorizations waiting for their redirect
	// at once (DefaultMaxPendingRedirects).
	MaxPending int
	// MaxPendingPerPrincipal is the most of them one principal has
	// (DefaultMaxPendingRedirectsPerPrincipal).
	MaxPendingPerPrincipal int
	// Expiry is how long an authorization waits for its redirect
	// (DefaultRedirectExpiry); a redirect that comes later is refused.
	Expiry time.Duration
	// Relay, for a program run as several replicas behind one redirect
	// URL, hands a redirect whose state this callback does not wait for
	// to the replica that does (see [RedirectRelay]); nil: such a
	// redirect is refused.
	Relay RedirectRelay
}

// Callback receives the authorization server's redirects of many
// authorizations, of many users, at one public redirect URL: that of a
// server program (a gateway, say) whose users authorize from their own
// browsers, where a [LoopbackAuthorizer] serves one person at the
// program's own machine. The program serves it (it is an http.Handler)
// at the path of its redirect URL, on its own listener, and gives that
// URL as [Config.RedirectURL]. Each authorization registers the state of
// its authorization URL with [Callback.Expect] before the user is sent
// there, and waits for its redirect with [Expected.Wait].
//
// A redirect counts only for the authorization whose state it carries,
// once: one with no state, or a state no authorization waits for (forged,
// already used, expired, or of a previous run of the program), or that
// repeats one of its parameters, is answered 400 Bad Request and ends
// nothing, so that nobody can end, or use up, another user's login; so
// is one whose query is longer than [MaxRedirectQuery] (414). Of copies
// of one redirect arriving at once, exactly one counts. The answers never
// quote the request. The authorizations waiting are bounded, in all and
// per principal, and each expires.
type Callback struct {
	redirect string
	path     string
	cfg      CallbackConfig
	now      func() time.Time

	mu      sync.Mutex
	byState map[string]*Expected
	per     map[string]int // waiting, by principal

	relaying atomic.Int32 // redirects being relayed
}

// maxRelaying bounds the redirects a Callback relays at once; more are
// refused as unknown.
const maxRelaying = 32

// Expected is an authorization waiting for its redirect (see
// [Callback.Expect]).
type Expected struct {
	c         *Callback
	state     string
	principal string
	deadline  time.Time
	ch        chan loopbackResult // buffered: one result
	arrived   atomic.Bool         // the redirect came
	once      sync.Once
}

// NewCallback returns the callback of redirectURL, an absolute https URL
// with a path and no query or fragment (http is accepted for a loopback
// host, for tests and local use). Anything else wraps
// toolkit.ErrBadParameter.
func NewCallback(redirectURL string, cfg CallbackConfig) (*Callback, error) {
	u, err := url.Parse(redirectURL)
	bad := func(why string) error {
		return fmt.Errorf("%w: redirect URL %q: %s", errs.ErrBadParameter, redirectURL, why)
	}
	switch {
	case err != nil:
		return nil, bad(err.Error())
	case u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return nil, bad("want an absolute https URL")
	case u.Scheme == "http" && !isLoopbackHost(u.Hostname()):
		return nil, bad("want https (http only on a loopback host)")
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, bad("want a URL without user, query or fragment")
	case !strings.HasPrefix(u.Path, "/") || u.Path == "/":
		return nil, bad("want a URL with a path")
	}
	if _, port, err := net.SplitHostPort(u.Host); err == nil && port == "" {
		return nil, bad("empty port")
	}
	if cfg.MaxPending < 0 || cfg.MaxPendingPerPrincipal < 0 || cfg.Expiry < 0 {
		return nil, fmt.Errorf("%w: CallbackConfig: negative bound", errs.ErrBadParameter)
	}
	if cfg.MaxPending == 0 {
		cfg.MaxPending = DefaultMaxPendingRedirects
	}
	if cfg.MaxPendingPerPrincipal == 0 {
		cfg.MaxPendingPerPrincipal = DefaultMaxPendingRedirectsPerPrincipal
	}
	if cfg.Expiry == 0 {
		cfg.Expiry = DefaultRedirectExpiry
	}
	return &Callback{redirect: u.String(), path: u.Path, cfg: cfg, now: time.Now, byState: map[string]*Expected{}, per: map[string]int{}}, nil
}

// RedirectURL returns the redirect URL, for [Config.RedirectURL].
func (c *Callback) RedirectURL() string { return c.redirect }

// Path returns the path of the redirect URL: where the program serves the
// callback.
func (c *Callback) Path() string { return c.path }

// Pending returns how many authorizations wait for their redirect.
func (c *Callback) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byState)
}

// Expect registers the authorization of principal whose authorization URL
// is authURL (the URL of auth.AuthorizationArgs): the redirect that
// carries its state parameter is delivered to the returned Expected,
// which the caller must Close when it no longer waits. It fails with
// toolkit.ErrBadParameter for a URL without a state, with more than one,
// or whose state is already expected, and with an error wrapping
// ErrTooManyAuthorizations beyond the bounds.
func (c *Callback) Expect(principal, authURL string) (*Expected, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, fmt.Errorf("%w: the authorization URL cannot be parsed", errs.ErrBadParameter)
	}
	// An authorization endpoint whose URL carries a state of its own
	// would give the URL two: which one the server sends back is anyone's
	// guess, so none is expected.
	states := u.Query()["state"]
	if len(states) > 1 {
		return nil, fmt.Errorf("%w: the authorization URL has more than one state", errs.ErrBadParameter)
	}
	if len(states) == 0 || states[0] == "" {
		return nil, fmt.Errorf("%w: the authorization URL has no state", errs.ErrBadParameter)
	}
	state := states[0]
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked(now)
	switch {
	case c.byState[state] != nil:
		return nil, fmt.Errorf("%w: the state of the authorization URL is expected already", errs.ErrBadParameter)
	case len(c.byState) >= c.cfg.MaxPending:
		return nil, fmt.Errorf("%w: %d authorizations wait for their redirect, the most allowed", ErrTooManyAuthorizations, c.cfg.MaxPending)
	case c.per[principal] >= c.cfg.MaxPendingPerPrincipal:
		return nil, fmt.Errorf("%w: %d authorizations of this user wait for their redirect, the most allowed", ErrTooManyAuthorizations, c.cfg.MaxPendingPerPrincipal)
	}
	e := &Expected{c: c, state: state, principal: principal, deadline: now.Add(c.cfg.Expiry), ch: make(chan loopbackResult, 1)}
	c.byState[state] = e
	c.per[principal]++
	return e, nil
}

// expireLocked forgets the authorizations whose wait is over; c.mu is
// held.
func (c *Callback) expireLocked(now time.Time) {
	for _, e := range c.byState {
		if !now.Before(e.deadline) {
			c.removeLocked(e)
		}
	}
}

// removeLocked forgets e if it is still waiting; c.mu is held.
func (c *Callback) removeLocked(e *Expected) bool {
	if c.byState[e.state] != e {
		return false
	}
	delete(c.byState, e.state)
	if c.per[e.principal]--; c.per[e.principal] <= 0 {
		delete(c.per, e.principal)
	}
	return true
}

// take returns, and forgets, the authorization waiting for state, or
// nil.
func (c *Callback) take(state string) *Expected {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byState[state]
	if e == nil {
		return nil
	}
	c.removeLocked(e)
	if !now.Before(e.deadline) {
		return nil
	}
	return e
}

// ServeHTTP receives a redirect (GET at the redirect URL's path).
func (c *Callback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path != c.path:
		http.NotFound(w, r)
		return
	case r.Method != http.MethodGet:
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "Method not allowed.", http.StatusMethodNotAllowed)
		return
	}
	if len(r.URL.RawQuery) > MaxRedirectQuery {
		http.Error(w, "The redirect's query is too long.", http.StatusRequestURITooLong)
		return
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	state := q.Get("state")
	if err != nil || state == "" {
		http.Error(w, "This redirect carries no state: it belongs to no authorization.", http.StatusBadRequest)
		return
	}
	for _, k := range redirectParameters {
		if len(q[k]) > 1 {
			http.Error(w, "The redirect repeats a parameter.", http.StatusBadRequest)
			return
		}
	}
	code, refused := q.Get("code"), q.Get("error")
	if code == "" && refused == "" {
		http.Error(w, "The redirect carries no authorization code.", http.StatusBadRequest)
		return
	}
	rd := Redirect{State: state, Code: code, Iss: q.Get("iss"), Error: refused}
	if refused != "" {
		rd.Code = "" // the refusal counts
	}
	taken := c.deliver(rd)
	if !taken && c.cfg.Relay != nil {
		// Another replica may wait for it: the browser came here. Forged
		// redirects make a relay wait in vain, so few wait at once.
		if c.relaying.Add(1) <= maxRelaying {
			taken, _ = c.cfg.Relay.Relay(r.Context(), rd)
		}
		c.relaying.Add(-1)
	}
	switch {
	case !taken:
		http.Error(w, "This redirect belongs to no authorization in progress (its state is unknown, used or expired).", http.StatusBadRequest)
	case refused != "":
		http.Error(w, "Authorization was refused.", http.StatusForbidden)
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "Authorization complete: you may close this window.\n")
	}
}

// errRedirectExpired is the error of a wait that outlived the expiry.
var errRedirectExpired = errors.New("no redirect came back in time")

// Wait waits for the redirect of the authorization and returns its code,
// state and iss, or the authorization server's refusal, or fails when ctx
// ends or the wait expires.
func (e *Expected) Wait(ctx context.Context) (*auth.AuthorizationResult, error) {
	// A redirect that came in time counts, however late the wait.
	select {
	case r := <-e.ch:
		return r.res, r.err
	default:
	}
	t := time.NewTimer(e.deadline.Sub(e.c.now()))
	defer t.Stop()
	select {
	case r := <-e.ch:
		return r.res, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, errRedirectExpired
	}
}

// Arrived reports whether the redirect of the authorization came, as
// the callback answers it: from then on the user has nothing more to
// open, whatever the flow does with the code next. It is false for a nil
// Expected.
func (e *Expected) Arrived() bool { return e != nil && e.arrived.Load() }

// Close forgets the authorization: its redirect, if it comes, is refused.
func (e *Expected) Close() {
	e.once.Do(func() {
		e.c.mu.Lock()
		defer e.c.mu.Unlock()
		e.c.removeLocked(e)
	})
}

package mcp

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/mcp/bridge"
)

// upstream chooses the session each request of a caller goes on. New
// picks one for the connector's mode, once:
//
//   - shared: every request goes on the connector's own session;
//   - *perClient (OptPerClient): a client's requests go on an upstream
//     session of that client's own, a principal's requests without a
//     client session on one of that principal's (perclient.go,
//     perclient_sessionless.go);
//   - *perUser (OptOAuthPerUser and kin): as perClient, each session
//     authorized as its client's user, who may be asked first
//     (peruser.go).
//
// A request (Connector.doRequest) asks it for a session and never looks
// at the mode itself.
type upstream interface {
	// session returns the session the request made in ctx goes on, and
	// the context to make it in.
	session(ctx context.Context) (context.Context, *live, error)
	// again reports whether a request that failed with err, before the
	// server saw it, is made once more on the session asked anew.
	again(err error) bool
	// lose reports whether l is one of its own sessions, which it then
	// closes: the next request opens another.
	lose(l *live) bool
	// run starts the sessions' life with Run's ctx; the function it
	// returns, when Run ends, closes them and waits until they are.
	run(ctx context.Context) func()
	// clientStarted is told that a client's session started.
	clientStarted(cl bridge.Client)
}

// newUpstream returns the upstream of c's mode, as its options say.
func newUpstream(c *Connector) upstream {
	o := &c.o
	if o.perClient == 0 {
		return shared{c}
	}
	pc := &perClient{
		c:            c,
		max:          o.perClient,
		perPrincipal: cmp.Or(o.clientLimits.PerPrincipal, DefaultMaxClientSessionsPerPrincipal),
		leases:       o.clientLimits.Leases,
		idle:         cmp.Or(o.hooks.userIdle, o.clientLimits.Idle, DefaultClientSessionIdle),
		by:           map[bridge.Client]*clientUpstream{},
		sessionless:  map[string]*userClient{},
	}
	if o.perUser == nil {
		return pc
	}
	pu := &perUser{c: c, clients: pc, flow: o.perUser, wait: cmp.Or(o.userWait, DefaultUserAuthorizationWait), users: map[string]*User{}}
	pc.dial = pu.dialContext
	return pu
}

// clientSessions returns the upstream sessions of c's clients, or nil
// when c shares its own.
func (c *Connector) clientSessions() *perClient {
	switch u := c.up.(type) {
	case *perClient:
		return u
	case *perUser:
		return u.clients
	}
	return nil
}

// shared is the upstream of a connector whose callers share its own
// session.
type shared struct{ c *Connector }

func (s shared) session(ctx context.Context) (context.Context, *live, error) {
	l, err := s.c.acquire(ctx)
	return ctx, l, err
}

func (shared) again(error) bool            { return false }
func (shared) lose(*live) bool             { return false }
func (shared) run(context.Context) func()  { return func() {} }
func (shared) clientStarted(bridge.Client) {}

// acquire returns the ready session, waiting up to Reconnect.Wait for one.
func (c *Connector) acquire(ctx context.Context) (*live, error) {
	var timer *time.Timer
	for {
		c.life.mu.Lock()
		l, stopped, ch := c.life.cur, c.life.stopped, c.life.readyCh
		c.life.mu.Unlock()
		if err := c.oauthPending(); err != nil {
			return nil, err
		}
		if l != nil {
			return l, nil
		}
		if stopped {
			return nil, fmt.Errorf("%w: connector %s is not running", errs.ErrClosed, c.label())
		}
		if timer == nil {
			timer = time.NewTimer(c.o.reconnectWait)
			defer timer.Stop()
			// Cut the supervisor's backoffs short while this call waits:
			// a caller needs the server now (see Connector.backoff).
			c.sig.waiters.Add(1)
			defer c.sig.waiters.Add(-1)
			select {
			case c.sig.kick <- struct{}{}:
			default:
			}
			if c.o.hooks.waiting != nil {
				c.o.hooks.waiting()
			}
		}
		select {
		case <-ch:
		case <-timer.C:
			st := c.State()
			detail := ""
			if st.LastError != "" {
				detail = ": " + st.LastError
			}
			return nil, fmt.Errorf("%w: server %s is %s after waiting %v%s", errs.ErrUnavailable, c.serverName(), st.Status, c.o.reconnectWait, detail)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

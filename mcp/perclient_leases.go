package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"
)

// SessionLeases counts the upstream sessions of each principal across
// the processes that share it (ClientSessionLimits.Leases), so that a
// fleet of replicas holds a principal to one share, not to one share
// each. A session holds a lease while it is open and renews it; a lease
// not renewed expires, so the sessions of a process that died stop
// counting. Package redisstate has one on Redis. Its methods are called
// concurrently.
type SessionLeases interface {
	// Lease takes, or renews, the lease id among those counted under key,
	// for ttl, when fewer than limit other leases under key are live; it
	// reports whether id holds one. Its error (the store unreachable)
	// wraps toolkit.ErrUnavailable.
	Lease(ctx context.Context, key, id string, limit int, ttl time.Duration) (bool, error)
	// Release gives back the lease id under key; releasing one not held
	// does nothing.
	Release(ctx context.Context, key, id string) error
}

// clientLeaseTTL is how long a session's lease lasts unless renewed; it
// is renewed three times as often.
const clientLeaseTTL = 30 * time.Second

// lease is a client's upstream session's place in its principal's share
// across processes.
type lease struct {
	mu    sync.Mutex
	key   string // "" until a lease was asked for
	id    string
	held  bool
	unrec bool // an error was logged for it: the next is not
}

// holdLease takes the lease of up's session in its principal's share
// across processes, unless it was taken already, and refuses the session
// when the share is full and none of the principal's sessions here is
// idle. While the leases cannot be reached the session is admitted (the
// share of this process still holds) and the lease taken at the next
// renewal.
func (p *perClient) holdLease(ctx context.Context, up *clientUpstream) error {
	if p.leases == nil {
		return nil
	}
	p.mu.Lock()
	principal := up.principal
	p.mu.Unlock()
	if principal == "" {
		return nil
	}
	l := &up.lease
	key, id := p.c.label()+"\x00"+principal, newLeaseID()
	l.mu.Lock()
	if l.key != "" {
		l.mu.Unlock()
		return nil
	}
	l.key, l.id = key, id // asked for: no other call asks again
	l.mu.Unlock()
	// No lock is held while the leases are asked: reclaiming takes p.mu
	// and another session's lease.
	ok, err := p.leases.Lease(ctx, key, id, p.perPrincipal, clientLeaseTTL)
	if err == nil && !ok {
		// An idle session of the principal's here makes room.
		p.mu.Lock()
		victim := p.reclaim(p.c, func(o *clientUpstream) bool { return o != up && o.principal == principal })
		p.mu.Unlock()
		if victim != nil {
			p.releaseLease(ctx, victim)
			ok, err = p.leases.Lease(ctx, key, id, p.perPrincipal, clientLeaseTTL)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err != nil:
		p.c.logger.Warn("the sessions of a principal are counted by this process alone until their leases can be taken", "error", err)
		l.unrec = true
	case !ok:
		return fmt.Errorf("%w: server %s: the clients of principal %q have %d sessions open across the processes sharing the count, their share (ClientSessionLimits.PerPrincipal, max_upstream_sessions_per_principal), and none is idle here: retry when one has ended", ErrTooManyClientSessions, p.c.serverName(), principal, p.perPrincipal)
	}
	l.held = ok
	return nil
}

// renewLease renews the lease of up's session, or takes it when it could
// not be taken before. When the lease is refused, the principal has more
// sessions open across the processes than its share (this process
// admitted some while the leases could not be reached): the least
// recently used of its sessions here is ended (see overShare).
func (p *perClient) renewLease(ctx context.Context, up *clientUpstream) {
	l := &up.lease
	l.mu.Lock()
	if l.key == "" {
		l.mu.Unlock()
		return
	}
	ok, err := p.leases.Lease(ctx, l.key, l.id, p.perPrincipal, clientLeaseTTL)
	if err != nil {
		if !l.unrec {
			p.c.logger.Warn("the lease of a principal's session could not be renewed", "error", err)
		}
		l.unrec = true
		l.mu.Unlock()
		return
	}
	l.held, l.unrec = ok, false
	l.mu.Unlock()
	if !ok {
		p.overShare(ctx, up)
	}
}

// overShare ends the least recently used session here of the principal
// of up, whose lease was refused: over the principal's share across the
// processes. When that is another session, its lease, if it holds one,
// goes to up's.
func (p *perClient) overShare(ctx context.Context, up *clientUpstream) {
	p.mu.Lock()
	victim := p.leastUsed(p.c, func(o *clientUpstream) bool { return o.principal == up.principal }, false)
	if victim != nil {
		delete(p.by, victim.client)
		victim.end("over its principal's share of sessions across the processes")
	}
	p.mu.Unlock()
	if victim == nil {
		return
	}
	p.c.logger.Warn("a principal has more sessions open across the processes than its share (admitted while their leases could not be taken): its least recently used session here is closed", "principal", up.principal, "share", p.perPrincipal)
	if victim == up {
		return
	}
	p.releaseLease(ctx, victim)
	l := &up.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	if ok, err := p.leases.Lease(ctx, l.key, l.id, p.perPrincipal, clientLeaseTTL); err == nil {
		l.held = ok
	}
}

// releaseLease gives back the lease of up's session, if it holds one.
func (p *perClient) releaseLease(ctx context.Context, up *clientUpstream) {
	if p.leases == nil {
		return
	}
	l := &up.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held {
		return
	}
	l.held = false
	if err := p.leases.Release(context.WithoutCancel(ctx), l.key, l.id); err != nil {
		p.c.logger.Debug("a session's lease was not released: it expires", "error", err)
	}
}

// newLeaseID returns a lease's random id.
func newLeaseID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

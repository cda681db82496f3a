package mcp

import (
	"fmt"
	"math"
	"time"

	"github.com/llmkit/toolkit/mcp/bridge"
)

// DefaultMaxClientSessionsPerPrincipal is the most upstream sessions the
// clients of one principal keep open at once on a connector made with
// OptPerClient, unless ClientSessionLimits.PerPrincipal says otherwise.
const DefaultMaxClientSessionsPerPrincipal = 10

// DefaultClientSessionIdle is how long a client's upstream session
// (OptPerClient) stays open with no call of its client, unless
// ClientSessionLimits.Idle says otherwise.
const DefaultClientSessionIdle = 10 * time.Minute

// reclaimAfter is the least time a client's upstream session has had no
// call before another client may take its place at a limit.
const reclaimAfter = time.Minute

// ClientSessionLimits shares out the upstream sessions of clients of a
// connector made with OptPerClient. A zero field leaves its setting as it
// is: the default, unless an earlier OptPerClient set it. At a limit, the
// session of a client that has made no call for a minute, the least
// recently used, is closed to make room (a session of the same
// principal's at its share, any at Max); with none, the call is refused
// at once with an error wrapping ErrTooManyClientSessions that says whose
// limit it is.
type ClientSessionLimits struct {
	// Max bounds the upstream sessions open at once (default
	// DefaultMaxClientSessions).
	Max int
	// PerPrincipal bounds the sessions of the clients of one principal
	// (bridge.ClientPrincipal; the calls without a client session of a
	// principal count as one client), so that one token cannot take every
	// session Max allows (default
	// DefaultMaxClientSessionsPerPrincipal). Anonymous clients are bounded
	// by OptPerClient's maximum alone.
	PerPrincipal int
	// Idle closes a client's upstream session (reaping a stdio server)
	// when none of its client's calls is in flight and none has started
	// for this long, whether or not the client's session goes on (default
	// DefaultClientSessionIdle): the client's next call opens another.
	Idle time.Duration
	// Leases, when set, counts PerPrincipal across every process that
	// shares it (the replicas of a gateway): a principal holds its share
	// in the fleet, not in each process. Sessions admitted while the
	// leases cannot be reached count against the process's own share;
	// once they can, a principal found over its share in the fleet has
	// its least recently used session here closed (with a warning), as
	// an idle one is. Without it each connector counts its own sessions.
	// See [SessionLeases].
	Leases SessionLeases
}

// principalOf returns the principal of cl, "" for an anonymous client.
func principalOf(cl bridge.Client) string {
	if cp, ok := cl.(bridge.ClientPrincipal); ok {
		return cp.Principal()
	}
	return ""
}

// makeRoom makes room for a session of a client of principal, closing an
// idle session when a limit is reached, or says whose limit refuses it.
// p.mu is held.
func (p *perClient) makeRoom(c *Connector, principal string) error {
	if principal != "" && p.countOf(principal) >= p.perPrincipal &&
		p.reclaim(c, func(up *clientUpstream) bool { return up.principal == principal }) == nil {
		return p.shareError(c, principal)
	}
	if len(p.by) >= p.max && p.reclaim(c, func(*clientUpstream) bool { return true }) == nil {
		return fmt.Errorf("%w: server %s has %d client sessions open, the most allowed for all principals (OptPerClient, max_upstream_sessions), and none is idle: retry when one has ended", ErrTooManyClientSessions, c.serverName(), p.max)
	}
	return nil
}

// adopt counts up's session as one of principal's, the principal its
// client is now known to be of (a client's principal is known from its
// first call on, and its session may open before); when that is beyond
// the principal's share and none of its other sessions is idle, it
// closes up's session and says so. p.mu is held.
func (p *perClient) adopt(c *Connector, up *clientUpstream, principal string) error {
	up.principal = principal
	if p.countOf(principal) <= p.perPrincipal ||
		p.reclaim(c, func(o *clientUpstream) bool { return o != up && o.principal == principal }) != nil {
		return nil
	}
	delete(p.by, up.client)
	up.end("beyond its principal's share")
	return p.shareError(c, principal)
}

// shareError is the refusal of a session beyond the share of principal.
func (p *perClient) shareError(c *Connector, principal string) error {
	return fmt.Errorf("%w: server %s: the clients of principal %q have %d sessions open, their share (ClientSessionLimits.PerPrincipal, max_upstream_sessions_per_principal), and none is idle: retry when one has ended", ErrTooManyClientSessions, c.serverName(), principal, p.perPrincipal)
}

// countOf returns how many sessions the clients of principal have. p.mu
// is held.
func (p *perClient) countOf(principal string) int {
	n := 0
	for _, up := range p.by {
		if up.principal == principal {
			n++
		}
	}
	return n
}

// reclaim closes the least recently used session among those of which
// reports true that is open, has no call in flight and has had none for
// reclaimAfter; it returns the one it closed, or nil. p.mu is held.
func (p *perClient) reclaim(c *Connector, of func(*clientUpstream) bool) *clientUpstream {
	victim := p.leastUsed(c, of, true)
	if victim == nil {
		return nil
	}
	delete(p.by, victim.client)
	victim.end("reclaimed for another client")
	return victim
}

// leastUsed returns the least recently used open session among those of
// which reports true; with idle, only those with no call in flight and
// none for reclaimAfter. p.mu is held.
func (p *perClient) leastUsed(c *Connector, of func(*clientUpstream) bool, idle bool) *clientUpstream {
	var busy map[*live]bool
	cutoff := int64(math.MaxInt64)
	if idle {
		busy = c.calls.sessionsInUse()
		cutoff = c.now().Add(-reclaimAfter).UnixNano()
	}
	var victim *clientUpstream
	for _, up := range p.by {
		if !of(up) || !up.open() || busy[up.l] {
			continue
		}
		if used := up.used.Load(); used <= cutoff && (victim == nil || used < victim.used.Load()) {
			victim = up
		}
	}
	return victim
}

// idleLeft returns how long up's session may still stay idle: 0 when it
// has been idle for p.idle.
func (p *perClient) idleLeft(c *Connector, up *clientUpstream) time.Duration {
	if c.calls.sessionsInUse()[up.l] {
		return p.idle
	}
	return max(0, p.idle-c.now().Sub(time.Unix(0, up.used.Load())))
}

// open reports whether up's session is open.
func (up *clientUpstream) open() bool {
	select {
	case <-up.ready:
		return up.err == nil
	default:
		return false
	}
}

// sessionsInUse returns the sessions requests are in progress on.
func (r *callRegistry) sessionsInUse() map[*live]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	in := make(map[*live]bool, len(r.calls))
	for _, call := range r.calls {
		in[call.l] = true
	}
	return in
}

// now returns the connector's clock.
func (c *Connector) now() time.Time {
	if c.o.hooks.now != nil {
		return c.o.hooks.now()
	}
	return time.Now()
}

package redisstate

import (
	"context"
	"fmt"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
	"github.com/redis/go-redis/v9"
)

// SessionLeases counts the upstream sessions of each principal across a
// fleet on Redis, an [mcp.SessionLeases]: a principal's share
// (max_upstream_sessions_per_principal) holds across the replicas. The
// leases under a key are one sorted set, each lease's score the moment it
// expires by Redis's own clock, so the replicas' clocks do not matter and
// the sessions of a replica that died stop counting when their leases
// expire. A lease said to expire later than any lease could (a forged
// one) is dropped. Get one from [Store.SessionLeases].
type SessionLeases struct {
	s *Store
}

var _ mcp.SessionLeases = (*SessionLeases)(nil)

// SessionLeases returns the store's [SessionLeases], for
// mcp.ClientSessionLimits.Leases.
func (s *Store) SessionLeases() *SessionLeases { return &SessionLeases{s: s} }

// takeLease takes or renews the lease ARGV[1] in KEYS[1] for ARGV[3]
// milliseconds when fewer than ARGV[2] others are live; 1 when held, 0
// when the share is full.
var takeLease = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '(' .. (now + ttl), '+inf')
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
	return 0
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
return 1`)

// Lease implements [mcp.SessionLeases].
func (sl *SessionLeases) Lease(ctx context.Context, key, id string, limit int, ttl time.Duration) (bool, error) {
	if id == "" || limit < 1 || ttl < time.Millisecond {
		return false, fmt.Errorf("%w: redisstate: lease %q: limit %d, ttl %v", toolkit.ErrBadParameter, id, limit, ttl)
	}
	ctx, cancel := sl.s.bound(ctx)
	defer cancel()
	n, err := takeLease.Run(ctx, sl.s.rdb, []string{sl.s.key("leases", key)}, id, limit, ttl.Milliseconds()).Int()
	if err != nil {
		return false, sl.s.fail("session lease", err)
	}
	return n == 1, nil
}

// Release implements [mcp.SessionLeases].
func (sl *SessionLeases) Release(ctx context.Context, key, id string) error {
	ctx, cancel := sl.s.bound(ctx)
	defer cancel()
	return sl.s.fail("release a session lease", sl.s.rdb.ZRem(ctx, sl.s.key("leases", key), id).Err())
}

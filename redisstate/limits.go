package redisstate

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/llmkit/toolkit/policy"
	"github.com/redis/go-redis/v9"
)

// LimitStore keeps the policy engine's rate-limit budgets in Redis, a
// [policy.LimitStore] every process of a fleet shares: a limit of 120
// calls a minute admits 120 calls a minute across all replicas. Each
// budget is a token bucket kept as one Redis key (its theoretical arrival
// time, GCRA), expiring once full again; the budgets of a call are taken
// together in one script, all or none, against Redis's own clock, so the
// replicas' clocks do not matter. Get one from [Store.Limits].
type LimitStore struct {
	s *Store
}

var _ policy.LimitStore = (*LimitStore)(nil)

// Limits returns the store's [LimitStore], for policy.WithLimitStore.
func (s *Store) Limits() *LimitStore { return &LimitStore{s: s} }

// takeBudgets is GCRA over several buckets at once. KEYS are the buckets;
// ARGV[2i-1], ARGV[2i] the emission interval and the burst of KEYS[i],
// in microseconds and calls. It returns {0, 0} when every bucket had room
// (each then charged), or {i, wait} for the first bucket without room,
// wait in microseconds (nothing charged).
var takeBudgets = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tats = {}
for i, key in ipairs(KEYS) do
	local interval = tonumber(ARGV[2*i-1])
	local burst = tonumber(ARGV[2*i])
	local tat = tonumber(redis.call('GET', key) or now)
	if tat < now then tat = now end
	local new = tat + interval
	local allowed = new - burst * interval
	if allowed > now then
		return {i, math.ceil(allowed - now)}
	end
	tats[i] = new
end
for i, key in ipairs(KEYS) do
	redis.call('SET', key, string.format('%d', tats[i]), 'PX', math.ceil((tats[i] - now) / 1000) + 1)
end
return {0, 0}`)

// Take implements [policy.LimitStore].
func (l *LimitStore) Take(ctx context.Context, budgets []policy.Budget) (int, time.Duration, error) {
	keys := make([]string, len(budgets))
	args := make([]any, 0, 2*len(budgets))
	for i, b := range budgets {
		if b.Every <= 0 || b.Burst < 1 {
			return -1, 0, fmt.Errorf("redisstate: budget %d: rate %v, burst %d", i, b.Every, b.Burst)
		}
		// One hash tag for every budget: a cluster keeps them in one slot,
		// so one script takes them together.
		keys[i] = l.s.prefix + "{limits}:" + l.s.key("b", b.Key)[len(l.s.prefix):]
		interval := math.Ceil(1e6 / b.Every)
		args = append(args, strconv.FormatFloat(interval, 'f', 0, 64), b.Burst)
	}
	ctx, cancel := l.s.bound(ctx)
	defer cancel()
	res, err := takeBudgets.Run(ctx, l.s.rdb, keys, args...).Int64Slice()
	if err != nil {
		return -1, 0, l.s.fail("rate limit", err)
	}
	if len(res) != 2 || res[0] < 0 || res[0] > int64(len(budgets)) {
		return -1, 0, fmt.Errorf("redisstate: rate limit: unexpected answer %v", res)
	}
	if res[0] == 0 {
		return -1, 0, nil
	}
	return int(res[0]) - 1, time.Duration(res[1]) * time.Microsecond, nil
}

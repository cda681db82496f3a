package redisstate

import (
	"context"
	"time"

	"github.com/llmkit/toolkit/mcp/mcpserver"
)

// ReplaySet remembers on Redis which input-round states the replicas of a
// fleet answered, a [mcpserver.ReplaySet]: a relayed round answered on
// one replica is refused on the others. Each state is one key, set only
// if absent and expiring with the state. Get one from [Store.Replays].
type ReplaySet struct {
	s *Store
}

var _ mcpserver.ReplaySet = (*ReplaySet)(nil)

// Replays returns the store's [ReplaySet], for mcpserver.WithReplaySet.
func (s *Store) Replays() *ReplaySet { return &ReplaySet{s: s} }

// Redeem implements [mcpserver.ReplaySet].
func (r *ReplaySet) Redeem(ctx context.Context, id string, until time.Time) (bool, error) {
	ttl := time.Until(until)
	if ttl <= 0 {
		return false, nil // expired: refused as answered
	}
	ctx, cancel := r.s.bound(ctx)
	defer cancel()
	first, err := r.s.rdb.SetNX(ctx, r.s.key("replay", id), 1, ttl+time.Second).Result()
	if err != nil {
		return false, r.s.fail("replay check", err)
	}
	return first, nil
}

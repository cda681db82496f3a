package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/llmkit/toolkit"
)

// WithInputStateKeys gives the keys that seal the requestState of the
// input-required results a 2026-07-28 client gets when a tool asks it
// for input (see the guide docs/serving.md, "Requests to a 2026-07-28 client"):
// AES-GCM keys of 16, 24 or 32 bytes. The first seals; every key opens,
// so a key is rotated by putting the new one first and dropping the old
// one after InputWait. Without the option a random key is made for each
// Server, so only that Server opens its requestStates.
//
// Servers that share a key open each other's requestStates, but a call
// that waits for input runs in the process that started it: a retry that
// reaches another replica is refused (-32602, saying the call does not
// wait there), so the rounds of one call need the same replica (sticky
// sessions). What a shared key buys is that a retry is never taken for a
// forgery by another replica, and that a later layout of the state can be
// resumed anywhere. The keys are copied.
func WithInputStateKeys(keys ...[]byte) Option {
	return func(c *config) error {
		if len(keys) == 0 {
			return fmt.Errorf("%w: WithInputStateKeys: no key", toolkit.ErrBadParameter)
		}
		c.inputKeys = nil
		for i, k := range keys {
			if n := len(k); n != 16 && n != 24 && n != 32 {
				return fmt.Errorf("%w: WithInputStateKeys: key %d has %d bytes, want 16, 24 or 32", toolkit.ErrBadParameter, i, n)
			}
			c.inputKeys = append(c.inputKeys, append([]byte(nil), k...))
		}
		return nil
	}
}

// ReplaySet remembers which requestStates were answered, for servers that
// share it (the replicas of a fleet): a relayed upstream round (see
// [WithInputStateKeys]) may be answered on any replica, and with a
// shared set it is answered once in the fleet rather than once per
// replica. Package github.com/llmkit/toolkit/redisstate has one on Redis.
type ReplaySet interface {
	// Redeem records id as answered until until and reports whether it
	// was not already. An error (the set cannot be reached) refuses the
	// retry: answering it could answer it twice.
	Redeem(ctx context.Context, id string, until time.Time) (bool, error)
}

// WithReplaySet checks every answer to a relayed upstream round against
// set as well as against the server's own memory, so that a state
// answered on one replica is refused on the others. Rounds that wait in
// this server need no more: only this server can resume them.
func WithReplaySet(set ReplaySet) Option {
	return func(c *config) error {
		if set == nil {
			return fmt.Errorf("%w: WithReplaySet: nil set", toolkit.ErrBadParameter)
		}
		c.replays = set
		return nil
	}
}

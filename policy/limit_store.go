package policy

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/llmkit/toolkit"
)

// Budget is one rate-limit budget a call counts against, as a
// [LimitStore] sees it: a token bucket of Burst calls refilled at Every
// calls a second.
type Budget struct {
	// Key names the budget; processes that share a store and a
	// configuration give the same budget the same key. It holds the
	// limit's configuration and the principal, namespace and tool it
	// counts, so a store should hash it before using it as a name.
	Key   string
	Every float64
	Burst int
}

// LimitStore keeps rate-limit budgets that several processes share, so
// that a fleet of replicas allows what one process would (a limit of
// 120/m is 120/m for the fleet, not 120/m per replica). Give one to
// [WithLimitStore]; without one each engine keeps its budgets in memory.
// Package github.com/llmkit/toolkit/redisstate has one on Redis.
type LimitStore interface {
	// Take takes one call from every budget, or from none: it returns -1
	// when the call is admitted, or the index of a budget without room
	// and how long until it has some. An error (the store is unreachable)
	// takes nothing.
	Take(ctx context.Context, budgets []Budget) (refused int, retryAfter time.Duration, err error)
}

// WithLimitStore keeps the engine's rate-limit budgets in store, shared
// with every process that uses it, instead of in memory. When the store
// fails (unreachable, too slow), a call is admitted when failOpen, and
// refused under the limit's rule otherwise, saying why; either way one
// warning a minute is logged.
func WithLimitStore(store LimitStore, failOpen bool) Option {
	return func(o *options) error {
		if store == nil {
			return fmt.Errorf("%w: WithLimitStore: nil store", toolkit.ErrBadParameter)
		}
		o.limitStore = &sharedLimits{store: store, failOpen: failOpen}
		return nil
	}
}

// sharedLimits counts calls in a LimitStore.
type sharedLimits struct {
	store    LimitStore
	failOpen bool
	logger   *slog.Logger
	warned   atomic.Int64 // unix seconds of the last warning
}

// admit takes one call from every budget of s that req counts against,
// in store.
func (sh *sharedLimits) admit(ctx context.Context, s limitSet, req *toolkit.PolicyRequest) (toolkit.Decision, bool) {
	var (
		buf     [4]Budget
		lbuf    [4]*limit
		budgets = buf[:0]
		limits  = lbuf[:0]
	)
	for _, l := range s {
		if !l.matches(req) {
			continue
		}
		k := l.bucketKey(req)
		budgets = append(budgets, Budget{
			Key:   l.spec + "\x00" + k.principal + "\x00" + k.ns + "\x00" + k.tool,
			Every: float64(l.every), Burst: l.burst,
		})
		limits = append(limits, l)
	}
	if len(budgets) == 0 {
		return toolkit.Decision{}, true
	}
	refused, wait, err := sh.store.Take(ctx, budgets)
	switch {
	case err != nil:
		if now := time.Now().Unix(); sh.warned.Load() < now-60 {
			sh.warned.Store(now)
			sh.logger.Warn("policy: the shared rate-limit store failed", "error", err, "fail_open", sh.failOpen)
		}
		if sh.failOpen {
			return toolkit.Decision{}, true
		}
		return toolkit.Decision{Effect: toolkit.Deny, Rule: limits[0].name, RetryAfter: time.Second,
			Reason: "the shared rate-limit store is unavailable"}, false
	case refused >= 0 && refused < len(limits):
		l := limits[refused]
		return toolkit.Decision{Effect: toolkit.Deny, Rule: l.name, RetryAfter: max(wait, time.Millisecond),
			Reason: fmt.Sprintf("more than %v calls", l.rateText())}, false
	}
	return toolkit.Decision{}, true
}

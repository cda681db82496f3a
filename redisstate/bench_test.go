package redisstate

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/redistest"
	"github.com/llmkit/toolkit/policy"
	"github.com/llmkit/toolkit/tool"
)

// BenchmarkDecideRateLimit is one call's rate-limit decision with the
// budgets in process (the baseline) and on Redis (one script round trip
// over the local socket), a limit that never refuses.
func BenchmarkDecideRateLimit(b *testing.B) {
	srv := redistest.Start(b)
	cfg := policy.Config{RateLimits: []policy.Limit{{Name: "per-user", Per: "principal", Rate: policy.Rate{Count: 1_000_000_000, Period: time.Second}}}}
	echoTool := tool.Must("echo", "Echoes.", echo)
	req := toolkit.PolicyRequest{Principal: "alice", Namespace: "builtin", Tool: echoTool}
	quiet := policy.WithLogger(slog.New(slog.DiscardHandler))
	run := func(b *testing.B, e *policy.Engine) {
		for b.Loop() {
			if d := e.Decide(context.Background(), req); d.Effect != toolkit.Allow {
				b.Fatalf("refused: %+v", d)
			}
		}
	}
	b.Run("in-process", func(b *testing.B) {
		e, err := policy.New(context.Background(), cfg, quiet)
		if err != nil {
			b.Fatal(err)
		}
		run(b, e)
	})
	b.Run("redis", func(b *testing.B) {
		st := newStoreB(b, srv, Config{})
		e, err := policy.New(context.Background(), cfg, policy.WithLimitStore(st.Limits(), false), quiet)
		if err != nil {
			b.Fatal(err)
		}
		run(b, e)
	})
}

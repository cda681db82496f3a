package redisstate

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/redistest"
	"github.com/llmkit/toolkit/policy"
	"github.com/llmkit/toolkit/tool"
)

type echoIn struct {
	S string `json:"s"`
}

func echo(_ context.Context, in echoIn) (string, error) { return in.S, nil }

// TestLimitsAcrossReplicas: three policy engines (three replicas) share
// one Redis limit of 600 calls a minute with a burst of 10, and 30
// callers call as fast as they can: the fleet admits at most the burst
// plus what the rate refills over the time measured — not three times
// that — and at least the burst.
func TestLimitsAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	cfg := policy.Config{RateLimits: []policy.Limit{{Name: "fleet", Rate: policy.Rate{Count: 600, Period: time.Minute}, Burst: 10}}}
	var engines []*policy.Engine
	for range 3 {
		st := newStore(t, srv, Config{})
		e, err := policy.New(context.Background(), cfg, policy.WithLimitStore(st.Limits(), false), policy.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		engines = append(engines, e)
	}
	echoTool := tool.Must("echo", "Echoes.", echo)
	var admitted, refused atomic.Int64
	start := time.Now()
	const calls = 40
	var wg sync.WaitGroup
	for c := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := engines[c%3]
			for range calls {
				d := e.Decide(context.Background(), toolkit.PolicyRequest{Principal: "p", Namespace: "builtin", Tool: echoTool})
				switch {
				case d.Effect == toolkit.Allow:
					admitted.Add(1)
				case d.Rule == "fleet" && d.RetryAfter > 0:
					refused.Add(1)
				default:
					t.Errorf("decision %+v", d)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	most := 10 + int64(elapsed.Seconds()*10) + 1 // burst + 10/s refill
	if got := admitted.Load(); got > most || got < 10 {
		t.Errorf("the fleet admitted %d calls in %v; want from 10 (the burst) to %d", got, elapsed, most)
	}
	if admitted.Load()+refused.Load() != 30*calls {
		t.Errorf("%d admitted + %d refused of %d", admitted.Load(), refused.Load(), 30*calls)
	}
	t.Logf("%d admitted, %d refused in %v", admitted.Load(), refused.Load(), elapsed)
}

// TestLimitsAllOrNothing: a call refused by its second budget takes
// nothing from its first.
func TestLimitsAllOrNothing(t *testing.T) {
	srv := redistest.Start(t)
	l := newStore(t, srv, Config{}).Limits()
	ctx := context.Background()
	wide := policy.Budget{Key: "wide", Every: 0.001, Burst: 5}
	narrow := policy.Budget{Key: "narrow", Every: 0.001, Burst: 1}
	if i, _, err := l.Take(ctx, []policy.Budget{wide, narrow}); i != -1 || err != nil {
		t.Fatalf("first call: refused by %d, %v", i, err)
	}
	for range 3 {
		i, wait, err := l.Take(ctx, []policy.Budget{wide, narrow})
		if i != 1 || err != nil || wait < 900*time.Second {
			t.Fatalf("narrow budget spent: refused by %d after %v, %v; want 1, about 1000 s", i, wait, err)
		}
	}
	// wide was charged once: four more fit.
	for n := range 4 {
		if i, _, err := l.Take(ctx, []policy.Budget{wide}); i != -1 || err != nil {
			t.Fatalf("wide budget, call %d: refused by %d, %v", n+2, i, err)
		}
	}
	if i, _, _ := l.Take(ctx, []policy.Budget{wide}); i != 0 {
		t.Errorf("wide budget after 5 calls: refused by %d, want 0", i)
	}
	srv.Kill()
	if _, _, err := l.Take(ctx, []policy.Budget{wide}); !errors.Is(err, toolkit.ErrUnavailable) {
		t.Errorf("Redis down: %v, want ErrUnavailable", err)
	}
}

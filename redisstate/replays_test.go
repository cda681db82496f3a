package redisstate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/redistest"
)

func TestReplaysAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	a := newStore(t, srv, Config{Timeout: 500 * time.Millisecond}).Replays()
	b := newStore(t, srv, Config{}).Replays()
	ctx := context.Background()
	until := time.Now().Add(time.Minute)
	if first, err := a.Redeem(ctx, "call-1", until); !first || err != nil {
		t.Fatalf("first answer: %v, %v", first, err)
	}
	for _, r := range []*ReplaySet{a, b} {
		if first, err := r.Redeem(ctx, "call-1", until); first || err != nil {
			t.Errorf("a replay: %v, %v; want refused", first, err)
		}
	}
	if first, _ := b.Redeem(ctx, "call-2", until); !first {
		t.Error("another state was refused")
	}
	if first, _ := b.Redeem(ctx, "call-3", time.Now().Add(-time.Second)); first {
		t.Error("an expired state was taken")
	}
	srv.Kill()
	if _, err := a.Redeem(ctx, "call-4", until); !errors.Is(err, toolkit.ErrUnavailable) {
		t.Errorf("Redis down: %v, want ErrUnavailable", err)
	}
}

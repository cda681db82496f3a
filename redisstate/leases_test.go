package redisstate

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/redistest"
	"github.com/redis/go-redis/v9"
)

// TestSessionLeasesShare: two replicas share a principal's share of 2
// sessions: a third lease is refused on either, a renewal of a held one
// is not, a released one makes room, another principal has a share of
// its own.
func TestSessionLeasesShare(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newStore(t, srv, Config{}).SessionLeases(), newStore(t, srv, Config{}).SessionLeases()
	ctx := context.Background()
	take := func(l *SessionLeases, key, id string) bool {
		t.Helper()
		ok, err := l.Lease(ctx, key, id, 2, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !take(a, "fs\x00alice", "1") || !take(b, "fs\x00alice", "2") {
		t.Fatal("a lease within the share refused")
	}
	if take(a, "fs\x00alice", "3") || take(b, "fs\x00alice", "3") {
		t.Fatal("a third lease admitted beyond a share of 2")
	}
	if !take(b, "fs\x00alice", "1") {
		t.Fatal("the renewal of a held lease refused")
	}
	if !take(a, "fs\x00bob", "1") || !take(a, "git\x00alice", "1") {
		t.Fatal("another principal's or server's lease refused")
	}
	if err := b.Release(ctx, "fs\x00alice", "1"); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, "fs\x00alice", "never-held"); err != nil {
		t.Fatal(err)
	}
	if !take(a, "fs\x00alice", "3") {
		t.Fatal("a lease refused after one was released")
	}
}

// TestSessionLeasesExpire: the leases of a replica that died (not
// renewed: their expiry passed) stop counting, and a lease forged to
// expire later than any lease could is dropped.
func TestSessionLeasesExpire(t *testing.T) {
	srv := redistest.Start(t)
	st := newStore(t, srv, Config{})
	l := st.SessionLeases()
	ctx := context.Background()
	rdb := newClient(t, srv)
	key := st.key("leases", "fs\x00alice")
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	// A dead replica's two leases expired a second ago; a forged one says
	// it lasts a year.
	past := float64(now.Add(-time.Second).UnixMilli())
	year := float64(now.Add(365 * 24 * time.Hour).UnixMilli())
	if err := rdb.ZAdd(ctx, key, redis.Z{Score: past, Member: "dead-1"}, redis.Z{Score: past, Member: "dead-2"}).Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if ok, err := l.Lease(ctx, "fs\x00alice", strconv.Itoa(i), 2, time.Minute); err != nil || !ok {
			t.Fatalf("lease %d with only expired ones before: %v, %v", i, ok, err)
		}
	}
	if err := rdb.ZAdd(ctx, key, redis.Z{Score: year, Member: "forged"}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, "fs\x00alice", "0"); err != nil {
		t.Fatal(err)
	}
	if ok, err := l.Lease(ctx, "fs\x00alice", "2", 2, time.Minute); err != nil || !ok {
		t.Fatalf("a forged lease counted: %v, %v", ok, err)
	}
	if n, _ := rdb.ZCard(ctx, key).Result(); n != 2 {
		t.Errorf("%d leases kept, want 2", n)
	}
	if ttl, _ := rdb.PTTL(ctx, key).Result(); ttl <= 0 || ttl > time.Minute {
		t.Errorf("the leases' key expires in %v, want within a minute", ttl)
	}
}

// TestSessionLeasesUnavailable: with Redis down a lease fails within the
// timeout with ErrUnavailable; bad arguments are refused.
func TestSessionLeasesUnavailable(t *testing.T) {
	srv := redistest.Start(t)
	l := newStore(t, srv, Config{Timeout: 200 * time.Millisecond}).SessionLeases()
	ctx := context.Background()
	if _, err := l.Lease(ctx, "k", "", 1, time.Minute); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("no id: %v", err)
	}
	if _, err := l.Lease(ctx, "k", "1", 0, time.Minute); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("limit 0: %v", err)
	}
	srv.Kill()
	if _, err := l.Lease(ctx, "k", "1", 1, time.Minute); !errors.Is(err, toolkit.ErrUnavailable) {
		t.Errorf("Redis down: %v, want ErrUnavailable", err)
	}
	if err := l.Release(ctx, "k", "1"); !errors.Is(err, toolkit.ErrUnavailable) {
		t.Errorf("release with Redis down: %v, want ErrUnavailable", err)
	}
}

package redisstate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/redistest"
)

// flights returns the FlightRegistry of a replica of its own on srv.
func flights(t *testing.T, srv *redistest.Server) *FlightRegistry {
	t.Helper()
	fr, err := newStore(t, srv, Config{SealKeys: [][]byte{key16}, Timeout: time.Second}).Flights()
	if err != nil {
		t.Fatal(err)
	}
	return fr
}

// TestFlightsAcrossReplicas: the first replica to begin a user's
// authorization holds it, the other is given its URL; only the holder's
// end removes the record, which expires with the authorization and
// holds the URL sealed.
func TestFlightsAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	a, b := flights(t, srv), flights(t, srv)
	ctx := context.Background()
	const key, urlA, urlB = "jwt:alice\x00https://up.example/mcp", "https://as.example/authorize?state=SECRET-A", "https://as.example/authorize?state=SECRET-B"
	begin := func(fr *FlightRegistry, u string) (string, bool) {
		t.Helper()
		got, mine, err := fr.Begin(ctx, key, u, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return got, mine
	}
	if got, mine := begin(a, urlA); !mine || got != urlA {
		t.Fatalf("A begins first: %q, %v; want its own URL, held", got, mine)
	}
	if got, mine := begin(b, urlB); mine || got != urlA {
		t.Fatalf("B begins next: %q, %v; want A's URL", got, mine)
	}
	if got, mine, _ := b.Begin(ctx, "jwt:bob\x00https://up.example/mcp", urlB, time.Minute); !mine || got != urlB {
		t.Errorf("another user's authorization on B: %q, %v; want its own", got, mine)
	}
	if err := b.End(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got, _ := begin(b, urlB); got != urlA {
		t.Errorf("after B's end, which is not its to end: %q, want A's URL still", got)
	}

	rdb := newClient(t, srv)
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys %v, %v; want two records", keys, err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "toolkit:flight:") {
			t.Errorf("key %q is not under the store's prefix", k)
		}
		v, _ := rdb.Get(ctx, k).Result()
		if strings.Contains(v, "SECRET") || strings.Contains(k, "alice") {
			t.Errorf("a record holds the URL or the user in clear")
		}
		if ttl := rdb.PTTL(ctx, k).Val(); ttl <= 0 || ttl > time.Minute {
			t.Errorf("a record expires in %v, want within the authorization's minute", ttl)
		}
	}

	if err := a.End(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got, mine := begin(b, urlB); !mine || got != urlB {
		t.Errorf("after A's end: %q, %v; want B's own URL, held", got, mine)
	}
	if got, mine := begin(a, urlA); mine || got != urlB {
		t.Errorf("A after B took it: %q, %v; want B's URL", got, mine)
	}
}

// TestFlightsForgedRecord: a record that does not open (written
// without the seal key, or too large) is replaced by the replica that
// begins, never given as the URL to follow.
func TestFlightsForgedRecord(t *testing.T) {
	srv := redistest.Start(t)
	fr := flights(t, srv)
	ctx := context.Background()
	rdb := newClient(t, srv)
	const key, own = "jwt:alice\x00https://up.example/mcp", "https://as.example/authorize?state=own"
	k := fr.s.key("flight", key)
	forged, err := newStore(t, srv, Config{SealKeys: [][]byte{key32}}).sealRecord(k, "", flightRecord{Owner: "x", URL: "https://evil.example/"})
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{
		"sealed with another key": forged,
		"in clear":                `{"owner":"x","url":"https://evil.example/"}`,
		"too large":               strings.Repeat("x", maxFlightRecord+1),
	} {
		if err := rdb.Set(ctx, k, v, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		got, mine, err := fr.Begin(ctx, key, own, time.Minute)
		if err != nil || !mine || got != own {
			t.Errorf("%s: %q, %v, %v; want its own URL, held", name, got, mine, err)
		}
		if err := fr.End(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := fr.Begin(ctx, key, "https://as.example/?"+strings.Repeat("x", maxFlightRecord), time.Minute); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("a URL too long to record: %v, want ErrBadParameter", err)
	}
}

// TestFlightsUnavailable: with Redis down, Begin fails with
// ErrUnavailable (the handler then runs its authorization alone).
func TestFlightsUnavailable(t *testing.T) {
	srv := redistest.Start(t)
	fr := flights(t, srv)
	srv.Kill()
	if _, _, err := fr.Begin(context.Background(), "k", "https://as.example/authorize?state=s", time.Minute); !errors.Is(err, toolkit.ErrUnavailable) {
		t.Errorf("Begin with Redis down: %v, want ErrUnavailable", err)
	}
	if _, err := newStore(t, srv, Config{}).Flights(); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("flights without sealing keys: %v, want ErrBadParameter", err)
	}
}

// flightWake records the wakes of a flight's watch.
type flightWake chan bool

func (w flightWake) wake(live bool) {
	select {
	case w <- live:
	default:
		panic("a watcher's wakes pile up")
	}
}

// next returns w's next wake, or fails the test after a while.
func (w flightWake) next(t *testing.T, what string) bool {
	t.Helper()
	select {
	case live := <-w:
		return live
	case <-time.After(20 * time.Second):
		t.Fatalf("no wake: %s", what)
		return false
	}
}

// TestFlightsWatch: a replica that watches a flight of another is woken
// once its subscription is in place, at that flight's end (not at the
// end of another), when the subscription is lost (Redis restarts) and
// once it is back; the registries of a store share one subscription,
// whose goroutine ends with the last watch.
func TestFlightsWatch(t *testing.T) {
	srv := redistest.Start(t)
	a, b := flights(t, srv), flights(t, srv)
	ctx := context.Background()
	const key, other, u = "jwt:alice\x00https://up.example/mcp", "jwt:bob\x00https://up.example/mcp", "https://as.example/authorize?state=s"
	begin := func(k string) {
		t.Helper()
		if _, mine, err := a.Begin(ctx, k, u, time.Minute); err != nil || !mine {
			t.Fatalf("A begins: %v, %v", mine, err)
		}
	}
	end := func(k string) {
		t.Helper()
		if err := a.End(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	begin(key)
	begin(other)
	wk, wo := make(flightWake, 8), make(flightWake, 8)
	stopK := b.WatchFlight(key, wk.wake)
	defer stopK()
	if !wk.next(t, "the subscription in place") {
		t.Fatal("the first wake says lost")
	}
	b2, err := b.s.Flights() // another registry of B's store
	if err != nil {
		t.Fatal(err)
	}
	stopO := b2.WatchFlight(other, wo.wake)
	defer stopO()
	if !wo.next(t, "a second watch, on the live subscription") {
		t.Fatal("the second watch is told lost")
	}
	if n := newClient(t, srv).PubSubNumSub(ctx, b.s.endsChannel()).Val()[b.s.endsChannel()]; n != 1 {
		t.Errorf("%d subscriptions to the ends of flights, want one for the store", n)
	}

	end(key)
	end(other) // announced after key's end, on the same subscription
	if !wo.next(t, "the end of the other flight") || !wk.next(t, "the end of the flight") {
		t.Fatal("an end is told as lost")
	}
	if len(wk) != 0 {
		t.Errorf("the flight's watch was woken by another flight's end")
	}

	srv.Kill()
	if wk.next(t, "Redis killed") || wo.next(t, "Redis killed") {
		t.Fatal("a lost subscription is told live")
	}
	srv.Restart()
	if !wk.next(t, "Redis back") || !wo.next(t, "Redis back") {
		t.Fatal("a subscription back is told lost")
	}
	begin(key)
	end(key)
	if !wk.next(t, "an end after the restart") {
		t.Fatal("an end is told as lost")
	}
}

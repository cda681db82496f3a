package redisstate

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/redistest"
	"github.com/llmkit/toolkit/policy"
)

func pin(key, desc string, pending bool) policy.Pin {
	d := &policy.Definition{Description: desc}
	if pending {
		return policy.Pin{Key: key, Approved: &policy.Definition{Description: "old"}, Pending: d}
	}
	return policy.Pin{Key: key, Approved: d}
}

// watcher runs p.Watch and counts its calls; each call is also sent on
// calls.
type watcher struct {
	calls chan struct{}
	stop  func()
}

func watch(t *testing.T, p *PinStore, interval time.Duration) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{calls: make(chan struct{}, 16)}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.Watch(ctx, interval, func() { w.calls <- struct{}{} })
	}()
	w.stop = func() { cancel(); wg.Wait() }
	t.Cleanup(w.stop)
	return w
}

// expect waits for Watch's next call.
func (w *watcher) expect(t *testing.T, what string) {
	t.Helper()
	select {
	case <-w.calls:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: Watch did not report it", what)
	}
}

// none checks that Watch reports nothing during three of its polls: a
// change would have been reported by then.
func (w *watcher) none(t *testing.T, what string, interval time.Duration) {
	t.Helper()
	select {
	case <-w.calls:
		t.Errorf("%s: Watch reported a change", what)
	case <-time.After(3 * interval):
	}
}

func keys(pins []policy.Pin) map[string]policy.Pin {
	m := map[string]policy.Pin{}
	for _, p := range pins {
		m[p.Key] = p
	}
	return m
}

// TestPinsAcrossReplicas: a quarantine saved by one replica is loaded by
// another, which Watch tells within moments (by the announcement, long
// before its poll); its own saves are not reported.
func TestPinsAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	a := newStore(t, srv, Config{}).Pins("gw")
	b := newStore(t, srv, Config{}).Pins("gw")
	ctx := context.Background()
	if err := a.Save(ctx, []policy.Pin{pin("fs.read", "reads", false), pin("fs.write", "writes", false)}); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Load(ctx); err != nil || len(got) != 2 {
		t.Fatalf("the other replica loads %v, %v", got, err)
	}
	const slow = time.Hour // only the announcement can report in time
	wb := watch(t, b, slow)
	wa := watch(t, a, slow)
	// Subscriptions are asynchronous: save until b hears one.
	deadline := time.Now().Add(5 * time.Second)
	heard := false
	for !heard && time.Now().Before(deadline) {
		if err := a.Save(ctx, []policy.Pin{pin("fs.write", "writes everything", true)}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-wb.calls:
			heard = true
		case <-time.After(100 * time.Millisecond):
		}
	}
	if !heard {
		t.Fatal("a save on one replica was not announced to the other")
	}
	got := keys(mustLoad(t, b))
	if !got["fs.write"].Quarantined() || got["fs.read"].Quarantined() {
		t.Errorf("after the quarantine: %+v", got)
	}
	select {
	case <-wa.calls:
		t.Error("a store's own save was reported to its own Watch")
	default:
	}
	// An approval on b reaches a.
	if err := b.Save(ctx, []policy.Pin{pin("fs.write", "writes everything", false)}); err != nil {
		t.Fatal(err)
	}
	wa.expect(t, "an approval made on the other replica")
	if keys(mustLoad(t, a))["fs.write"].Quarantined() {
		t.Error("the approval did not reach the other replica")
	}
}

// TestPinsPollFallback: a save whose announcement nobody heard (made
// while the watcher was not subscribed) is reported by the periodic look
// at the version, once.
func TestPinsPollFallback(t *testing.T) {
	srv := redistest.Start(t)
	a := newStore(t, srv, Config{}).Pins("gw")
	b := newStore(t, srv, Config{}).Pins("gw")
	ctx := context.Background()
	if _, err := b.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Save(ctx, []policy.Pin{pin("fs.read", "reads", true)}); err != nil {
		t.Fatal(err)
	}
	const interval = 50 * time.Millisecond
	w := watch(t, b, interval)
	w.expect(t, "a save made before Watch started")
	w.none(t, "the same save", interval)
	// Its own save is no change either.
	if err := b.Save(ctx, []policy.Pin{pin("fs.read", "reads", false)}); err != nil {
		t.Fatal(err)
	}
	w.none(t, "its own save", interval)
}

// TestPinsRedisRestart: pins outlive a Redis restart (it persists), and
// a watcher goes on reporting saves after it.
func TestPinsRedisRestart(t *testing.T) {
	srv := redistest.Start(t)
	a := newStore(t, srv, Config{Timeout: 500 * time.Millisecond}).Pins("gw")
	b := newStore(t, srv, Config{Timeout: 500 * time.Millisecond}).Pins("gw")
	ctx := context.Background()
	if err := a.Save(ctx, []policy.Pin{pin("fs.read", "reads", true)}); err != nil {
		t.Fatal(err)
	}
	const interval = 50 * time.Millisecond
	w := watch(t, b, interval)
	w.expect(t, "the first save")
	srv.Kill()
	if err := a.Save(ctx, []policy.Pin{pin("fs.read", "reads", false)}); !errors.Is(err, toolkit.ErrUnavailable) {
		t.Fatalf("a save with Redis down: %v, want ErrUnavailable", err)
	}
	srv.Restart()
	if got := keys(mustLoad(t, b)); !got["fs.read"].Quarantined() {
		t.Fatalf("after the restart: %+v; want the quarantine saved before", got)
	}
	if err := a.Save(ctx, []policy.Pin{pin("fs.read", "reads", false)}); err != nil {
		t.Fatal(err)
	}
	w.expect(t, "a save after Redis restarted")
}

func mustLoad(t *testing.T, p *PinStore) []policy.Pin {
	t.Helper()
	pins, err := p.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return pins
}

// TestPinsSealed: with SealKeys, pins are sealed to their place. A pin
// written in clear by whoever can reach Redis (a forged approval), an
// altered one, or a sealed one copied to another tool's field does not
// open: its tool fails closed, with an approved definition no tool has,
// so what it serves waits for a person's approval. A pin saved again
// through the store opens.
func TestPinsSealed(t *testing.T) {
	srv := redistest.Start(t)
	st := newStore(t, srv, Config{SealKeys: [][]byte{key16}})
	p := st.Pins("gw")
	ctx := context.Background()
	if err := p.Save(ctx, []policy.Pin{pin("fs.read", "reads", false), pin("fs.write", "writes", false)}); err != nil {
		t.Fatal(err)
	}
	got := keys(mustLoad(t, p))
	if got["fs.read"].Approved.Description != "reads" {
		t.Fatalf("a sealed pin does not load: %+v", got["fs.read"])
	}
	raw := st.rdb.HGetAll(ctx, p.hash).Val()
	if strings.Contains(raw["fs.read"], "reads") {
		t.Errorf("a sealed pin is readable in Redis: %q", raw["fs.read"])
	}
	altered := []byte(raw["fs.read"])
	altered[len(altered)-1] ^= 1
	for name, forged := range map[string]string{
		"a forged approval in clear": `{"key":"fs.write","approved":{"digest":"evil","content":"evil","fields":{}}}`,
		"another tool's sealed pin":  raw["fs.read"],
		"an altered pin":             string(altered),
	} {
		t.Run(name, func(t *testing.T) {
			if err := st.rdb.HSet(ctx, p.hash, "fs.write", forged).Err(); err != nil {
				t.Fatal(err)
			}
			w := keys(mustLoad(t, p))["fs.write"]
			if w.Approved == nil || w.Approved.Digest != "unreadable" || w.Pending != nil {
				t.Errorf("the pin loads as %+v; want the unreadable pin", w)
			}
		})
	}
	if err := p.Save(ctx, []policy.Pin{pin("fs.write", "writes again", false)}); err != nil {
		t.Fatal(err)
	}
	if w := keys(mustLoad(t, p))["fs.write"]; w.Approved == nil || w.Approved.Description != "writes again" {
		t.Errorf("after an approval through the store: %+v", w)
	}
}

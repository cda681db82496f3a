package redisstate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/policy"
	"github.com/redis/go-redis/v9"
)

// PinStore keeps pinned tool definitions and their approvals in Redis, a
// [policy.PinStore] that every process of a fleet shares: a definition
// change one replica quarantines is quarantined by all once they reload,
// and an approval made on one (or by `toolkit-gateway pins approve`) is
// seen by all. [PinStore.Watch] says when another process saved. Get one
// from [Store.Pins].
type PinStore struct {
	s       *Store
	hash    string // the pins, by key
	version string // incremented by each save
	channel string // where each save is announced
	id      string // this store's own, in its announcements

	mu      sync.Mutex
	seen    int64 // the version last reported or saved
	lastOwn int64 // the version this store's last save made
}

var _ policy.PinStore = (*PinStore)(nil)

// Pins returns the PinStore named name: processes that give the same
// name (and the same [Config.KeyPrefix]) share their pins.
func (s *Store) Pins(name string) *PinStore {
	var id [8]byte
	rand.Read(id[:])
	base := s.prefix + "pins:" + name
	return &PinStore{s: s, hash: base, version: base + ":version", channel: base + ":saved", id: hex.EncodeToString(id[:])}
}

// Load implements [policy.PinStore].
func (p *PinStore) Load(ctx context.Context) ([]policy.Pin, error) {
	ctx, cancel := p.s.bound(ctx)
	defer cancel()
	pipe := p.s.rdb.TxPipeline()
	all := pipe.HGetAll(ctx, p.hash)
	ver := pipe.Get(ctx, p.version)
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return nil, p.s.fail("load pins", err)
	}
	pins := make([]policy.Pin, 0, len(all.Val()))
	for key, raw := range all.Val() {
		if len(raw) > maxRecord {
			p.s.log.Warn("redis state: a pin is too large; skipped", "tool", truncate(key))
			continue
		}
		pin, ok := p.decode(key, raw)
		if !ok {
			continue
		}
		pins = append(pins, pin)
	}
	if v, err := strconv.ParseInt(ver.Val(), 10, 64); err == nil {
		p.mu.Lock()
		p.seen = max(p.seen, v)
		p.mu.Unlock()
	}
	return pins, nil
}

// Save implements [policy.PinStore]: the pins given replace those with
// the same keys, atomically, and the save is announced to the other
// processes' Watch.
func (p *PinStore) Save(ctx context.Context, changed []policy.Pin) error {
	if len(changed) == 0 {
		return nil
	}
	fields := make([]any, 0, 2*len(changed))
	for _, pin := range changed {
		raw, err := p.encode(pin)
		if err != nil {
			return err
		}
		fields = append(fields, pin.Key, raw)
	}
	ctx, cancel := p.s.bound(ctx)
	defer cancel()
	pipe := p.s.rdb.TxPipeline()
	pipe.HSet(ctx, p.hash, fields...)
	ver := pipe.Incr(ctx, p.version)
	if _, err := pipe.Exec(ctx); err != nil {
		return p.s.fail("save pins", err)
	}
	v := ver.Val()
	p.mu.Lock()
	if v == p.seen+1 {
		p.seen = v // nobody else saved in between
	}
	p.lastOwn = v
	p.mu.Unlock()
	// The announcement is a hint: a process that misses it finds the
	// version changed at its next look.
	p.s.rdb.Publish(ctx, p.channel, p.id+" "+strconv.FormatInt(v, 10))
	return nil
}

// Watch calls changed, on Watch's goroutine, each time another process
// saved pins, until ctx is done; it returns ctx's error. Saves are
// announced on a Redis channel, so changed is called within moments of
// one; every interval it also compares the pins' version, so a save
// whose announcement was lost (Redis restarted, the connection broke) is
// reported then. The store's own saves are not changes, and a change is
// reported once.
func (p *PinStore) Watch(ctx context.Context, interval time.Duration, changed func()) error {
	if interval <= 0 {
		return fmt.Errorf("%w: redisstate: PinStore.Watch: interval %v", toolkit.ErrBadParameter, interval)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	return p.s.listen(ctx, p.channel, tick.C, func(payload string) {
		if p.announced(payload) {
			changed()
		}
	}, func() {
		if p.poll(ctx) {
			changed()
		}
	})
}

// announced reports whether payload, an announcement, is another
// process's save not yet reported.
func (p *PinStore) announced(payload string) bool {
	id, ver, ok := strings.Cut(payload, " ")
	v, err := strconv.ParseInt(ver, 10, 64)
	if !ok || err != nil || id == p.id {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if v <= p.seen {
		return false
	}
	p.seen = v
	return true
}

// poll reads the pins' version and reports whether it moved past what
// was reported and saved here. An unreachable Redis reports nothing.
func (p *PinStore) poll(ctx context.Context) bool {
	ctx, cancel := p.s.bound(ctx)
	defer cancel()
	v, err := p.s.rdb.Get(ctx, p.version).Int64()
	if err != nil && err != redis.Nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case v == p.seen:
		return false
	case v == p.lastOwn && v == p.seen+1:
		p.seen = v
		return false
	}
	// Moved on, or back: Redis lost its data and every replica's pins
	// are worth reading again.
	p.seen = v
	return true
}

// encode returns pin as stored: sealed to its place when the store has
// [Config.SealKeys], else JSON in clear.
func (p *PinStore) encode(pin policy.Pin) (string, error) {
	if p.s.seal != nil {
		return p.s.sealRecord(p.hash, pin.Key, pin)
	}
	raw, err := json.Marshal(pin)
	return string(raw), err
}

// decode reads the pin stored under key. With [Config.SealKeys], a
// record that does not open where it is (forged, altered, moved from
// another key, written in clear) fails closed: the tool's pin is one no
// definition matches, so the tool is quarantined until a person approves
// what it serves. A record that cannot be read at all is skipped.
func (p *PinStore) decode(key, raw string) (policy.Pin, bool) {
	var pin policy.Pin
	if p.s.seal != nil {
		plain, err := p.s.seal.open([]byte(raw), p.hash+"\x00"+key)
		if err == nil {
			err = json.Unmarshal(plain, &pin)
		}
		if err != nil || pin.Key != key {
			p.s.log.Warn("redis state: a pin does not open with the configured keys; its tool is quarantined until approved", "tool", truncate(key), "error", err)
			return unreadablePin(key), true
		}
		return pin, true
	}
	if err := json.Unmarshal([]byte(raw), &pin); err != nil || pin.Key != key {
		p.s.log.Warn("redis state: a pin cannot be read; skipped", "tool", truncate(key))
		return policy.Pin{}, false
	}
	return pin, true
}

// unreadablePin is the pin of key whose record did not open: its approved
// definition is one no tool has, so whatever the tool serves waits for
// approval.
func unreadablePin(key string) policy.Pin {
	return policy.Pin{Key: key, Approved: &policy.Definition{
		Digest:      "unreadable",
		Content:     "unreadable",
		Fields:      map[string]string{},
		Description: "(the stored pin did not open with the configured keys)",
	}}
}

// truncate cuts s, a name from Redis, for a log line.
func truncate(s string) string {
	if len(s) > 128 {
		return s[:128] + "…"
	}
	return s
}

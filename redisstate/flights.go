package redisstate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp/oauth"
	"github.com/redis/go-redis/v9"
)

// maxFlightRecord bounds a flight's record, sealed: an authorization URL
// is far shorter. A longer URL is not recorded; a longer record is
// replaced.
const maxFlightRecord = 8 << 10

// FlightRegistry records the OAuth authorizations in flight of a fleet on
// Redis, an [oauth.FlightRegistry]: a user whose authorization several
// replicas need at once is asked once, with the URL of the replica that
// recorded its authorization first. A record is one key under the store's
// prefix, set only if absent and expiring with its authorization; it
// holds the URL and the replica that recorded it, sealed (the URL's state
// is the user's authorization's), and is removed only by that replica,
// which announces it to the replicas that follow that authorization (an
// [oauth.FlightWatcher]). A record that does not open (forged, or too
// large) is replaced. Get one from [Store.Flights].
type FlightRegistry struct {
	s  *Store
	id string // this process's, in its records

	mu   sync.Mutex
	mine map[string]string // key → the record this process set there
}

var _ oauth.FlightRegistry = (*FlightRegistry)(nil)

// flightRecord is what a flight's key holds, sealed.
type flightRecord struct {
	Owner string `json:"owner"`
	URL   string `json:"url"`
}

// Flights returns a [FlightRegistry] on the store, for
// oauth.Config.Flights; each is a process of its own. It needs
// [Config.SealKeys].
func (s *Store) Flights() (*FlightRegistry, error) {
	if s.seal == nil {
		return nil, fmt.Errorf("%w: redisstate: flights need Config.SealKeys: authorization URLs are never stored in clear", toolkit.ErrBadParameter)
	}
	var id [16]byte
	rand.Read(id[:])
	return &FlightRegistry{s: s, id: hex.EncodeToString(id[:]), mine: map[string]string{}}, nil
}

// replaceFlight sets KEYS[1] to ARGV[2] for ARGV[3] milliseconds when it
// still holds ARGV[1].
var replaceFlight = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
end
return false`)

// endFlight deletes KEYS[1] when it holds ARGV[1], and announces its end
// on channel ARGV[2].
var endFlight = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	redis.call('DEL', KEYS[1])
	redis.call('PUBLISH', ARGV[2], KEYS[1])
	return 1
end
return 0`)

// Begin implements [oauth.FlightRegistry].
func (fr *FlightRegistry) Begin(ctx context.Context, key, authURL string, ttl time.Duration) (string, bool, error) {
	if ttl < time.Millisecond {
		return "", false, fmt.Errorf("%w: redisstate: flight ttl %v", toolkit.ErrBadParameter, ttl)
	}
	k := fr.s.key("flight", key)
	rec, err := fr.s.sealRecord(k, "", flightRecord{Owner: fr.id, URL: authURL})
	if err != nil {
		return "", false, err
	}
	if len(rec) > maxFlightRecord {
		return "", false, fmt.Errorf("%w: redisstate: an authorization URL of %d bytes", toolkit.ErrBadParameter, len(authURL))
	}
	ctx, cancel := fr.s.bound(ctx)
	defer cancel()
	for range 3 {
		set, err := fr.s.rdb.SetNX(ctx, k, rec, ttl).Result()
		if err != nil {
			return "", false, fr.s.fail("begin a flight", err)
		}
		if set {
			fr.hold(k, rec)
			return authURL, true, nil
		}
		old, err := fr.s.rdb.Get(ctx, k).Result()
		if errors.Is(err, redis.Nil) {
			continue // it expired meanwhile
		}
		if err != nil {
			return "", false, fr.s.fail("begin a flight", err)
		}
		var other flightRecord
		if len(old) <= maxFlightRecord && fr.s.openRecord(k, "", old, &other) && other.Owner != fr.id && other.Owner != "" && other.URL != "" {
			return other.URL, false, nil
		}
		if len(old) > maxFlightRecord {
			fr.s.log.Warn("redis state: a flight's record is too large; replaced", "key", k, "bytes", len(old))
		}
		// This process's own (a record its last flight left), or one
		// that does not open: replaced, unless it changed meanwhile.
		err = replaceFlight.Run(ctx, fr.s.rdb, []string{k}, old, rec, ttl.Milliseconds()).Err()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return "", false, fr.s.fail("begin a flight", err)
		}
		fr.hold(k, rec)
		return authURL, true, nil
	}
	return "", false, fmt.Errorf("%w: redis state: begin a flight: its record keeps changing", toolkit.ErrUnavailable)
}

// hold notes that rec, at k, is this process's.
func (fr *FlightRegistry) hold(k, rec string) {
	fr.mu.Lock()
	fr.mine[k] = rec
	fr.mu.Unlock()
}

// End implements [oauth.FlightRegistry].
func (fr *FlightRegistry) End(ctx context.Context, key string) error {
	k := fr.s.key("flight", key)
	fr.mu.Lock()
	rec, ok := fr.mine[k]
	delete(fr.mine, k)
	fr.mu.Unlock()
	if !ok {
		return nil
	}
	ctx, cancel := fr.s.bound(ctx)
	defer cancel()
	return fr.s.fail("end a flight", endFlight.Run(ctx, fr.s.rdb, []string{k}, rec, fr.s.endsChannel()).Err())
}

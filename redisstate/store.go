package redisstate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/redis/go-redis/v9"
)

// DefaultKeyPrefix starts every key a [Store] writes when
// [Config.KeyPrefix] is empty.
const DefaultKeyPrefix = "toolkit:"

// DefaultTimeout bounds each Redis operation when [Config.Timeout] is
// zero.
const DefaultTimeout = 2 * time.Second

// maxRecord bounds a record read from Redis: larger ones are refused
// unread.
const maxRecord = 1 << 20

// ErrUnsealed is wrapped by the errors of records that none of the
// configured keys opens (sealed with a key since dropped, or altered).
var ErrUnsealed = errors.New("redisstate: a sealed record does not open with the configured keys")

// Config configures a [Store].
type Config struct {
	// Client is the Redis client (redis.NewClient, NewClusterClient,
	// NewFailoverClient, or redis.ParseURL's options for TLS and auth).
	// Required.
	Client redis.UniversalClient
	// KeyPrefix starts every key written ([DefaultKeyPrefix] when empty),
	// so that several fleets can share one Redis.
	KeyPrefix string
	// SealKeys are the AES keys (16, 24 or 32 bytes) that seal the
	// credentials: the first seals, all open. [Store.Tokens] needs at
	// least one.
	SealKeys [][]byte
	// Timeout bounds each operation ([DefaultTimeout] when zero).
	Timeout time.Duration
	// Logger receives warnings (records that do not open, a lost
	// subscription); slog.Default when nil. No record logs a secret.
	Logger *slog.Logger
}

// Store is the shared state of a fleet on one Redis. It is safe for
// concurrent use. Closing the Redis client is the caller's.
type Store struct {
	rdb     redis.UniversalClient
	prefix  string
	timeout time.Duration
	log     *slog.Logger
	seal    *sealer // nil without keys
	// flights are the watches of its registries' flights
	// (flights_watch.go).
	flights flightWatchers
}

// New returns a Store over cfg.Client. It does not connect: an
// unreachable Redis shows in the first operation's error.
func New(cfg Config) (*Store, error) {
	if cfg.Client == nil {
		return nil, fmt.Errorf("%w: redisstate: Config.Client is nil", toolkit.ErrBadParameter)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("%w: redisstate: Config.Timeout %v is negative", toolkit.ErrBadParameter, cfg.Timeout)
	}
	s := &Store{rdb: cfg.Client, prefix: cfg.KeyPrefix, timeout: cfg.Timeout, log: cfg.Logger}
	if s.prefix == "" {
		s.prefix = DefaultKeyPrefix
	}
	if s.timeout == 0 {
		s.timeout = DefaultTimeout
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if len(cfg.SealKeys) > 0 {
		var err error
		if s.seal, err = newSealer(cfg.SealKeys); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Ping reports whether Redis answers, within the store's timeout; its
// error wraps [toolkit.ErrUnavailable]. A health check calls it.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	return s.fail("ping", s.rdb.Ping(ctx).Err())
}

// bound returns ctx bounded by the store's timeout.
func (s *Store) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

// fail wraps err, a Redis client's error for op, in ErrUnavailable; nil
// and redis.Nil stay as they are.
func (s *Store) fail(op string, err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return err
	}
	return fmt.Errorf("%w: redis state: %s: %w", toolkit.ErrUnavailable, op, err)
}

// key returns the Redis key of kind for the hash of parts: the parts may
// hold anything (URLs, user names) and never reach a key as written.
func (s *Store) key(kind string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return s.prefix + kind + ":" + hex.EncodeToString(h.Sum(nil)[:16])
}

// listen calls onMessage with each message published on channel, and
// onTick at each tick (a nil tick never comes), on the caller's
// goroutine, until ctx is done; it returns ctx's error. The subscription
// is the client's: it comes back by itself after a lost connection.
func (s *Store) listen(ctx context.Context, channel string, tick <-chan time.Time, onMessage func(payload string), onTick func()) error {
	sub := s.rdb.Subscribe(ctx, channel)
	defer sub.Close()
	msgs := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m, ok := <-msgs:
			if !ok {
				return ctx.Err()
			}
			onMessage(m.Payload)
		case <-tick:
			onTick()
		}
	}
}

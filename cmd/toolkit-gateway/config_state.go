package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/llmkit/toolkit/policy"
	"github.com/llmkit/toolkit/redisstate"
	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/metric"
)

// State shares the gateway's state with the other replicas of a fleet on
// Redis (package redisstate): the upstreams' OAuth tokens and client
// registrations (sealed with the keys given), the pinned definitions and
// their approvals (pins_file is then not used), and the rate limits'
// budgets, so that N replicas act as one gateway. Absent: each process
// keeps its own (token_dir, pins_file, memory). Changing it needs a
// restart.
type State struct {
	// Redis is where the state lives.
	Redis *RedisState `yaml:"redis"`
	// KeysEnv or KeysFile give the AES keys that seal credentials before
	// they reach Redis, as input_state's: base64 of 16, 24 or 32 bytes,
	// the first seals, all open (rotation).
	KeysEnv  string `yaml:"keys_env"`
	KeysFile string `yaml:"keys_file"`
	// RateLimits says what a rate-limited call meets while Redis cannot
	// be reached: "open" (the default: admitted, with a warning a minute)
	// or "closed" (refused under its limit's rule, saying why).
	RateLimits string `yaml:"rate_limits_unavailable"`

	keys     InputState     // KeysEnv and KeysFile, decoded
	redisOpt *redis.Options // parsed from the URL
}

// RedisState says how to reach Redis.
type RedisState struct {
	// URLEnv names the environment variable holding the server's URL:
	// redis://[user:password@]host:port/db, rediss:// for TLS, or
	// unix:///path/redis.sock. It is read from the environment so that
	// its password never sits in the file.
	URLEnv string `yaml:"url_env"`
	// KeyPrefix starts every key the gateway writes (default
	// "toolkit:"): fleets sharing one Redis give different ones.
	KeyPrefix string `yaml:"key_prefix"`
	// Timeout bounds each Redis operation (default 2s, at most 1m): a
	// call never waits longer for Redis.
	Timeout time.Duration `yaml:"timeout"`
	// TLS, with a rediss:// URL, says whom to trust and who the gateway
	// is. Absent, a rediss:// server is verified against the system's
	// roots.
	TLS *RedisTLS `yaml:"tls"`
}

// RedisTLS configures the gateway's TLS to Redis. Relative paths are
// relative to the configuration file.
type RedisTLS struct {
	// CAFile is a PEM file of the certificate authorities that sign the
	// server's certificate, trusted instead of the system's.
	CAFile string `yaml:"ca_file"`
	// CertFile and KeyFile are the gateway's own certificate and key
	// (PEM), for a server that asks clients for one (tls-auth-clients).
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// ServerName is the name the server's certificate must carry, when
	// it is not the URL's host.
	ServerName string `yaml:"server_name"`
}

// maxStateTimeout bounds state.redis.timeout.
const maxStateTimeout = time.Minute

// checkState checks the state section and reads its URL and keys.
func (v *validator) checkState(c *Config) {
	st := c.State
	if st == nil {
		return
	}
	at := func(k ...any) []any { return append([]any{"state"}, k...) }
	if st.Redis == nil {
		v.fail("give redis: {url_env: VAR}", at()...)
		return
	}
	switch env := st.Redis.URLEnv; {
	case env == "":
		v.fail("give the environment variable holding the Redis URL", at("redis", "url_env")...)
	default:
		u, ok := os.LookupEnv(env)
		if !ok {
			v.fail(fmt.Sprintf("environment variable %s is not set", env), at("redis", "url_env")...)
			break
		}
		opt, err := redis.ParseURL(u)
		if err != nil {
			// Never the URL: it may hold a password.
			v.fail(fmt.Sprintf("environment variable %s does not hold a Redis URL (redis://, rediss:// or unix://)", env), at("redis", "url_env")...)
			break
		}
		st.redisOpt = opt
	}
	if st.Redis.TLS != nil && st.redisOpt != nil {
		v.checkRedisTLS(st.Redis.TLS, st.redisOpt, at("redis", "tls"))
	}
	if t := st.Redis.Timeout; t < 0 || t > maxStateTimeout {
		v.fail(fmt.Sprintf("%v is out of range: use up to %v (0 or absent: %v)", t, maxStateTimeout, redisstate.DefaultTimeout), at("redis", "timeout")...)
	}
	switch st.RateLimits {
	case "", "open", "closed":
	default:
		v.fail(fmt.Sprintf("%q: use open or closed", st.RateLimits), at("rate_limits_unavailable")...)
	}
	st.keys = InputState{KeysEnv: st.KeysEnv, KeysFile: st.KeysFile}
	v.checkKeys(&st.keys, "state")
	if c.PinsFile != "" {
		v.fail("the pins are kept in state.redis: drop pins_file", "pins_file")
	}
}

// newStateStore connects the gateway to its shared state (nil without a
// state section), and returns the function that closes its client. The
// client connects lazily: an unreachable Redis is no start-up error but
// each operation's. With mp, the client's commands and connections are
// measured (redisotel: db.client.* metrics, by command and outcome).
func newStateStore(st *State, mp metric.MeterProvider) (*redisstate.Store, func() error, error) {
	if st == nil {
		return nil, func() error { return nil }, nil
	}
	opt := *st.redisOpt
	if st.Redis.Timeout > 0 {
		opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = st.Redis.Timeout, st.Redis.Timeout, st.Redis.Timeout
	}
	rdb := redis.NewClient(&opt)
	if mp != nil {
		if err := redisotel.InstrumentMetrics(rdb, redisotel.WithMeterProvider(mp)); err != nil {
			rdb.Close()
			return nil, nil, err
		}
	}
	s, err := redisstate.New(redisstate.Config{
		Client:    rdb,
		KeyPrefix: st.Redis.KeyPrefix,
		SealKeys:  st.keys.keys,
		Timeout:   st.Redis.Timeout,
	})
	if err != nil {
		rdb.Close()
		return nil, nil, err
	}
	return s, rdb.Close, nil
}

// pinStore returns the store of the gateway's pins: Redis with a state
// section, the pins file without (nil with neither).
func pinStore(cfg *Config, state *redisstate.Store) pinWatcher {
	switch {
	case state != nil:
		return state.Pins("gateway")
	case cfg.PinsFile != "":
		return policy.NewFileStore(cfg.PinsFile)
	}
	return nil
}

// pinWatcher is a pin store that says when another process changed it:
// the pins file (another process's "pins approve") or Redis (another
// replica).
type pinWatcher interface {
	policy.PinStore
	Watch(ctx context.Context, interval time.Duration, changed func()) error
}

// String tells two state configurations apart without showing a secret
// ("" when nil).
func (st *State) String() string {
	if st == nil {
		return ""
	}
	var r RedisState
	var t RedisTLS
	if st.Redis != nil {
		r = *st.Redis
		if r.TLS != nil {
			t = *r.TLS
		}
		r.TLS = nil
	}
	return fmt.Sprintf("%+v %+v %s %s", r, t, st.keys.String(), st.RateLimits)
}

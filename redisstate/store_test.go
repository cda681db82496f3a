package redisstate

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/redistest"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// key16 and key32 are sealing keys of the tests.
var (
	key16 = []byte("0123456789abcdef")
	key32 = []byte("0123456789abcdef0123456789abcdef")
)

// newClient returns a client of srv, closed when t ends.
func newClient(t testing.TB, srv *redistest.Server) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	opt.MaxRetries = -1 // a test of an outage sees it at once
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// newStore returns a Store on srv with its own client, as a replica has.
func newStore(t *testing.T, srv *redistest.Server, cfg Config) *Store { return newStoreB(t, srv, cfg) }

// newStoreB is newStore for tests and benchmarks.
func newStoreB(t testing.TB, srv *redistest.Server, cfg Config) *Store {
	t.Helper()
	cfg.Client = newClient(t, srv)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewRefusesBadConfig(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no client", Config{}, "Config.Client is nil"},
		{"negative timeout", Config{Client: rdb, Timeout: -time.Second}, "negative"},
		{"short key", Config{Client: rdb, SealKeys: [][]byte{[]byte("short")}}, "SealKeys[0] has 5 bytes"},
	} {
		_, err := New(tt.cfg)
		if !errors.Is(err, toolkit.ErrBadParameter) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want ErrBadParameter saying %q", tt.name, err, tt.want)
		}
	}
	s, err := New(Config{Client: rdb})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Tokens(); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Errorf("tokens without sealing keys: %v, want ErrBadParameter", err)
	}
}

// TestUnreachable checks that every operation on a Redis that is gone
// fails within the timeout with ErrUnavailable, and works again once
// Redis is back, with what it held before.
func TestUnreachable(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv, Config{SealKeys: [][]byte{key16}, Timeout: 500 * time.Millisecond})
	tokens, _ := s.Tokens()
	ctx := context.Background()
	if err := tokens.SaveToken(ctx, token("", "https://a.example/mcp", "https://as.example", "access-1")); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	start := time.Now()
	ops := map[string]error{
		"ping":       s.Ping(ctx),
		"load token": func() error { _, err := tokens.LoadToken(ctx, "https://a.example/mcp"); return err }(),
		"save token": tokens.SaveToken(ctx, token("", "https://a.example/mcp", "https://as.example", "access-2")),
		"load pins":  func() error { _, err := s.Pins("p").Load(ctx); return err }(),
	}
	for op, err := range ops {
		if !errors.Is(err, toolkit.ErrUnavailable) {
			t.Errorf("%s with Redis down: %v, want ErrUnavailable", op, err)
		}
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("four operations with Redis down took %v: each is bounded by the timeout", d)
	}
	srv.Restart()
	got, err := tokens.LoadToken(ctx, "https://a.example/mcp")
	if err != nil || got == nil || got.Token.AccessToken != "access-1" {
		t.Fatalf("after Redis came back: %v, %v; want the token saved before", got, err)
	}
}

// TestDumpHoldsNoCredential saves tokens and registrations and reads
// every value Redis holds, and its append-only file on disk: no access
// token, refresh token or client secret is there in clear.
func TestDumpHoldsNoCredential(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv, Config{SealKeys: [][]byte{key32}})
	tokens, _ := s.Tokens()
	ctx := context.Background()
	tok := token("alice", "https://a.example/mcp", "https://as.example", "SECRET-ACCESS-TOKEN")
	tok.Token.RefreshToken = "SECRET-REFRESH-TOKEN"
	tok.ClientSecret = "SECRET-CLIENT-SECRET"
	if err := tokens.SaveToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if err := tokens.SaveRegistration(ctx, registration("https://as.example", "https://gw.example/cb", "client-1", "SECRET-REG-SECRET")); err != nil {
		t.Fatal(err)
	}
	rdb := newClient(t, srv)
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys %v, %v; want a token and a registration", keys, err)
	}
	var all strings.Builder
	for _, k := range keys {
		all.WriteString(k)
		vals, err := rdb.HGetAll(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		for f, v := range vals {
			all.WriteString(f + v)
		}
	}
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(srv.Socket()), "appendonlydir", "*"))
	if len(files) == 0 {
		t.Fatal("no append-only file to read")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(data)
	}
	for _, secret := range []string{"SECRET", "alice", "a.example"} {
		if strings.Contains(all.String(), secret) {
			t.Errorf("Redis holds %q in clear", secret)
		}
	}
}

package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestSessionFromContextNeverNil(t *testing.T) {
	s := SessionFromContext(context.Background())
	if s == nil || s.Logger() == nil {
		t.Fatal("no-op session missing")
	}
	if s.ClientInfo() != nil || s.Capabilities() != nil || s.Meta() != nil || s.ID() != "" {
		t.Fatal("no-op session reports client data")
	}
	if err := s.Progress(1, 2, "half"); err != nil {
		t.Fatal(err)
	}
	if err := s.Progress(1, 2, "a", "b"); !errors.Is(err, ErrBadParameter) {
		t.Fatalf("two messages: %v, want ErrBadParameter", err)
	}
}

func TestWithSession(t *testing.T) {
	ctx := WithSession(context.Background(), "s1", MetaValue{"user", "ada"})
	s := SessionFromContext(ctx)
	if s.ID() != "s1" {
		t.Fatalf("ID = %q", s.ID())
	}
	m := s.Meta()
	if m["id"] != "s1" || m["user"] != "ada" {
		t.Fatalf("Meta = %v", m)
	}
	m["user"] = "mallory"
	if SessionFromContext(ctx).Meta()["user"] != "ada" {
		t.Fatal("Meta returned the session's own map")
	}
}

func TestSessionSharedByConcurrentCalls(t *testing.T) {
	tk := mustNew(t, WithTool(&testTool{name: "t", run: func(ctx context.Context, _ json.RawMessage) (any, error) {
		s := SessionFromContext(ctx)
		s.Logger().Debug("x")
		_ = s.Meta()
		return s.ID(), s.Progress(1, 0)
	}}))
	ctx := WithSession(context.Background(), "shared")
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := tk.Call(ctx, "t")
			if err != nil {
				t.Error(err)
				return
			}
			if b, _ := res.Read(ctx); string(b) != "shared" {
				t.Errorf("tool saw session %q", b)
			}
		}()
	}
	wg.Wait()
}

func TestNoopSessionUsesToolkitLogger(t *testing.T) {
	var buf syncBuffer
	l := slog.New(slog.NewTextHandler(&buf, nil))
	tk := mustNew(t, WithLogger(l), WithTool(&testTool{name: "t", run: func(ctx context.Context, _ json.RawMessage) (any, error) {
		SessionFromContext(ctx).Logger().Info("from tool")
		return nil, nil
	}}))
	if _, err := tk.Call(context.Background(), "t"); err != nil {
		t.Fatal(err)
	}
	if !buf.contains("from tool") {
		t.Fatal("the no-op session did not log through the toolkit's logger")
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *syncBuffer) contains(s string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Contains(string(b.buf), s)
}

// TestWithSessionUsesToolkitLogger checks that a session made by
// WithSession logs (and reports progress) through the logger of the
// toolkit running the call, keeps its ID and metadata there, and uses
// slog.Default outside any call.
func TestWithSessionUsesToolkitLogger(t *testing.T) {
	var buf syncBuffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	tk := mustNew(t, WithLogger(l), WithTool(&testTool{name: "t", run: func(ctx context.Context, _ json.RawMessage) (any, error) {
		s := SessionFromContext(ctx)
		if s.ID() != "s1" || s.Meta()["user"] != "ada" {
			return nil, errors.New("the tool sees another session")
		}
		s.Logger().Info("from tool")
		return nil, s.Progress(1, 2, "halfway")
	}}))
	ctx := WithSession(context.Background(), "s1", MetaValue{"user", "ada"})
	if _, err := tk.Call(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if !buf.contains("from tool") || !buf.contains("halfway") {
		t.Fatalf("the session did not log through the toolkit's logger: %q", buf.buf)
	}
	if SessionFromContext(ctx).Logger() != slog.Default() {
		t.Fatal("outside a call the session does not log through slog.Default")
	}
}

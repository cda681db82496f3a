package store_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/store"
)

// failAfter bounds every wait: it only turns a hang into a failure.
const failAfter = 20 * time.Second

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// harness is a store with its events on a channel and its log in a buffer.
type harness struct {
	t      *testing.T
	dir    string
	d      *store.Dir
	events chan toolkit.ConnectorEvent
	log    *syncBuffer
	done   chan error
	cancel context.CancelFunc
	seq    int
	// atomic makes write replace files by rename, as polling needs: a
	// scan cannot tell a file being written from a finished one.
	atomic bool
}

func newHarness(t *testing.T, opts ...store.Option) *harness {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir(), events: make(chan toolkit.ConnectorEvent, 4096), log: new(syncBuffer)}
	return h.open(opts...)
}

func (h *harness) open(opts ...store.Option) *harness {
	h.t.Helper()
	logger := slog.New(slog.NewTextHandler(h.log, nil))
	d, err := store.Open(h.dir, func(ev toolkit.ConnectorEvent) { h.events <- ev }, append([]store.Option{store.WithLogger(logger)}, opts...)...)
	if err != nil {
		h.t.Fatal(err)
	}
	h.d = d
	return h
}

// run starts Run and waits until the store reports ready.
func (h *harness) run() {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- h.d.Run(ctx) }()
	h.t.Cleanup(h.stop)
	ev := h.next()
	if ev.Kind != toolkit.ConnectorEventStateChange || ev.State.Status != toolkit.StatusReady {
		h.t.Fatalf("first event = %v %+v, want ready", ev.Kind, ev.State)
	}
}

// stop cancels Run and checks it returned nil.
func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	h.cancel = nil
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Run returned %v after cancel", err)
		}
	case <-time.After(failAfter):
		h.t.Error("Run did not return after cancel")
	}
}

// next returns the next event.
func (h *harness) next() toolkit.ConnectorEvent {
	h.t.Helper()
	select {
	case ev := <-h.events:
		return ev
	case <-time.After(failAfter):
		h.t.Fatal("no event")
	}
	return toolkit.ConnectorEvent{}
}

// expect checks the next event's kind (and URI for updates).
func (h *harness) expect(kind toolkit.ConnectorEventKind, uri string) {
	h.t.Helper()
	ev := h.next()
	if ev.Kind != kind || ev.URI != uri {
		h.t.Fatalf("event = %v %q, want %v %q", ev.Kind, ev.URI, kind, uri)
	}
}

// syncFile is the file settle rewrites.
const syncFile = "zz_sync.txt"

// settle rewrites syncFile and consumes events up to the update it causes.
// Changes are handled in order, so every event of earlier changes has then
// been consumed.
func (h *harness) settle() {
	h.t.Helper()
	h.seq++
	h.write(syncFile, fmt.Sprintf("sync %d", h.seq))
	for {
		ev := h.next()
		if ev.Kind == toolkit.ConnectorEventResourceUpdated && ev.URI == h.uri(syncFile) {
			return
		}
	}
}

// waitUntil consumes events until cond holds.
func (h *harness) waitUntil(cond func() bool) {
	h.t.Helper()
	for !cond() {
		h.next()
	}
}

func (h *harness) write(name, content string) {
	h.t.Helper()
	path := filepath.Join(h.dir, name)
	if !h.atomic {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			h.t.Fatal(err)
		}
		return
	}
	tmp := filepath.Join(h.dir, ".tmp-"+name)
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) path(name string) string { return filepath.Join(h.dir, name) }

func (h *harness) uri(name string) string { return "file://" + filepath.ToSlash(h.path(name)) }

func (h *harness) promptNames() []string {
	ps, err := h.d.ListPrompts(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.Name())
	}
	return out
}

func (h *harness) resourceURIs() []string {
	rs, err := h.d.ListResources(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		out = append(out, r.URI())
	}
	return out
}

func (h *harness) hasPrompt(name string) bool { return slices.Contains(h.promptNames(), name) }
func (h *harness) hasResource(file string) bool {
	return slices.Contains(h.resourceURIs(), h.uri(file))
}

func promptFile(title, body string) string {
	return "---\ntitle: " + title + "\n---\n" + body + "\n"
}

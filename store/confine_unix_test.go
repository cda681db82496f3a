//go:build unix

package store_test

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
)

// A named pipe put in place of a served file, or planted before a scan,
// never blocks the store: opening one would wait for a writer forever.
func TestNamedPipeNeverBlocks(t *testing.T) {
	h := newHarness(t)
	if err := syscall.Mkfifo(h.path("planted.txt"), 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	if err := h.d.Put("a.txt", []byte("inside")); err != nil {
		t.Fatal(err)
	}
	rs, _ := h.d.ListResources(context.Background())
	if len(rs) != 1 {
		t.Fatalf("resources = %v", h.resourceURIs())
	}
	if err := os.Remove(h.path("a.txt")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(h.path("a.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := rs[0].Read(context.Background())
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, toolkit.ErrNotFound) {
			t.Errorf("Read of a named pipe: err = %v, want ErrNotFound", err)
		}
	case <-time.After(failAfter):
		t.Fatal("Read of a named pipe blocked")
	}
}

package codemode

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/llmkit/toolkit"
)

// TestWarmWorkers: with Warm, scripts run in workers started before
// them; Close stops and reaps the workers that wait, and Run then fails.
func TestWarmWorkers(t *testing.T) {
	f := newFixture(t, false, Limits{})
	w := &Worker{Path: os.Args[0], Args: []string{"-test.run=^$"}, Warm: 1}
	m, err := New(f.tk, Config{Worker: w})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		out, err := m.Run(context.Background(), `return (await tools.list_files({dir: "w"})).files.length`)
		if err != nil || string(out.JSON) != "50" {
			t.Fatalf("%v, %v", out, err)
		}
	}
	w.pool.wg.Wait() // the refill after the last script
	w.pool.mu.Lock()
	spare := append([]*proc(nil), w.pool.spare...)
	w.pool.mu.Unlock()
	if len(spare) != 1 {
		t.Fatalf("%d workers wait, want 1", len(spare))
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if spare[0].cmd.ProcessState == nil {
		t.Error("the waiting worker was not reaped")
	}
	if _, err := m.Run(context.Background(), `return 1`); !errors.Is(err, toolkit.ErrClosed) {
		t.Errorf("Run after Close: %v", err)
	}
}

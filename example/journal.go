package main

import (
	"context"
	"slices"
	"sync"
)

// journal records what the delegate's hooks saw ("state remote ready",
// "event prompt_list_changed user"), so that the demo can wait for a
// connector to come up or for an edit to arrive instead of sleeping.
type journal struct {
	mu      sync.Mutex
	entries []string
	changed chan struct{} // closed and replaced by every add
}

func newJournal() *journal { return &journal{changed: make(chan struct{})} }

// add records one entry and wakes the waiters.
func (j *journal) add(entry string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.entries = append(j.entries, entry)
	close(j.changed)
	j.changed = make(chan struct{})
}

// mark returns the position of the next entry, for wait.
func (j *journal) mark() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.entries)
}

// wait blocks until an entry at or after position from is one of want, and
// returns it, or until ctx ends.
func (j *journal) wait(ctx context.Context, from int, want ...string) (string, error) {
	for {
		j.mu.Lock()
		for _, e := range j.entries[min(from, len(j.entries)):] {
			if slices.Contains(want, e) {
				j.mu.Unlock()
				return e, nil
			}
		}
		changed := j.changed
		j.mu.Unlock()
		select {
		case <-ctx.Done():
			return "", context.Cause(ctx)
		case <-changed:
		}
	}
}

package peers

import (
	"strings"
	"sync"
)

// Bounds on the output kept from a peer process for diagnostics.
const (
	tailLines   = 100
	maxLineSize = 2048
)

// tail keeps the last lines a process wrote.
type tail struct {
	mu    sync.Mutex
	lines []string
}

func (b *tail) add(line string) {
	if len(line) > maxLineSize {
		line = line[:maxLineSize] + "…"
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.lines) == tailLines {
		copy(b.lines, b.lines[1:])
		b.lines = b.lines[:tailLines-1]
	}
	b.lines = append(b.lines, line)
}

func (b *tail) contains(s string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range b.lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

func (b *tail) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

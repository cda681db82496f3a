package main

import (
	"fmt"
	"io"
	"strconv"
	"sync"
)

// console serialises the demo's output: the main flow, the delegate's
// event and state reports and progress reports all print through it.
type console struct {
	mu sync.Mutex
	w  io.Writer
}

// Printf prints a formatted line.
func (c *console) Printf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.w, format, args...)
}

// Println prints its arguments as one line.
func (c *console) Println(args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintln(c.w, args...)
}

// Section prints a section heading.
func (c *console) Section(title string) {
	c.Printf("\n== %s\n", title)
}

// formatNumber prints a progress value without a needless fraction.
func formatNumber(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}

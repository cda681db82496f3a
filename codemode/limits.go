package codemode

import (
	"fmt"
	"time"

	"github.com/llmkit/toolkit/internal/errs"
)

// Limits bounds one script. A zero field takes its default.
type Limits struct {
	// Timeout bounds a script's wall time, its tool calls included
	// (default DefaultTimeout). Past it the script is interrupted: no
	// try/catch holds it.
	Timeout time.Duration
	// MaxToolCalls bounds the tool calls of one script (default
	// DefaultMaxToolCalls); the call past it throws, and the script fails.
	MaxToolCalls int
	// MaxOutput bounds the script's result, as JSON or text, in bytes
	// (default DefaultMaxOutput).
	MaxOutput int
	// MaxConsole bounds what console.log and its kin keep, in bytes
	// (default DefaultMaxConsole); past it the output is cut, and says so.
	MaxConsole int
	// MaxToolResult bounds one tool call's result handed to the script,
	// in bytes (default DefaultMaxToolResult); a larger one throws.
	MaxToolResult int
	// MaxCallStack bounds the script's call stack, in frames (default
	// DefaultMaxCallStack).
	MaxCallStack int
	// MaxScript bounds the script's source, in bytes (default
	// DefaultMaxScript).
	MaxScript int
	// MaxParallelCalls bounds the tool calls of one script that run at
	// once (default DefaultMaxParallelCalls): calls the script starts
	// without awaiting each (Promise.all) run in parallel up to it, the
	// others wait for a free slot. Each call's result reaches the script
	// on the script's own goroutine, its failure rejecting its own
	// promise only.
	MaxParallelCalls int
	// MaxMessage bounds one message a worker sends its parent (see
	// Worker), in bytes (default: six times the larger of MaxToolResult
	// and MaxOutput+MaxConsole, plus 64 KiB: room for the largest message
	// a script can make, JSON's escaping included). A worker that sends a
	// larger one, a line without end, more calls than MaxToolCalls, more
	// calls at once than MaxParallelCalls, or a message the protocol does
	// not have is killed, and its script fails with ErrBound.
	MaxMessage int
	// Memory bounds the memory of the process that runs a script in a
	// worker (see Worker), in bytes (default DefaultMemory). In process
	// nothing bounds a script's heap but its Timeout.
	Memory int64
}

// Defaults of Limits.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultMaxToolCalls  = 200
	DefaultMaxOutput     = 256 << 10
	DefaultMaxConsole    = 16 << 10
	DefaultMaxToolResult = 4 << 20
	DefaultMaxCallStack  = 500
	DefaultMaxScript     = 64 << 10
	DefaultMemory        = 256 << 20
	// DefaultMaxParallelCalls is how many of a script's tool calls run
	// at once.
	DefaultMaxParallelCalls = 4
)

// messageSlack is what MaxMessage's default adds for a message's own
// fields (names, a failure's message).
const messageSlack = 64 << 10

// withDefaults returns l with its zero fields set to their defaults, or
// an error naming a negative one.
func (l Limits) withDefaults() (Limits, error) {
	set := func(name string, v *int, def int) error {
		switch {
		case *v < 0:
			return errs.Option("Limits", fmt.Sprintf("%s %d", name, *v), "want 0 (the default) or more")
		case *v == 0:
			*v = def
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"MaxToolCalls", &l.MaxToolCalls, DefaultMaxToolCalls},
		{"MaxOutput", &l.MaxOutput, DefaultMaxOutput},
		{"MaxConsole", &l.MaxConsole, DefaultMaxConsole},
		{"MaxToolResult", &l.MaxToolResult, DefaultMaxToolResult},
		{"MaxCallStack", &l.MaxCallStack, DefaultMaxCallStack},
		{"MaxScript", &l.MaxScript, DefaultMaxScript},
		{"MaxParallelCalls", &l.MaxParallelCalls, DefaultMaxParallelCalls},
	} {
		if err := set(f.name, f.v, f.def); err != nil {
			return l, err
		}
	}
	// Once the bounds of what a message carries are set: its default
	// follows them.
	if err := set("MaxMessage", &l.MaxMessage, 6*max(l.MaxToolResult, l.MaxOutput+l.MaxConsole)+messageSlack); err != nil {
		return l, err
	}
	if l.Timeout < 0 {
		return l, errs.Option("Limits", fmt.Sprintf("Timeout %v", l.Timeout), "want 0 (the default) or more")
	}
	if l.Timeout == 0 {
		l.Timeout = DefaultTimeout
	}
	if l.Memory < 0 {
		return l, errs.Option("Limits", fmt.Sprintf("Memory %d", l.Memory), "want 0 (the default) or more")
	}
	if l.Memory == 0 {
		l.Memory = DefaultMemory
	}
	return l, nil
}

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
)

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
	} {
		if err := set(f.name, f.v, f.def); err != nil {
			return l, err
		}
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

package codemode

import (
	"errors"
	"fmt"

	"github.com/llmkit/toolkit"
)

// Sentinel errors of a script's run. Both wrap toolkit.ErrToolFailed, so
// that the run_code tool reports them to the model as a tool's failure.
var (
	// ErrScript: the script threw, or does not compile.
	ErrScript = fmt.Errorf("%w: script failed", toolkit.ErrToolFailed)
	// ErrBound: the script broke one of its Limits (time, tool calls,
	// output, call stack, memory); it was stopped.
	ErrBound = fmt.Errorf("%w: script stopped", toolkit.ErrToolFailed)
)

// errClosed: the Mode was closed.
var errClosed = fmt.Errorf("%w: code mode closed", toolkit.ErrClosed)

// ScriptError is the error of a script that failed: where, and why.
type ScriptError struct {
	// Line and Column locate the failure in the script (1-based; 0 when
	// unknown).
	Line, Column int
	// Message is the failure as the script sees it ("TypeError: ...") or
	// the bound it broke.
	Message string
	// Console is what the script wrote to the console before it failed.
	Console string
	// Bound is set when the script broke one of its Limits.
	Bound bool
}

// Error returns "line:column: message".
func (e *ScriptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("script:%d:%d: %s", e.Line, e.Column, e.Message)
	}
	return "script: " + e.Message
}

// Is reports ErrBound for a broken bound, ErrScript otherwise.
func (e *ScriptError) Is(target error) bool {
	if e.Bound {
		return target == ErrBound
	}
	return target == ErrScript
}

// Unwrap returns toolkit.ErrToolFailed: the run_code tool ran and failed.
func (e *ScriptError) Unwrap() error { return toolkit.ErrToolFailed }

// asScriptError returns err as a *ScriptError, if it is one.
func asScriptError(err error) (*ScriptError, bool) {
	var se *ScriptError
	ok := errors.As(err, &se)
	return se, ok
}

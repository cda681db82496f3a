// Package errs holds the sentinel errors shared by every package of the
// module. The root package re-exports them, so callers test with
// errors.Is(err, toolkit.ErrNotFound) whichever package produced the error.
package errs

import "errors"

var (
	// ErrNotFound reports that a tool, prompt, resource or namespace does not exist.
	ErrNotFound = errors.New("not found")
	// ErrBadParameter reports invalid input: a bad name, key, schema or argument.
	ErrBadParameter = errors.New("bad parameter")
	// ErrNotImplemented reports that an operation is not supported.
	ErrNotImplemented = errors.New("not implemented")
	// ErrConflict reports a duplicate registration or a state conflict.
	ErrConflict = errors.New("conflict")
	// ErrUnavailable reports that a source is not connected and did not come
	// back within the allowed time.
	ErrUnavailable = errors.New("unavailable")
	// ErrDepthExceeded reports that nested calls exceeded the call-depth limit.
	ErrDepthExceeded = errors.New("call depth exceeded")
	// ErrToolFailed reports that a tool ran and reported failure (including a
	// panic recovered by the toolkit or an MCP result with isError set).
	ErrToolFailed = errors.New("tool failed")
	// ErrSchema reports that input or output does not satisfy a JSON Schema.
	ErrSchema = errors.New("schema violation")
	// ErrClosed reports use of a toolkit or connector after it was closed.
	ErrClosed = errors.New("closed")
	// ErrDenied reports a call the toolkit's policy refused: a rule denied
	// it, a person declined it or could not be asked, or the tool's
	// definition changed and waits for approval.
	ErrDenied = errors.New("denied by policy")
	// ErrRateLimited reports a call refused by a rate limit; it may be
	// retried later.
	ErrRateLimited = errors.New("rate limited")
	// ErrIntegrity reports content that is not what its manifest says: a
	// skill file whose size or SHA-256 digest differs from its entry, or
	// a file the entry does not list.
	ErrIntegrity = errors.New("integrity check failed")
)

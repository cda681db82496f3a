package toolkit

import "github.com/llmkit/toolkit/internal/errs"

// Sentinel errors. Every error the toolkit returns wraps one of these and
// names the item it is about; test with errors.Is.
var (
	// ErrNotFound reports that a tool, prompt, resource or namespace does not exist.
	ErrNotFound = errs.ErrNotFound
	// ErrBadParameter reports invalid input: a bad name, key, schema or argument.
	ErrBadParameter = errs.ErrBadParameter
	// ErrNotImplemented reports that an operation is not supported.
	ErrNotImplemented = errs.ErrNotImplemented
	// ErrConflict reports a duplicate registration or a state conflict.
	ErrConflict = errs.ErrConflict
	// ErrUnavailable reports that a source is down and did not come back in time.
	ErrUnavailable = errs.ErrUnavailable
	// ErrDepthExceeded reports that nested calls exceeded the call-depth limit.
	ErrDepthExceeded = errs.ErrDepthExceeded
	// ErrToolFailed reports that a tool ran and reported failure, or
	// panicked. [Toolkit.Call] adds it to the error of a tool's Run unless
	// that error says the tool did not run: it wraps ErrUnavailable,
	// ErrClosed, ErrNotFound, ErrBadParameter, [context.Canceled] or
	// [context.DeadlineExceeded] (and not ErrToolFailed).
	ErrToolFailed = errs.ErrToolFailed
	// ErrSchema reports that input or output does not satisfy a JSON Schema.
	ErrSchema = errs.ErrSchema
	// ErrClosed reports use of a toolkit or connector after it was closed.
	ErrClosed = errs.ErrClosed
	// ErrDenied reports a call the policy refused (see [WithPolicy]): a
	// rule denied it, a person declined it or could not be asked, or the
	// tool's definition changed and waits for approval. The error is a
	// [*PolicyError] naming the rule.
	ErrDenied = errs.ErrDenied
	// ErrRateLimited reports a call refused by a rate limit of the policy.
	// The error is a [*PolicyError] whose Decision.RetryAfter says when to
	// try again.
	ErrRateLimited = errs.ErrRateLimited
)

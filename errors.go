package toolkit

import "github.com/llmkit/toolkit/internal/errs"

// Sentinel errors. Every error the toolkit and its subpackages return wraps
// one of these and names the item it is about. Test with errors.Is:
// errors.Is(err, ErrNotFound) holds for every error that wraps ErrNotFound,
// whichever package of the module made it (they share one value). Each
// sentinel's message, quoted below, begins the text of the errors that
// wrap it: "not found: no tool named \"x\"".
var (
	// ErrNotFound, message "not found": a tool, prompt, resource or
	// namespace does not exist.
	ErrNotFound = errs.ErrNotFound
	// ErrBadParameter, message "bad parameter": invalid input, such as a
	// bad name, key, schema, argument or option.
	ErrBadParameter = errs.ErrBadParameter
	// ErrNotImplemented, message "not implemented": an operation is not
	// supported.
	ErrNotImplemented = errs.ErrNotImplemented
	// ErrConflict, message "conflict": a duplicate registration or a state
	// conflict.
	ErrConflict = errs.ErrConflict
	// ErrUnavailable, message "unavailable": a source is not connected and
	// did not come back in time.
	ErrUnavailable = errs.ErrUnavailable
	// ErrDepthExceeded, message "call depth exceeded": nested calls
	// exceeded the call-depth limit (WithMaxCallDepth).
	ErrDepthExceeded = errs.ErrDepthExceeded
	// ErrToolFailed, message "tool failed": a tool ran and reported
	// failure, or panicked. [Toolkit.Call] adds it to the error of a tool's
	// Run unless that error says the tool did not run: it wraps
	// ErrUnavailable, ErrClosed, ErrNotFound, ErrBadParameter,
	// [context.Canceled] or [context.DeadlineExceeded] (and not
	// ErrToolFailed).
	ErrToolFailed = errs.ErrToolFailed
	// ErrSchema, message "schema violation": input or output does not
	// satisfy a JSON Schema.
	ErrSchema = errs.ErrSchema
	// ErrClosed, message "closed": use of a toolkit or connector after it
	// was closed.
	ErrClosed = errs.ErrClosed
	// ErrDenied, message "denied by policy", reports a call the policy
	// refused (see [WithPolicy]): a rule denied it, a person declined it or
	// could not be asked, or the tool's definition changed and waits for
	// approval. The error is a [*PolicyError] naming the rule.
	ErrDenied = errs.ErrDenied
	// ErrRateLimited, message "rate limited", reports a call refused by a
	// rate limit of the policy. The error is a [*PolicyError] whose
	// Decision.RetryAfter says when to try again.
	ErrRateLimited = errs.ErrRateLimited
	// ErrIntegrity, message "integrity check failed", reports content that
	// is not what its manifest says: a skill file whose size or SHA-256
	// digest differs from the skill's entry, a file the entry does not
	// list, or a SKILL.md whose front matter differs from the entry's.
	ErrIntegrity = errs.ErrIntegrity
)

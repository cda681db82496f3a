package toolkit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Effect is what a [Policy] decides for a tool call: run it, refuse it,
// or run it once a person says yes.
type Effect uint8

// Effects of a Decision.
const (
	// Allow runs the call.
	Allow Effect = iota
	// Deny refuses the call, and hides the tool from the principal's
	// lists.
	Deny
	// Ask runs the call once an [Approver] says yes; the tool is listed.
	Ask
)

// String returns "allow", "deny" or "ask".
func (e Effect) String() string {
	switch e {
	case Allow:
		return "allow"
	case Deny:
		return "deny"
	case Ask:
		return "ask"
	}
	return fmt.Sprintf("Effect(%d)", uint8(e))
}

// MarshalText writes the effect as String does.
func (e Effect) MarshalText() ([]byte, error) {
	if e > Ask {
		return nil, fmt.Errorf("%w: %v is not an effect", ErrBadParameter, e)
	}
	return []byte(e.String()), nil
}

// UnmarshalText reads "allow", "deny" or "ask".
func (e *Effect) UnmarshalText(b []byte) error {
	switch string(b) {
	case "allow":
		*e = Allow
	case "deny":
		*e = Deny
	case "ask":
		*e = Ask
	default:
		return fmt.Errorf("%w: %q is not an effect: use allow, deny or ask", ErrBadParameter, truncate(string(b), 64))
	}
	return nil
}

// Decision is a [Policy]'s answer about one call, or about listing one
// tool.
type Decision struct {
	// Effect is what happens to the call.
	Effect Effect
	// Rule names the rule that decided; empty for a policy's default.
	Rule string
	// Reason says why, in words a person reads in the error and in the
	// audit (what changed in a quarantined definition, why a rule asks).
	Reason string
	// RetryAfter, with Effect Deny, says that a rate limit refused the
	// call and when it may be tried again: the error wraps ErrRateLimited.
	RetryAfter time.Duration
}

// PolicyRequest is what a [Policy] decides about.
type PolicyRequest struct {
	// Principal is who calls: the authenticated client of the server face,
	// or what the application set with [WithPrincipal] ("" when nobody
	// did).
	Principal string
	// Namespace is the tool's namespace ("builtin", a connector's, "user";
	// "" for a tool called by value that the toolkit does not hold).
	Namespace string
	// Tool is the tool, with its name, description, schemas and
	// annotations.
	Tool Tool
	// Arguments are the call's input as given, not yet checked against
	// the input schema (they may not even be JSON); nil when Listing.
	Arguments json.RawMessage
	// Listing is set when the toolkit asks whether to list the tool for
	// Principal (List, Visible): no call is made, so nothing is counted
	// and nobody is asked. Deny hides the tool; Allow and Ask list it.
	Listing bool
}

// Policy decides which tool calls run. [Toolkit.Call] asks it about every
// call of a tool, after the tool is resolved and before its input is
// validated; [Toolkit.List] asks it about every tool it would list (with
// PolicyRequest.Listing set) and leaves out those it denies. Package
// policy provides a rule engine with pinned tool definitions and rate
// limits. Decide is called concurrently and on every call: it must be
// safe for concurrent use and cheap.
type Policy interface {
	Decide(ctx context.Context, req PolicyRequest) Decision
}

// PolicyFunc adapts a function to a [Policy].
type PolicyFunc func(ctx context.Context, req PolicyRequest) Decision

// Decide calls f.
func (f PolicyFunc) Decide(ctx context.Context, req PolicyRequest) Decision { return f(ctx, req) }

// policyBinder is a Policy that follows the toolkit it decides for.
// (A Policy may also have a method AllowsAll() bool that reports, cheaply
// and for the policy as it stands, that Decide would allow every call
// whatever it is given: a call then skips building the request. Package
// policy's engine without rules, limits or pins has one.)
type policyBinder interface {
	BindToolkit(tk *Toolkit) error
}

// WithPolicy makes p decide every tool call (see [Policy]): Deny refuses
// the call with a [*PolicyError] wrapping ErrDenied (ErrRateLimited when
// the decision has a RetryAfter) and hides the tool from the principal's
// lists; Ask runs it once an [Approver] says yes, and refuses it when the
// approver says no or there is none. A decision with an effect that is
// none of the three refuses the call. When p has a method
// BindToolkit(*Toolkit) error, as the policy package's engine does, it
// is called once with the toolkit being made, so that p can follow the
// toolkit's changes and announce its own ([Toolkit.NotifyPolicyChange]);
// its error fails New. A nil p removes the policy.
//
// Without a policy, and without [WithAudit], a call pays one nil check.
func WithPolicy(p Policy) Option {
	return func(tk *Toolkit) error {
		if b, ok := p.(policyBinder); ok {
			if err := b.BindToolkit(tk); err != nil {
				return fmt.Errorf("WithPolicy: %w", err)
			}
		}
		tk.guardCfg.policy = p
		return nil
	}
}

type principalKey struct{}

// WithPrincipal returns a copy of ctx that says who calls: the principal
// a [Policy] decides for, the audit records, and rate limits count. The
// server face sets it to the authenticated client's identity (the UserID
// of its verified token); an application calling in-process sets the
// user or agent it acts for.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// PrincipalFromContext returns the principal set by [WithPrincipal], or ""
// when none was.
func PrincipalFromContext(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// ApprovalRequest is what an [Approver] is asked to approve: one call.
type ApprovalRequest struct {
	// Principal is who calls.
	Principal string
	// Namespace and Tool are the tool to run.
	Namespace string
	Tool      Tool
	// Arguments are the call's input as given (not yet validated).
	Arguments json.RawMessage
	// Rule and Reason are those of the decision that asks.
	Rule   string
	Reason string
}

// Approver asks a person whether a call may run, for a [Policy] that
// decides Ask. Approve returns true to run the call and false to refuse
// it. An error wrapping ErrNotImplemented says that this approver cannot
// ask (an MCP client without elicitation): the next one is tried. Any
// other error refuses the call and is kept in its error.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (bool, error)
}

// ApproverFunc adapts a function to an [Approver].
type ApproverFunc func(ctx context.Context, req ApprovalRequest) (bool, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req ApprovalRequest) (bool, error) {
	return f(ctx, req)
}

// WithApprover sets the approver asked, after those of the call's context
// and session, when the policy decides Ask (see [ContextWithApprover]). A
// nil a removes it.
func WithApprover(a Approver) Option {
	return func(tk *Toolkit) error { tk.guardCfg.approver = a; return nil }
}

type approverKey struct{}

// ContextWithApprover returns a copy of ctx whose calls are approved by a
// when the policy decides Ask: an agent loop surfaces the question to its
// user this way. When the policy asks, the toolkit tries, in order, the
// approver of the call's context, the session's (the server face asks its
// MCP client through an elicitation), and that of [WithApprover], and
// refuses the call when none can ask.
func ContextWithApprover(ctx context.Context, a Approver) context.Context {
	return context.WithValue(ctx, approverKey{}, a)
}

// Approval is what became of a decision that asks.
type Approval string

// Approvals.
const (
	// ApprovalNone: the decision did not ask.
	ApprovalNone Approval = ""
	// ApprovalGranted: a person said yes.
	ApprovalGranted Approval = "approved"
	// ApprovalDeclined: a person said no, or dismissed the question.
	ApprovalDeclined Approval = "declined"
	// ApprovalUnavailable: there was no way to ask.
	ApprovalUnavailable Approval = "unavailable"
	// ApprovalFailed: asking failed.
	ApprovalFailed Approval = "failed"
)

// PolicyError is the error of a call the policy refused. It wraps
// ErrDenied, and ErrRateLimited too when a rate limit refused it
// (Decision.RetryAfter is then set), and the approver's error if asking
// failed.
type PolicyError struct {
	// Namespace and Tool name the tool.
	Namespace string
	Tool      string
	// Decision is the policy's.
	Decision Decision
	// Approval says what became of a decision that asks.
	Approval Approval
	// Err is why asking failed, or nil.
	Err error
}

// Error says which tool was refused, by which rule, and why.
func (e *PolicyError) Error() string {
	rule := "the policy's default"
	if e.Decision.Rule != "" {
		rule = fmt.Sprintf("rule %q", e.Decision.Rule)
	}
	tool := e.Tool
	if e.Namespace != "" {
		tool = e.Namespace + "." + e.Tool
	}
	msg := fmt.Sprintf("%v: tool %q: %s", ErrDenied, tool, rule)
	if e.Decision.RetryAfter > 0 {
		msg = fmt.Sprintf("%v: tool %q: %s: retry after %v", ErrRateLimited, tool, rule, e.Decision.RetryAfter)
	}
	if e.Decision.Reason != "" {
		msg += ": " + e.Decision.Reason
	}
	switch e.Approval {
	case ApprovalDeclined:
		msg += ": approval was declined"
	case ApprovalUnavailable:
		msg += ": it asks for approval and there is no way to ask"
	case ApprovalFailed:
		msg += fmt.Sprintf(": asking for approval: %v", e.Err)
	}
	if e.Decision.Effect != Allow && e.Decision.Effect != Deny && e.Decision.Effect != Ask {
		msg += fmt.Sprintf(": unknown effect %v", e.Decision.Effect)
	}
	return msg
}

// Is reports whether target is ErrDenied, or ErrRateLimited for a refusal
// by a rate limit.
func (e *PolicyError) Is(target error) bool {
	return target == ErrDenied || target == ErrRateLimited && e.Decision.RetryAfter > 0
}

// Unwrap returns the approver's error, or nil.
func (e *PolicyError) Unwrap() error { return e.Err }

// Policy returns the policy set by [WithPolicy], or nil.
func (tk *Toolkit) Policy() Policy { return tk.guard.policyOf() }

// Visible reports whether the policy lets the principal of ctx (see
// [WithPrincipal]) see it in a list: it is false for a tool the policy
// denies to that principal (a deny rule, a quarantined definition) and
// true for anything else, and always without a policy. Code that lists
// tools its own way (search over tools, a server's lists) filters with
// it, as List does.
func (tk *Toolkit) Visible(ctx context.Context, it Item) bool {
	p := tk.guard.policyOf()
	if p == nil || it.Type != ListTypeTools {
		return true
	}
	t, ok := it.Value.(Tool)
	if !ok {
		return true
	}
	return p.Decide(ctx, PolicyRequest{Principal: PrincipalFromContext(ctx), Namespace: it.Namespace, Tool: t, Listing: true}).Effect != Deny
}

// NotifyPolicyChange tells the toolkit's subscribers that the policy may
// now decide differently about the tools of namespace ("" for every
// namespace): its rules were replaced, a definition was approved. They
// get a ConnectorEventPolicyChanged event and list again what they show.
// The policy calls it; the toolkit's own lists need nothing more.
func (tk *Toolkit) NotifyPolicyChange(namespace string) {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	tk.queue(ConnectorEvent{Kind: ConnectorEventPolicyChanged, Namespace: namespace})
}

// truncate cuts s to at most n bytes, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

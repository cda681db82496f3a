package toolkit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/llmkit/toolkit/internal/policyctx"
)

// guardConfig is what the options WithPolicy, WithApprover, WithAudit and
// WithAuditArguments set; New makes the guard of it.
type guardConfig struct {
	policy    Policy
	approver  Approver
	audit     slog.Handler
	auditArgs bool
}

// guard is the step of the call pipeline that asks the policy, the
// approvers and writes the audit. It is nil when nothing of it is set, so
// that a call without it pays one nil check. Its fields never change.
type guard struct {
	guardConfig
	tk *Toolkit
	// allowsAll is the policy when it can tell, cheaply, that it allows
	// every call as things stand (an engine without rules): the call then
	// skips building the policy's request.
	allowsAll interface{ AllowsAll() bool }
}

// newGuard returns the guard of cfg, or nil when cfg sets nothing.
func newGuard(tk *Toolkit, cfg guardConfig) *guard {
	if cfg.policy == nil && cfg.audit == nil {
		return nil
	}
	g := &guard{guardConfig: cfg, tk: tk}
	g.allowsAll, _ = cfg.policy.(interface{ AllowsAll() bool })
	return g
}

// open reports whether a call passes g without anything to do: no audit,
// and a policy that allows every call as it stands.
func (g *guard) open() bool {
	return g.audit == nil && g.allowsAll != nil && g.allowsAll.AllowsAll()
}

// policyOf returns g's policy, or nil.
func (g *guard) policyOf() Policy {
	if g == nil {
		return nil
	}
	return g.policy
}

// admission is one call's passage through the guard, kept to audit its
// outcome.
type admission struct {
	g         *guard
	kind      ListType      // of the item; ListTypeTools or "" for a call
	start     time.Time     // when the guard took the call
	took      time.Duration // when start is zero: how long, as the caller measured
	principal string
	namespace string
	tool      string
	input     json.RawMessage
	decided   bool // the policy was asked
	decision  Decision
	approval  Approval
	// call is the call's id and parent the id of the call it runs inside
	// (see frame); 0 for none.
	call, parent uint64
}

// admit asks the policy about the call a describes, of tool t (of entry
// e), and the approvers when it asks. A refusal is audited here and
// returned as a *PolicyError; otherwise, with an audit, the caller audits
// the outcome with a.end.
func (g *guard) admit(ctx context.Context, a *admission, t Tool, e *entry) error {
	a.principal, a.namespace = PrincipalFromContext(ctx), e.namespace()
	if g.audit != nil {
		a.start = time.Now()
	}
	if g.policy == nil {
		return nil
	}
	a.decision, a.decided = g.policy.Decide(ctx, PolicyRequest{Principal: a.principal, Namespace: a.namespace, Tool: t, Arguments: a.input}), true
	if a.decision.Effect == Allow {
		return nil
	}
	return g.refuse(ctx, a, t)
}

// refuse handles a decision other than Allow: it asks the approvers when
// the decision asks, and returns and audits the refusal otherwise.
func (g *guard) refuse(ctx context.Context, a *admission, t Tool) error {
	var cause error
	if a.decision.Effect == Ask {
		req := PolicyRequest{Principal: a.principal, Namespace: a.namespace, Tool: t, Arguments: a.input}
		if a.approval, cause = g.ask(ctx, req, a.decision); a.approval == ApprovalGranted {
			return nil
		}
	}
	err := &PolicyError{Namespace: a.namespace, Tool: a.tool, Decision: a.decision, Approval: a.approval, Err: cause}
	a.end(ctx, err)
	return err
}

// ask asks the approvers about a call, in order: the context's, the
// session's, the toolkit's; one whose error wraps ErrNotImplemented
// cannot ask and the next is tried.
func (g *guard) ask(ctx context.Context, req PolicyRequest, d Decision) (Approval, error) {
	ar := ApprovalRequest{Principal: req.Principal, Namespace: req.Namespace, Tool: req.Tool, Arguments: req.Arguments, Rule: d.Rule, Reason: d.Reason}
	ctxApprover, _ := ctx.Value(approverKey{}).(Approver)
	sessApprover, _ := SessionAs[Approver](SessionFromContext(ctx))
	var last error
	for _, a := range [...]Approver{ctxApprover, sessApprover, g.approver} {
		if a == nil {
			continue
		}
		ok, err := a.Approve(ctx, ar)
		switch {
		case errors.Is(err, ErrNotImplemented):
			last = err
			continue
		case err != nil:
			return ApprovalFailed, err
		case ok:
			return ApprovalGranted, nil
		}
		return ApprovalDeclined, nil
	}
	return ApprovalUnavailable, last
}

// end writes the audit record of a call that ended with err.
func (a *admission) end(ctx context.Context, err error) {
	h := a.g.audit
	if h == nil || !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	sum := sha256.Sum256(a.input)
	msg, nameKey := "tool call", "tool"
	switch a.kind {
	case ListTypePrompts:
		msg, nameKey = "prompt get", "prompt"
	case ListTypeResources, ListTypeTemplates:
		msg, nameKey = "resource read", "uri"
	}
	r := slog.NewRecord(time.Now(), slog.LevelInfo, msg, 0)
	r.AddAttrs(
		slog.String("principal", a.principal),
		slog.String("session", SessionFromContext(ctx).ID()),
		slog.String("namespace", a.namespace),
		slog.String(nameKey, a.tool),
		slog.String("args_sha256", hex.EncodeToString(sum[:])),
	)
	if a.call != 0 {
		r.AddAttrs(slog.Uint64("call", a.call))
	}
	if a.parent != 0 {
		r.AddAttrs(slog.Uint64("parent", a.parent))
	}
	if a.g.auditArgs {
		r.AddAttrs(slog.String("args", string(a.input)))
	}
	decision := "none"
	if a.decided {
		decision = a.decision.Effect.String()
	}
	r.AddAttrs(slog.String("decision", decision), slog.String("rule", a.decision.Rule))
	if a.decision.Reason != "" {
		r.AddAttrs(slog.String("reason", a.decision.Reason))
	}
	if a.approval != ApprovalNone {
		r.AddAttrs(slog.String("approval", string(a.approval)))
	}
	if a.decision.RetryAfter > 0 {
		r.AddAttrs(slog.Duration("retry_after", a.decision.RetryAfter))
	}
	took := a.took
	if !a.start.IsZero() {
		took = time.Since(a.start)
	}
	r.AddAttrs(
		slog.String("outcome", Outcome(err)),
		slog.Duration("duration", took),
		slog.String("upstream", a.g.tk.upstreamOf(a.namespace)),
	)
	// The audit is best effort: a handler that fails must not fail the
	// call, which has run.
	_ = h.Handle(ctx, r)
}

// upstreamOf returns the redacted URL of the connector serving namespace
// ns, or "" for builtins and tools the toolkit does not hold.
func (tk *Toolkit) upstreamOf(ns string) string {
	if ns == "" || ns == BuiltinNamespace {
		return ""
	}
	tk.mu.Lock()
	defer tk.mu.Unlock()
	if tk.user != nil && tk.user.ns == ns {
		return tk.user.url
	}
	for _, c := range tk.conns {
		if c.ns == ns {
			return RedactURL(c.url)
		}
	}
	return ""
}

// AuditEntry is an audit record (see [WithAudit]) that the toolkit's own
// Call does not write: a call refused before it reached Call, a prompt
// rendered or a resource read for a client. See [Toolkit.Audit].
type AuditEntry struct {
	// Type is what was asked for: ListTypeTools (or "") for a tool call,
	// ListTypePrompts for a prompt rendered, ListTypeResources for a
	// resource read.
	Type ListType
	// Namespace is the item's namespace, "" when the name resolved to
	// none.
	Namespace string
	// Name is the tool's or prompt's name, or the resource's URI, as the
	// caller gave it (cut to 256 bytes).
	Name string
	// Arguments are the call's input or the prompt's arguments, nil for a
	// read. Only their SHA-256 is written unless [WithAuditArguments].
	Arguments json.RawMessage
	// Duration is how long it took; 0 for a refusal.
	Duration time.Duration
	// Err is how it ended: nil for success; the record's outcome is
	// Outcome(Err). An error in its chain with a method AuditReason()
	// string gives the record's reason: a text that quotes nothing of
	// the input.
	Err error
}

// Audit writes e to the audit (see [WithAudit]), with the principal and
// session of ctx and the decision "none". It does nothing without an
// audit. Toolkit.Call records every call it takes, refusals included; a
// server that answers requests itself records the rest with it, so that
// the audit holds everything a client asked for: the server face writes
// a record for each tools/call it refuses before Call (a name it does
// not serve, arguments that are not an object, a refused input round)
// and for each prompts/get and resources/read, served or refused.
func (tk *Toolkit) Audit(ctx context.Context, e AuditEntry) {
	g := tk.guard
	if g == nil || g.audit == nil {
		return
	}
	a := admission{g: g, kind: e.Type, took: e.Duration, principal: PrincipalFromContext(ctx), namespace: truncate(e.Namespace, maxAuditName), tool: truncate(e.Name, maxAuditName), input: e.Arguments, parent: callNumber(ctx)}
	var why interface{ AuditReason() string }
	if errors.As(e.Err, &why) {
		a.decision.Reason = truncate(why.AuditReason(), maxAuditReason)
	}
	a.end(ctx, e.Err)
}

// Audits reports whether the toolkit writes an audit ([WithAudit]), so
// that a server answering requests itself does no work for records
// [Toolkit.Audit] would drop.
func (tk *Toolkit) Audits() bool {
	return tk.guard != nil && tk.guard.audit != nil
}

// maxAuditName bounds a name written by Audit: a caller may send any.
const maxAuditName = 256

// maxAuditReason bounds a reason written by Audit.
const maxAuditReason = 512

// auditMiss records the refusal of a Call of key, which names no tool the
// toolkit holds, with the call's input when it can be read. It does
// nothing without an audit.
func (tk *Toolkit) auditMiss(ctx context.Context, key string, resources []Resource, err error) {
	if g := tk.guard; g == nil || g.audit == nil {
		return
	}
	input, ierr := toolInput(ctx, key, resources)
	if ierr != nil {
		input = nil
	}
	ns, name := keyNamespace(key), key
	if ns != "" && strings.HasPrefix(key, ns+".") {
		name = key[len(ns)+1:]
	}
	tk.Audit(ctx, AuditEntry{Namespace: ns, Name: name, Arguments: input, Err: err})
}

// WithAudit writes a record to h for every tool call the toolkit runs or
// refuses, in-process or through the server face: at level Info, the
// message "tool call" and the attributes principal, session, namespace,
// tool, args_sha256 (the SHA-256 of the call's input bytes, in hex),
// decision (allow, deny, ask; none without a policy, and for a call
// refused before the policy was asked: a key that names no tool, a
// connector not ready, a call nested too deep, an input that cannot be
// read; see also [Toolkit.Audit]), rule, reason (when
// the decision gives one), approval (approved, declined, unavailable or
// failed, when it asks), retry_after (when a rate limit refused it),
// outcome (one of the Outcome values), duration and upstream (the
// connector's redacted URL; empty for builtins); call, a number that
// tells the call from the others of the toolkit (for a call that reached
// its tool's pipeline), and parent, the call number of the call it runs
// inside, for a nested call (a tool calling back into the toolkit with
// the ctx it was given, as a code-mode script's tool calls do). The arguments themselves,
// and the error text (which may quote them), are not written unless
// [WithAuditArguments] asks for the arguments. The record's time is the
// end of the call. The server face also writes a record, of the same
// attributes, for each prompts/get (message "prompt get", the prompt's
// name under prompt) and resources/read (message "resource read", the
// URI under uri) it serves or refuses (see [Toolkit.Audit]). h is called
// on the calling goroutine; a JSON handler writes one line per record. A
// nil h turns the audit off.
func WithAudit(h slog.Handler) Option {
	return func(tk *Toolkit) error { tk.guardCfg.audit = h; return nil }
}

// WithAuditArguments makes the audit (WithAudit) also write each call's
// input under the attribute args, as given. Arguments can hold secrets
// and personal data: turn it on only where the audit log is as protected
// as the data.
func WithAuditArguments(on bool) Option {
	return func(tk *Toolkit) error { tk.guardCfg.auditArgs = on; return nil }
}

// visibleTools returns the entries of run (tools) that the policy lets
// the principal of ctx see: run itself when it hides none, or when ctx
// asks for every tool (the server face filters per client itself).
func (tk *Toolkit) visibleTools(ctx context.Context, run []*entry) []*entry {
	p := tk.guard.policyOf()
	if p == nil || policyctx.IsUnfiltered(ctx) || tk.guard.allowsAll != nil && tk.guard.allowsAll.AllowsAll() {
		return run
	}
	principal := PrincipalFromContext(ctx)
	var out []*entry
	for i, e := range run {
		t, ok := e.item.Value.(Tool)
		if ok && p.Decide(ctx, PolicyRequest{Principal: principal, Namespace: e.item.Namespace, Tool: t, Listing: true}).Effect == Deny {
			if out == nil {
				out = append(make([]*entry, 0, len(run)-1), run[:i]...)
			}
			continue
		}
		if out != nil {
			out = append(out, e)
		}
	}
	if out == nil {
		return run
	}
	return out
}

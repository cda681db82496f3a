package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmkit/toolkit"
)

// CodeRateLimited is the JSON-RPC error code of a tools/call that the
// toolkit's policy refused for a rate limit. The error's data is an
// object {"retryAfter": seconds, "rule": name}: the client may call again
// after that many seconds.
const CodeRateLimited = -32029

// principalOf returns the authenticated principal of a request: the
// UserID of the token WithBearerAuth verified, or "" for a client that did
// not authenticate (stdio, or HTTP without auth).
func principalOf(extra *sdk.RequestExtra) string {
	if extra != nil && extra.TokenInfo != nil {
		return extra.TokenInfo.UserID
	}
	return ""
}

// withPrincipal returns ctx carrying the principal of a request, which
// the toolkit's policy, audit and rate limits read.
func withPrincipal(ctx context.Context, extra *sdk.RequestExtra) context.Context {
	return toolkit.WithPrincipal(ctx, principalOf(extra))
}

// refusal returns the JSON-RPC error a tools/call answers when the
// policy refused it for a rate limit, or nil: other refusals are tool
// errors, which the model reads.
func refusal(err error) *jsonrpc.Error {
	var pe *toolkit.PolicyError
	if !errors.As(err, &pe) || pe.Decision.RetryAfter <= 0 {
		return nil
	}
	data := fmt.Sprintf(`{"retryAfter":%.3f,"rule":%q}`, pe.Decision.RetryAfter.Seconds(), pe.Decision.Rule)
	return &jsonrpc.Error{Code: CodeRateLimited, Message: err.Error(), Data: []byte(data)}
}

// auditMark notes, for one tools/call, that the toolkit audits it: its
// Call ran, or a refusal was recorded with Toolkit.Audit; for a
// prompts/get or resources/read, the namespace of the item it resolved to.
type auditMark struct {
	done atomic.Bool
	ns   atomic.Pointer[string]
}

type auditMarkKey struct{}

// markAudited notes that the tools/call of ctx is audited.
func markAudited(ctx context.Context) {
	if m, ok := ctx.Value(auditMarkKey{}).(*auditMark); ok {
		m.done.Store(true)
	}
}

// markResolved notes, for the audit of a prompts/get or resources/read,
// the namespace of the item it resolved to.
func markResolved(ctx context.Context, ns string) {
	if m, ok := ctx.Value(auditMarkKey{}).(*auditMark); ok {
		m.ns.Store(&ns)
	}
}

// auditMiddleware makes the toolkit's audit (toolkit.WithAudit) hold every
// tools/call, those the server refuses before the toolkit sees them
// included: a name it does not serve (unknown, its connector not ready,
// gone), arguments that are not an object, too many calls in flight on
// the session. Calls that reach the toolkit's Call are audited there.
// Each prompts/get and resources/read is one record when it ends, served
// or refused (auditRead).
func (s *Server) auditMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "tools/call":
		case "prompts/get", "resources/read":
			return s.auditRead(ctx, method, req, next)
		default:
			return next(ctx, method, req)
		}
		m := &auditMark{}
		res, err := next(context.WithValue(ctx, auditMarkKey{}, m), method, req)
		var we *jsonrpc.Error
		if m.done.Load() || !errors.As(err, &we) {
			return res, err
		}
		if cr, ok := req.(*sdk.CallToolRequest); ok && cr.Params != nil {
			s.auditRefused(ctx, cr, "", cr.Params.Name, refusalCause(we))
		}
		return res, err
	}
}

// auditRead serves a prompts/get or resources/read with next and writes
// its audit record: the prompt's name or the resource's URI as the client
// gave them, the namespace it resolved to, the prompt's arguments, the
// outcome and the duration. A result that asks the client for input (a
// 2026-07-28 round) has not ended: the retry that ends it is recorded.
func (s *Server) auditRead(ctx context.Context, method string, req sdk.Request, next sdk.MethodHandler) (sdk.Result, error) {
	m := &auditMark{}
	start := time.Now()
	res, err := next(context.WithValue(ctx, auditMarkKey{}, m), method, req)
	e := toolkit.AuditEntry{Duration: time.Since(start), Err: err}
	var sess toolkit.Session
	switch r := req.(type) {
	case *sdk.GetPromptRequest:
		if pr, ok := res.(*sdk.GetPromptResult); ok && pr != nil && len(pr.InputRequests) > 0 {
			return res, err
		}
		e.Type, sess = toolkit.ListTypePrompts, newServerSession(ctx, r, s.cfg.loggerName)
		if r.Params != nil {
			e.Name = r.Params.Name
			e.Arguments, _ = json.Marshal(r.Params.Arguments)
		}
	case *sdk.ReadResourceRequest:
		if rr, ok := res.(*sdk.ReadResourceResult); ok && rr != nil && len(rr.InputRequests) > 0 {
			return res, err
		}
		e.Type, sess = toolkit.ListTypeResources, newServerSession(ctx, r, s.cfg.loggerName)
		if r.Params != nil {
			e.Name = r.Params.URI
		}
	default:
		return res, err
	}
	if ns := m.ns.Load(); ns != nil {
		e.Namespace = *ns
	}
	if we := (*jsonrpc.Error)(nil); errors.As(err, &we) {
		e.Err = readRefusal(e.Type, we)
	}
	s.tk.Audit(withPrincipal(toolkit.ContextWithSession(ctx, sess), req.GetExtra()), e)
	return res, err
}

// readRefusal returns the toolkit error that classifies, in the audit, a
// JSON-RPC error answering a prompts/get or resources/read.
func readRefusal(t toolkit.ListType, we *jsonrpc.Error) error {
	switch {
	case isStateError(we):
		return stateRefusal{we}
	case t == toolkit.ListTypeResources && we.Code == sdk.CodeResourceNotFound,
		t == toolkit.ListTypePrompts && we.Code == jsonrpc.CodeInvalidParams && strings.HasPrefix(we.Message, "unknown prompt"):
		return fmt.Errorf("%w: %s", toolkit.ErrNotFound, we.Message)
	case we.Code == jsonrpc.CodeInvalidParams:
		return fmt.Errorf("%w: %s", toolkit.ErrBadParameter, we.Message)
	}
	return we
}

// auditRefused records the refusal of a tools/call before the toolkit's
// Call, with the request's principal, session and arguments.
func (s *Server) auditRefused(ctx context.Context, req *sdk.CallToolRequest, namespace, name string, err error) {
	markAudited(ctx)
	var args []byte
	if req.Params != nil {
		args = callArguments(req.Params.Arguments)
	}
	cctx := withPrincipal(toolkit.ContextWithSession(ctx, newServerSession(ctx, req, s.cfg.loggerName)), req.Extra)
	s.tk.Audit(cctx, toolkit.AuditEntry{Namespace: namespace, Name: name, Arguments: args, Err: err})
}

// refusalCause returns the toolkit error that classifies a JSON-RPC
// refusal of a tools/call in the audit.
func refusalCause(we *jsonrpc.Error) error {
	if isStateError(we) {
		return stateRefusal{we}
	}
	switch {
	case we.Code == jsonrpc.CodeInvalidParams && strings.Contains(we.Message, "unknown tool"):
		return fmt.Errorf("%w: %s", toolkit.ErrNotFound, we.Message)
	case we.Code == jsonrpc.CodeInvalidParams:
		return fmt.Errorf("%w: %s", toolkit.ErrBadParameter, we.Message)
	case we.Code == CodeTooManyCalls:
		return fmt.Errorf("%w: %s", toolkit.ErrUnavailable, we.Message)
	}
	return we
}

// stateRefusal is the audit's cause of a retry refused for its
// requestState: invalid input, with the refusal's own text (which quotes
// nothing of the request) as the record's reason.
type stateRefusal struct{ we *jsonrpc.Error }

func (r stateRefusal) Error() string       { return r.we.Message }
func (r stateRefusal) Unwrap() error       { return toolkit.ErrBadParameter }
func (r stateRefusal) AuditReason() string { return r.we.Message }

// policyMiddleware filters each tools/list answer by the toolkit's policy
// for the principal of the request: a tool the policy denies to that
// principal (a deny rule, a quarantined definition) is left out. The SDK
// serves one list to every session; this makes it one list per principal.
// Calls of a tool left out still reach the toolkit, which refuses them
// with an error naming the rule.
func (s *Server) policyMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil || s.tk.Policy() == nil {
			return res, err
		}
		lr, ok := res.(*sdk.ListToolsResult)
		if !ok || lr == nil {
			return res, err
		}
		pctx := withPrincipal(ctx, req.GetExtra())
		kept := make([]*sdk.Tool, 0, len(lr.Tools))
		for _, t := range lr.Tools {
			if s.toolVisible(pctx, t.Name) {
				kept = append(kept, t)
			}
		}
		lr.Tools = kept
		return lr, nil
	}
}

// toolVisible reports whether the tool exposed under name is visible to
// the principal of ctx. Tools the server did not register from the
// toolkit (added through SDK) are.
func (s *Server) toolVisible(ctx context.Context, exposed string) bool {
	s.mu.Lock()
	reg, ok := s.regs[toolkit.KindTool][exposed]
	s.mu.Unlock()
	if !ok {
		visible, meta := s.metaVisible(ctx, exposed)
		return visible || !meta
	}
	it, err := s.tk.LookupType(ctx, toolkit.ListTypeTools, reg.key)
	if err != nil {
		return true // gone: the next synchronisation removes it
	}
	return s.tk.Visible(ctx, it)
}

// announceTools tells every client that its tool list may have changed,
// when the policy changed what principals see (a definition approved,
// rules replaced) while the registered tools stayed the same. The SDK
// sends tools/list_changed when a tool is added or replaced; replacing a
// registered tool by itself is how to have it sent.
func (s *Server) announceTools() {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	for exposed, c := range s.kinds[toolkit.KindTool].defs {
		if err := safely(func() { kinds[toolkit.KindTool].add(s, c.key, c.def) }); err != nil {
			s.logger.Warn("mcp server: announcing a policy change", "tool", exposed, "error", err)
			continue
		}
		return
	}
}

// maxApprovalArgs bounds the arguments shown in an approval request.
const maxApprovalArgs = 2048

var _ toolkit.Approver = (*serverSession)(nil)

// Approve asks the client's user whether a call the policy asks about may
// run, through a form elicitation in the context of the client's request:
// the message names the tool, the rule and its reason and shows the
// arguments; accepting runs the call (unless the form's "approve" box is
// unticked), declining or cancelling refuses it. A client without
// elicitation, or one on a protocol version that forbids requests during
// a request, cannot be asked: the error wraps toolkit.ErrNotImplemented
// and the toolkit tries its own approver, or refuses the call.
func (s *serverSession) Approve(ctx context.Context, req toolkit.ApprovalRequest) (bool, error) {
	return approveBy(ctx, s.Elicit, req)
}

// approveBy asks for the approval of req with elicit, as Approve says.
func approveBy(ctx context.Context, elicit func(context.Context, *sdk.ElicitParams) (*sdk.ElicitResult, error), req toolkit.ApprovalRequest) (bool, error) {
	res, err := elicit(ctx, &sdk.ElicitParams{
		Mode:    "form",
		Message: approvalMessage(req),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"approve": map[string]any{"type": "boolean", "title": "Run this call", "default": true},
			},
		},
	})
	if err != nil {
		return false, err
	}
	if res.Action != "accept" {
		return false, nil
	}
	if v, ok := res.Content["approve"].(bool); ok && !v {
		return false, nil
	}
	return true, nil
}

// approvalMessage is what the person is asked.
func approvalMessage(req toolkit.ApprovalRequest) string {
	var b strings.Builder
	name := req.Tool.Name()
	if req.Namespace != "" {
		name = req.Namespace + "." + name
	}
	fmt.Fprintf(&b, "Allow the tool %q to run?", name)
	if t := req.Tool.Meta().Title; t != "" {
		fmt.Fprintf(&b, " (%s)", t)
	}
	rule := req.Rule
	if rule == "" {
		rule = "the policy's default"
	}
	fmt.Fprintf(&b, "\nAsked by %s", rule)
	if req.Reason != "" {
		fmt.Fprintf(&b, ": %s", req.Reason)
	}
	args := string(req.Arguments)
	if len(args) > maxApprovalArgs {
		args = args[:maxApprovalArgs] + "… (cut)"
	}
	if args != "" {
		fmt.Fprintf(&b, "\nArguments: %s", args)
	}
	return b.String()
}

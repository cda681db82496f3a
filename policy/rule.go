package policy

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/llmkit/toolkit"
)

// Rule is one rule of a policy: when a call matches every condition it
// gives, the rule decides its Effect. Conditions left empty match
// everything. Rules are tried in order and the first that matches
// decides; when none does, the policy's default does.
type Rule struct {
	// Name names the rule in errors, approvals and the audit. Rules
	// without a name are called "rules[i]" after their place.
	Name string `json:"name,omitempty" yaml:"name,omitempty"`
	// Effect is allow, deny or ask.
	Effect toolkit.Effect `json:"effect" yaml:"effect"`
	// Principals are glob patterns of the callers the rule is about: the
	// server face's authenticated principals ("token:1", "jwt:alice"), or
	// what the application set with toolkit.WithPrincipal. Unauthenticated
	// callers have the principal "" (the pattern "" matches it).
	Principals []string `json:"principals,omitempty" yaml:"principals,omitempty"`
	// Namespaces are glob patterns of tool namespaces ("builtin", a
	// connector's namespace, "user").
	Namespaces []string `json:"namespaces,omitempty" yaml:"namespaces,omitempty"`
	// Tools are glob patterns of tool names within their namespace.
	Tools []string `json:"tools,omitempty" yaml:"tools,omitempty"`
	// Annotations match the tool's hints.
	Annotations Annotations `json:"annotations,omitzero" yaml:"annotations,omitempty"`
	// Arguments are conditions on the call's arguments, all of which must
	// hold. Arguments that are not JSON, or hold an object with a key
	// twice, or nest deeper than 64 levels, cannot be judged: a deny or
	// ask rule with conditions then matches and an allow rule does not.
	Arguments []Condition `json:"arguments,omitempty" yaml:"arguments,omitempty"`
	// Reason is told to the caller in the refusal and to the person asked
	// for approval.
	Reason string `json:"reason,omitempty" yaml:"reason,omitempty"`
	// Match, when set, must also return true for the rule to match: any
	// condition Go can express. It is called last, after every other
	// condition held, and must be cheap and safe for concurrent use.
	Match func(ctx context.Context, req toolkit.PolicyRequest) bool `json:"-" yaml:"-"`
}

// Annotations match a tool's hints, as MCP defines them and their
// defaults: a tool is read-only when it says so; destructive unless it
// is read-only or says it is not; idempotent when it says so; open-world
// unless it says it is not. Fields left nil match any tool. Hints are the
// tool's own claims: pinned definitions keep a server from changing them
// after they were approved.
type Annotations struct {
	ReadOnly    *bool `json:"read_only,omitempty" yaml:"read_only,omitempty"`
	Destructive *bool `json:"destructive,omitempty" yaml:"destructive,omitempty"`
	Idempotent  *bool `json:"idempotent,omitempty" yaml:"idempotent,omitempty"`
	OpenWorld   *bool `json:"open_world,omitempty" yaml:"open_world,omitempty"`
}

// any reports whether a gives a condition.
func (a Annotations) any() bool {
	return a.ReadOnly != nil || a.Destructive != nil || a.Idempotent != nil || a.OpenWorld != nil
}

// matches reports whether the hints of m satisfy a.
func (a Annotations) matches(m toolkit.ToolMeta) bool {
	readOnly := m.ReadOnlyHint
	destructive := !readOnly && (m.DestructiveHint == nil || *m.DestructiveHint)
	openWorld := m.OpenWorldHint == nil || *m.OpenWorldHint
	return is(a.ReadOnly, readOnly) && is(a.Destructive, destructive) && is(a.Idempotent, m.IdempotentHint) && is(a.OpenWorld, openWorld)
}

// is reports whether want is nil or equals got.
func is(want *bool, got bool) bool { return want == nil || *want == got }

// Check reports what is wrong with r, naming the field, in an error
// wrapping toolkit.ErrBadParameter.
func (r Rule) Check() error {
	if len(r.Arguments) > maxConditions {
		return fmt.Errorf("%w: %d argument conditions, at most %d", toolkit.ErrBadParameter, len(r.Arguments), maxConditions)
	}
	if n := max(len(r.Principals), len(r.Namespaces), len(r.Tools)); n > maxPatterns {
		return fmt.Errorf("%w: %d patterns in one list, at most %d", toolkit.ErrBadParameter, n, maxPatterns)
	}
	_, err := compileRule(r, 0)
	return err
}

// rule is a compiled Rule.
type rule struct {
	name       string
	effect     toolkit.Effect
	principals globs
	namespaces globs
	tools      globs
	ann        Annotations
	hasAnn     bool
	args       []condition
	reason     string
	match      func(ctx context.Context, req toolkit.PolicyRequest) bool
}

// compileRule checks and compiles r, the i-th rule.
func compileRule(r Rule, i int) (*rule, error) {
	c := &rule{name: r.Name, effect: r.Effect, ann: r.Annotations, hasAnn: r.Annotations.any(), reason: r.Reason, match: r.Match}
	if c.name == "" {
		c.name = fmt.Sprintf("rules[%d]", i)
	}
	if r.Effect > toolkit.Ask {
		return nil, fmt.Errorf("%w: effect %v: use allow, deny or ask", toolkit.ErrBadParameter, r.Effect)
	}
	var err error
	if c.principals, err = compileGlobs("principals", r.Principals); err != nil {
		return nil, err
	}
	if c.namespaces, err = compileGlobs("namespaces", r.Namespaces); err != nil {
		return nil, err
	}
	if c.tools, err = compileGlobs("tools", r.Tools); err != nil {
		return nil, err
	}
	for j, a := range r.Arguments {
		cond, err := compileCondition(a)
		if err != nil {
			return nil, fmt.Errorf("arguments[%d]: %w", j, err)
		}
		c.args = append(c.args, cond)
	}
	return c, nil
}

// matchesTool reports whether the conditions on the caller and the tool
// hold: everything but the arguments and Match.
func (r *rule) matchesTool(req *toolkit.PolicyRequest) bool {
	if !r.principals.match(req.Principal) || !r.namespaces.match(req.Namespace) {
		return false
	}
	if !r.tools.match(req.Tool.Name()) {
		return false
	}
	return !r.hasAnn || r.ann.matches(req.Tool.Meta())
}

// dependsOnCall reports whether the rule looks at more than the caller
// and the tool: its arguments or its Match function.
func (r *rule) dependsOnCall() bool { return len(r.args) > 0 || r.match != nil }

// matchesCall reports whether the argument conditions and Match hold for
// a call whose arguments decode to args (err when they do not).
func (r *rule) matchesCall(ctx context.Context, req *toolkit.PolicyRequest, args *lazyArgs) bool {
	if len(r.args) > 0 {
		v, err := args.get()
		if err != nil {
			// Cannot be judged: only a rule that restrains matches.
			if r.effect == toolkit.Allow {
				return false
			}
		} else {
			for i := range r.args {
				if !r.args[i].holds(v) {
					return false
				}
			}
		}
	}
	return r.match == nil || r.match(ctx, *req)
}

// lazyArgs decodes a call's arguments once, when a rule first needs them.
type lazyArgs struct {
	raw  []byte
	done bool
	v    any
	err  error
}

func (a *lazyArgs) get() (any, error) {
	if !a.done {
		a.done = true
		raw := a.raw
		if len(raw) == 0 {
			raw = []byte("{}")
		}
		a.v, a.err = decodeArguments(raw)
	}
	return a.v, a.err
}

// ruleSet is a compiled list of rules with its default.
type ruleSet struct {
	rules  []*rule
	def    toolkit.Effect
	hasAnn bool // some rule looks at annotations
	memo   atomic.Pointer[memoTable]
}

// maxMemo bounds the memo of a ruleSet; past it the memo starts afresh.
const maxMemo = 1 << 16

// memoTable remembers, for each caller and tool, which rules can decide
// a call: what depends only on them is worked out once, so that a call
// costs the same with 100 rules as with one.
type memoTable struct {
	m sync.Map // memoKey → *memoEntry
	n atomic.Int64
}

// memoKey is what the rules' conditions on the caller and the tool read.
type memoKey struct {
	principal, ns, tool string
	ann                 uint8 // effective hints, when a rule reads them
}

// memoEntry is what the rules say of one caller and tool.
type memoEntry struct {
	// candidates are the rules, in order, that depend on the call and
	// whose other conditions hold: the first whose arguments (and Match)
	// hold decides.
	candidates []*rule
	// final decides when no candidate does: the first rule that does not
	// depend on the call and matches, or the default.
	final toolkit.Decision
	// listing is the decision about listing the tool.
	listing toolkit.Decision
}

// annBits packs the effective hints of m.
func annBits(m toolkit.ToolMeta) uint8 {
	var b uint8
	if m.ReadOnlyHint {
		b |= 1
	}
	if !m.ReadOnlyHint && (m.DestructiveHint == nil || *m.DestructiveHint) {
		b |= 2
	}
	if m.IdempotentHint {
		b |= 4
	}
	if m.OpenWorldHint == nil || *m.OpenWorldHint {
		b |= 8
	}
	return b
}

// entry returns the memo entry of req's caller and tool.
func (s *ruleSet) entry(req *toolkit.PolicyRequest) *memoEntry {
	k := memoKey{principal: req.Principal, ns: req.Namespace, tool: req.Tool.Name()}
	if s.hasAnn {
		k.ann = annBits(req.Tool.Meta())
	}
	t := s.memo.Load()
	if t == nil || t.n.Load() >= maxMemo {
		t = &memoTable{}
		s.memo.Store(t)
	}
	if e, ok := t.m.Load(k); ok {
		return e.(*memoEntry)
	}
	e := s.work(req)
	if _, loaded := t.m.LoadOrStore(k, e); !loaded {
		t.n.Add(1)
	}
	return e
}

// work works out the memo entry of req's caller and tool.
func (s *ruleSet) work(req *toolkit.PolicyRequest) *memoEntry {
	e := &memoEntry{final: toolkit.Decision{Effect: s.def}}
	for _, r := range s.rules {
		if !r.matchesTool(req) {
			continue
		}
		if r.dependsOnCall() {
			e.candidates = append(e.candidates, r)
			continue
		}
		e.final = r.decision()
		break
	}
	// Listing cannot judge the call: a candidate that would deny is
	// passed over (the tool stays listed, some calls may pass), any other
	// decides.
	e.listing = e.final
	for _, r := range e.candidates {
		if r.effect != toolkit.Deny {
			e.listing = r.decision()
			break
		}
	}
	return e
}

// decision is the rule's decision.
func (r *rule) decision() toolkit.Decision {
	return toolkit.Decision{Effect: r.effect, Rule: r.name, Reason: r.reason}
}

// decide returns the decision of the first rule that matches req, or the
// default. When listing, a rule that depends on the call's arguments or
// on Match cannot be judged: one that would deny is passed over, any
// other decides.
func (s *ruleSet) decide(ctx context.Context, req *toolkit.PolicyRequest) toolkit.Decision {
	if len(s.rules) == 0 {
		return toolkit.Decision{Effect: s.def}
	}
	e := s.entry(req)
	if req.Listing {
		return e.listing
	}
	if len(e.candidates) > 0 {
		args := &lazyArgs{raw: req.Arguments}
		for _, r := range e.candidates {
			if r.matchesCall(ctx, req, args) {
				return r.decision()
			}
		}
	}
	return e.final
}

// UnmatchedTools returns the patterns of r.Tools that match no tool of
// tools (tool names by namespace) in a namespace that r.Namespaces
// matches: as the tools stand, the rule can match nothing through them.
// Tools are named as their namespace's server names them
// ("create_issue" in namespace "github"), never by a name a server face
// exposes them under ("github_create_issue"). An invalid rule gives none
// (Check says what is wrong).
func (r Rule) UnmatchedTools(tools map[string][]string) []string {
	namespaces, err := compileGlobs("namespaces", r.Namespaces)
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range r.Tools {
		g, err := compileGlob(p)
		if err != nil {
			return nil
		}
		if !matchesAny(g, namespaces, tools) {
			out = append(out, p)
		}
	}
	return out
}

// matchesAny reports whether g matches a tool name of a namespace of
// tools that namespaces match.
func matchesAny(g glob, namespaces globs, tools map[string][]string) bool {
	for ns, names := range tools {
		if !namespaces.match(ns) {
			continue
		}
		for _, n := range names {
			if g.match(n) {
				return true
			}
		}
	}
	return false
}

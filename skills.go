package toolkit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit/internal/policyctx"
	"github.com/llmkit/toolkit/skill"
)

// Skill is a skill: a SKILL.md with its front matter and supporting
// files, each read verified against the skill's manifest (package skill).
// Skills are the toolkit's fourth kind of item beside tools, prompts and
// resources, from the same sources: builtins ([WithSkill], [Toolkit.AddSkill]),
// connectors that implement [SkillLister] (a remote MCP server declaring
// the skills extension, the store's skills directory).
type Skill = skill.Skill

// SkillLister is implemented by connectors that serve skills. The toolkit
// checks for it with a type assertion, so the Connector interface stays as
// it is; like the List methods of Connector, it answers from memory. A
// connector reports a change of its skills with
// ConnectorEventSkillListChanged.
type SkillLister interface {
	ListSkills(ctx context.Context) ([]Skill, error)
}

// SkillItem is one skill with the namespace it is served from.
type SkillItem struct {
	// Namespace is the source: "builtin", a connector's namespace, or "user".
	Namespace string
	// Skill is the skill itself.
	Skill Skill
}

// Key returns the qualified key that reaches exactly this skill through
// LookupSkill: "namespace.path" (the path is the skill's name unless its
// source nests it, as "acme/billing/refunds").
func (it SkillItem) Key() string { return it.Namespace + "." + it.Skill.Path() }

// skillSet holds the builtin skills.
type skillSet struct {
	mu    sync.Mutex
	items []Skill // path order
}

// WithSkill registers builtin skills (see AddSkill).
func WithSkill(items ...Skill) Option {
	return func(tk *Toolkit) error { return tk.AddSkill(items...) }
}

// AddSkill registers builtin skills. Every skill is checked before any is
// added: a nil skill, a path other than a valid skill name (builtins are
// not nested), a front matter whose name differs, or a path given twice
// or already registered refuses the whole call with ErrBadParameter or
// ErrConflict. Subscribers receive ConnectorEventSkillListChanged.
func (tk *Toolkit) AddSkill(items ...Skill) error {
	tk.skills.mu.Lock()
	defer tk.skills.mu.Unlock()
	next := slices.Clone(tk.skills.items)
	for i, s := range items {
		if isNil(s) {
			return fmt.Errorf("%w: skill %d is nil", ErrBadParameter, i)
		}
		p := s.Path()
		if err := skill.CheckName(p); err != nil {
			return err
		}
		if fm := s.Frontmatter(); fm.Name != p {
			return fmt.Errorf("%w: skill %q: its front matter names it %q", ErrBadParameter, p, fm.Name)
		}
		if slices.ContainsFunc(next, func(o Skill) bool { return o.Path() == p }) {
			return fmt.Errorf("%w: skill %q is already registered", ErrConflict, p)
		}
		next = append(next, s)
	}
	slices.SortFunc(next, func(a, b Skill) int { return strings.Compare(a.Path(), b.Path()) })
	tk.skills.items = next
	tk.skillsChanged(BuiltinNamespace)
	return nil
}

// RemoveSkill removes the builtin skill at path; ErrNotFound if there is
// none.
func (tk *Toolkit) RemoveSkill(path string) error {
	tk.skills.mu.Lock()
	defer tk.skills.mu.Unlock()
	i := slices.IndexFunc(tk.skills.items, func(s Skill) bool { return s.Path() == path })
	if i < 0 {
		return fmt.Errorf("%w: builtin skill %q", ErrNotFound, path)
	}
	tk.skills.items = slices.Delete(slices.Clone(tk.skills.items), i, i+1)
	tk.skillsChanged(BuiltinNamespace)
	return nil
}

// skillsChanged queues the list change of the skills of namespace ns.
func (tk *Toolkit) skillsChanged(ns string) {
	tk.mu.Lock()
	tk.queue(ConnectorEvent{Kind: ConnectorEventSkillListChanged, Namespace: ns})
	tk.mu.Unlock()
}

// ListSkills returns the skills of every source in a stable order: the
// builtins, then connectors in registration order, then the user
// namespace; within a source by path. The principal's policy (see
// WithPolicy) hides the skills it denies. A connector that fails to list
// is logged and skipped.
func (tk *Toolkit) ListSkills(ctx context.Context) []SkillItem {
	tk.skills.mu.Lock()
	out := make([]SkillItem, 0, len(tk.skills.items))
	for _, s := range tk.skills.items {
		out = append(out, SkillItem{Namespace: BuiltinNamespace, Skill: s})
	}
	tk.skills.mu.Unlock()
	for _, cn := range tk.skillSources() {
		out = append(out, tk.connSkills(cn)...)
	}
	return slices.DeleteFunc(out, func(it SkillItem) bool { return !tk.skillVisible(ctx, it) })
}

// skillSources returns the connectors that serve skills, in order, the
// user namespace last.
func (tk *Toolkit) skillSources() []*conn {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	var out []*conn
	for _, cn := range tk.conns {
		if _, ok := cn.c.(SkillLister); ok && !cn.removed && !cn.user {
			out = append(out, cn)
		}
	}
	if cn := tk.user; cn != nil && !cn.removed {
		if _, ok := cn.c.(SkillLister); ok {
			out = append(out, cn)
		}
	}
	return out
}

// connSkills lists the skills of one connector, skipping (and logging)
// those that are nil or whose path is given twice.
func (tk *Toolkit) connSkills(cn *conn) []SkillItem {
	tk.mu.Lock()
	c, _ := cn.c.(SkillLister)
	tk.mu.Unlock()
	if c == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	list, err := c.ListSkills(ctx)
	if err != nil {
		tk.logger.Warn("toolkit: listing connector skills failed", "namespace", cn.ns, "url", RedactURL(cn.url), "err", err)
		return nil
	}
	out := make([]SkillItem, 0, len(list))
	seen := make(map[string]bool, len(list))
	for _, s := range list {
		if isNil(s) || seen[s.Path()] {
			tk.logger.Warn("toolkit: skipping connector skill", "namespace", cn.ns, "url", RedactURL(cn.url), "err", "nil or duplicate skill")
			continue
		}
		seen[s.Path()] = true
		out = append(out, SkillItem{Namespace: cn.ns, Skill: s})
	}
	slices.SortFunc(out, func(a, b SkillItem) int { return strings.Compare(a.Skill.Path(), b.Skill.Path()) })
	return out
}

// LookupSkill finds a skill by key: "namespace.path" reaches exactly one,
// a bare path the first of that path in ListSkills order (builtins, then
// connectors, then user). ErrNotFound when there is none, or when the
// principal's policy denies it.
func (tk *Toolkit) LookupSkill(ctx context.Context, key string) (SkillItem, error) {
	if key == "" || len(key) > maxKey {
		return SkillItem{}, fmt.Errorf("%w: skill key of %d bytes", ErrBadParameter, len(key))
	}
	all := tk.ListSkills(ctx)
	for _, it := range all {
		if it.Key() == key {
			return it, nil
		}
	}
	for _, it := range all {
		if it.Skill.Path() == key {
			return it, nil
		}
	}
	return SkillItem{}, fmt.Errorf("%w: skill %.200q", ErrNotFound, key)
}

// ReadSkill reads one file of the skill key names (see LookupSkill),
// "SKILL.md" for its instructions, verified against the skill's manifest.
// The read goes through the policy and the audit like a call (see
// WithPolicy, WithAudit): the policy sees a read-only tool named
// "skill:<path>" whose description is the skill's, in the skill's
// namespace, with the arguments {"file": file}; a refusal is a
// *PolicyError.
func (tk *Toolkit) ReadSkill(ctx context.Context, key, file string) (data []byte, err error) {
	it, err := tk.LookupSkill(ctx, key)
	if err != nil {
		return nil, err
	}
	if g := tk.guard; g != nil && !g.open() {
		input, _ := json.Marshal(map[string]string{"file": file})
		st := skillTool{it.Skill}
		a := admission{g: g, tool: st.Name(), input: input}
		if err = g.admit(ctx, &a, st, &entry{item: Item{Namespace: it.Namespace}}); err != nil {
			return nil, err
		}
		if g.audit != nil {
			defer func() { a.end(ctx, err) }()
		}
	}
	return it.Skill.ReadFile(ctx, file)
}

// skillVisible reports whether the policy lets the principal of ctx see
// the skill.
func (tk *Toolkit) skillVisible(ctx context.Context, it SkillItem) bool {
	g := tk.guard
	if g == nil || g.policy == nil || g.open() || policyctx.IsUnfiltered(ctx) {
		return true
	}
	d := g.policy.Decide(ctx, PolicyRequest{Principal: PrincipalFromContext(ctx), Namespace: it.Namespace, Tool: skillTool{it.Skill}, Listing: true})
	return d.Effect != Deny
}

// skillTool is how a skill read appears to the policy: a read-only tool
// named "skill:<path>" with the skill's description, which never runs.
type skillTool struct{ s Skill }

func (t skillTool) Name() string                              { return "skill:" + t.s.Path() }
func (t skillTool) Description() string                       { return t.s.Frontmatter().Description }
func (t skillTool) InputSchema() (*jsonschema.Schema, error)  { return skillReadSchema, nil }
func (t skillTool) OutputSchema() (*jsonschema.Schema, error) { return nil, nil }
func (t skillTool) Meta() ToolMeta                            { return ToolMeta{Title: t.s.Path(), ReadOnlyHint: true} }
func (t skillTool) Run(context.Context, json.RawMessage) (any, error) {
	return nil, fmt.Errorf("%w: skill:%s is read with ReadSkill", ErrNotImplemented, t.s.Path())
}

// skillReadSchema is the input of a skill read: the file.
var skillReadSchema = &jsonschema.Schema{
	Type:       "object",
	Properties: map[string]*jsonschema.Schema{"file": {Type: "string"}},
	Required:   []string{"file"},
}

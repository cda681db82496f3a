package policy_test

import (
	"context"
	"errors"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/policy"
	"github.com/llmkit/toolkit/skill"
)

// Skill reads are decided by the rules as calls of a read-only tool named
// "skill:<path>" in the skill's namespace: a rule on "skill:*" names
// them, and a deny rule hides the skill too.
func TestRulesCoverSkills(t *testing.T) {
	ctx := context.Background()
	eng, err := policy.New(ctx, policy.Config{
		Default: toolkit.Allow,
		Rules:   []policy.Rule{{Name: "no-secret-skills", Effect: toolkit.Deny, Namespaces: []string{"builtin"}, Tools: []string{"skill:secret*"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var skills []toolkit.Skill
	for _, name := range []string{"secret-plans", "open-notes"} {
		s, err := skill.New([]byte("---\nname: "+name+"\ndescription: x\n---\nbody\n"), nil)
		if err != nil {
			t.Fatal(err)
		}
		skills = append(skills, s)
	}
	tk, err := toolkit.New(toolkit.WithSkill(skills...), toolkit.WithPolicy(eng))
	if err != nil {
		t.Fatal(err)
	}
	if list := tk.ListSkills(ctx); len(list) != 1 || list[0].Skill.Path() != "open-notes" {
		t.Fatalf("listed %v", list)
	}
	if _, err := tk.ReadSkill(ctx, "open-notes", skill.FileName); err != nil {
		t.Fatal(err)
	}
	if _, err := tk.ReadSkill(ctx, "secret-plans", skill.FileName); !errors.Is(err, toolkit.ErrNotFound) {
		t.Fatalf("denied skill: %v", err)
	}
}

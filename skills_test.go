package toolkit_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/skill"
)

func mustSkill(t *testing.T, name, desc, body string, files map[string][]byte) toolkit.Skill {
	t.Helper()
	s, err := skill.New([]byte("---\nname: "+name+"\ndescription: "+desc+"\n---\n"+body), files)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSkillsBuiltins(t *testing.T) {
	greet := mustSkill(t, "greet", "Greets people.", "Say hello.\n", map[string][]byte{"ref/hello.md": []byte("hi")})
	tk, err := toolkit.New(toolkit.WithSkill(greet))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := tk.AddSkill(greet); !errors.Is(err, toolkit.ErrConflict) {
		t.Fatalf("twice: %v", err)
	}
	if err := tk.AddSkill(nil); !errors.Is(err, toolkit.ErrBadParameter) {
		t.Fatalf("nil: %v", err)
	}
	events := make(chan toolkit.ConnectorEvent, 4)
	cancel := tk.Subscribe(func(ev toolkit.ConnectorEvent) { events <- ev })
	defer cancel()
	if err := tk.AddSkill(mustSkill(t, "audit", "Audits.", "Check.\n", nil)); err != nil {
		t.Fatal(err)
	}
	if ev := <-events; ev.Kind != toolkit.ConnectorEventSkillListChanged || ev.Namespace != "builtin" {
		t.Fatalf("event %+v", ev)
	}
	list := tk.ListSkills(ctx)
	if len(list) != 2 || list[0].Key() != "builtin.audit" || list[1].Key() != "builtin.greet" {
		t.Fatalf("list %+v", list)
	}
	for _, key := range []string{"greet", "builtin.greet"} {
		if it, err := tk.LookupSkill(ctx, key); err != nil || it.Skill != greet {
			t.Fatalf("LookupSkill(%q): %v", key, err)
		}
	}
	if _, err := tk.LookupSkill(ctx, "user.greet"); !errors.Is(err, toolkit.ErrNotFound) {
		t.Fatalf("other namespace: %v", err)
	}
	if b, err := tk.ReadSkill(ctx, "greet", "ref/hello.md"); err != nil || string(b) != "hi" {
		t.Fatalf("ReadSkill: %q %v", b, err)
	}
	if err := tk.RemoveSkill("audit"); err != nil {
		t.Fatal(err)
	}
	if len(tk.ListSkills(ctx)) != 1 {
		t.Fatal("not removed")
	}
}

// The policy decides skill reads as calls of a tool named "skill:<path>",
// hides the skills it denies, and the audit records every read.
func TestSkillsPolicyAndAudit(t *testing.T) {
	var audit bytes.Buffer
	policy := toolkit.PolicyFunc(func(_ context.Context, req toolkit.PolicyRequest) toolkit.Decision {
		if req.Tool.Name() == "skill:secret" && req.Principal != "admin" {
			return toolkit.Decision{Effect: toolkit.Deny, Rule: "no-secret"}
		}
		return toolkit.Decision{Effect: toolkit.Allow}
	})
	tk, err := toolkit.New(
		toolkit.WithSkill(mustSkill(t, "secret", "Secret.", "Hush.\n", nil), mustSkill(t, "open", "Open.", "Go.\n", nil)),
		toolkit.WithPolicy(policy), toolkit.WithAudit(slog.NewJSONHandler(&audit, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if list := tk.ListSkills(ctx); len(list) != 1 || list[0].Skill.Path() != "open" {
		t.Fatalf("list %+v", list)
	}
	if _, err := tk.ReadSkill(ctx, "secret", "SKILL.md"); !errors.Is(err, toolkit.ErrNotFound) {
		t.Fatalf("hidden: %v", err)
	}
	admin := toolkit.WithPrincipal(ctx, "admin")
	if _, err := tk.ReadSkill(admin, "builtin.secret", "SKILL.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := tk.ReadSkill(ctx, "open", "nope.md"); !errors.Is(err, toolkit.ErrNotFound) {
		t.Fatalf("no file: %v", err)
	}
	out := audit.String()
	if !strings.Contains(out, `"tool":"skill:secret"`) || !strings.Contains(out, `"principal":"admin"`) ||
		!strings.Contains(out, `"tool":"skill:open"`) || !strings.Contains(out, `"outcome":"not_found"`) {
		t.Fatalf("audit:\n%s", out)
	}
}

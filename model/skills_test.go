package model

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/skill"
)

func newSkill(t testing.TB, name, desc, body string, files map[string][]byte) toolkit.Skill {
	t.Helper()
	s, err := skill.New([]byte("---\nname: "+name+"\ndescription: "+desc+"\n---\n"+body), files)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The skill tool names every skill with its description, follows the
// toolkit's skills, and loads a skill's instructions and files on demand
// through the policy.
func TestSkillTool(t *testing.T) {
	ctx := context.Background()
	deny := toolkit.PolicyFunc(func(_ context.Context, req toolkit.PolicyRequest) toolkit.Decision {
		if req.Tool.Name() == "skill:secret" && !req.Listing {
			return toolkit.Decision{Effect: toolkit.Deny, Rule: "no-secret"}
		}
		return toolkit.Decision{Effect: toolkit.Allow}
	})
	tk, err := toolkit.New(toolkit.WithSkill(
		newSkill(t, "haiku", "Writes haiku. Use when asked for a poem.", "Write three lines of 5, 7 and 5 syllables.\n", map[string][]byte{"examples.md": []byte("old pond")}),
		newSkill(t, "secret", "Secret.", "x\n", nil),
	), toolkit.WithPolicy(deny))
	if err != nil {
		t.Fatal(err)
	}
	if err := tk.AddTool(SkillTool(tk)); err != nil {
		t.Fatal(err)
	}
	cat := NewCatalog(tk)
	def := func() Definition {
		defs, err := cat.Definitions(ctx, Filter{Names: []string{SkillToolName}})
		if err != nil || len(defs) != 1 {
			t.Fatalf("definitions: %v %v", defs, err)
		}
		return defs[0]
	}
	if d := def(); !strings.Contains(d.Description, "- builtin.haiku: Writes haiku. Use when asked for a poem.") {
		t.Fatalf("description: %s", d.Description)
	}
	if err := tk.AddSkill(newSkill(t, "limerick", "Writes limericks.", "Five lines.\n", nil)); err != nil {
		t.Fatal(err)
	}
	if d := def(); !strings.Contains(d.Description, "builtin.limerick") {
		t.Fatalf("the description missed a new skill: %s", d.Description)
	}
	disp := NewDispatcher(tk, cat)
	call := func(args string) Result {
		return disp.Dispatch(ctx, ToolCall{ID: "1", Name: SkillToolName, Arguments: args})[0]
	}
	if r := call(`{"skill":"builtin.haiku"}`); r.IsError || !strings.Contains(r.Content, "5, 7 and 5 syllables") ||
		!strings.Contains(r.Content, "from builtin") || !strings.Contains(r.Content, "examples.md") {
		t.Fatalf("load: %+v", r)
	}
	if r := call(`{"skill":"haiku","file":"examples.md"}`); r.IsError || r.Content != "old pond" {
		t.Fatalf("file: %+v", r)
	}
	if r := call(`{"skill":"secret"}`); !r.IsError || !strings.Contains(r.Content, "no-secret") {
		t.Fatalf("denied: %+v", r)
	}
	if r := call(`{"skill":"haiku","file":"../../etc/passwd"}`); !r.IsError {
		t.Fatalf("outside: %+v", r)
	}
}

// TestSkillToolFigures logs what progressive loading saves: the tokens
// (bytes/4) of the skill tool's definition, sent with every request,
// against those of every skill's instructions, which the model would
// otherwise carry.
//
//	go test -run TestSkillToolFigures -v ./model/
func TestSkillToolFigures(t *testing.T) {
	var skills []toolkit.Skill
	body := strings.Repeat("Step: do the careful thing, then check it twice. ", 80) + "\n"
	for i := range 50 {
		skills = append(skills, newSkill(t, "skill-"+string(rune('a'+i%26))+string(rune('a'+i/26)), "Does task number "+string(rune('A'+i%26))+" when the user asks for it.", body, nil))
	}
	tk, err := toolkit.New(toolkit.WithSkill(skills...))
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDefinition(SkillToolName, toolkit.Item{Namespace: "builtin", Type: toolkit.ListTypeTools, Name: SkillToolName, Value: SkillTool(tk)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(d)
	all := 0
	for _, s := range skills {
		data, _ := s.ReadFile(context.Background(), skill.FileName)
		all += len(data)
	}
	t.Logf("50 skills: the load_skill definition is ~%d tokens a request; their instructions would be ~%d", len(b)/4, all/4)
	if len(b) >= all {
		t.Fatalf("the definition (%d bytes) is not smaller than the instructions (%d)", len(b), all)
	}
}

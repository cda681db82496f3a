package adaptertest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/model"
	"github.com/llmkit/toolkit/skill"
)

// The conversation of the skill tests: the toolkit holds two skills and
// the skill tool; the scripted model reads the skill tool's description,
// picks the skill whose description matches the user's request ("pirate"),
// loads it (SkillCallID), and follows its instructions: it answers
// SkillAnswer, which begins as the skill's body says.
const (
	SkillCallID = "call_skill"
	SkillAnswer = "Arr! The weather be fair."
	// skillRule is what the pirate skill's body tells the model.
	skillRule = `Begin every answer with "Arr!"`
)

// SkillToolkit returns a toolkit of Builtins, two skills and the skill
// tool (model.SkillTool).
func SkillToolkit(t testing.TB) *toolkit.Toolkit {
	t.Helper()
	var skills []toolkit.Skill
	for _, md := range []string{
		"---\nname: pirate-speak\ndescription: Answers like a pirate. Use when the user asks for a pirate answer.\n---\n" + skillRule + ", then answer briefly.\n",
		"---\nname: formal-tone\ndescription: Answers in a formal register. Use for letters.\n---\nBe formal.\n",
	} {
		s, err := skill.New([]byte(md), nil)
		if err != nil {
			t.Fatal(err)
		}
		skills = append(skills, s)
	}
	tk, err := toolkit.New(toolkit.WithTool(Builtins()...), toolkit.WithSkill(skills...))
	if err != nil {
		t.Fatal(err)
	}
	if err := tk.AddTool(model.SkillTool(tk)); err != nil {
		t.Fatal(err)
	}
	return tk
}

// SkillTurn is the scripted model of the skill tests, a Turn that reads
// the skill tool's description.
func SkillTurn(offered []Tool, results map[string]string) (call *Call, answer string, err error) {
	if got, ok := results[SkillCallID]; ok {
		if !strings.Contains(got, skillRule) || !strings.Contains(got, "from builtin") {
			return nil, "", fmt.Errorf("the loaded skill = %q", got)
		}
		return nil, SkillAnswer, nil
	}
	if len(results) > 0 {
		return nil, "", fmt.Errorf("unexpected results %v", results)
	}
	i := slices.IndexFunc(offered, func(t Tool) bool { return t.Name == model.SkillToolName })
	if i < 0 {
		return nil, "", fmt.Errorf("no %s among the tools", model.SkillToolName)
	}
	desc := offered[i].Description
	if strings.Contains(desc, skillRule) {
		return nil, "", fmt.Errorf("the skill tool's description carries a skill's body: %s", desc)
	}
	for line := range strings.SplitSeq(desc, "\n") {
		key, d, ok := strings.Cut(strings.TrimPrefix(line, "- "), ": ")
		if ok && strings.HasPrefix(line, "- ") && strings.Contains(d, "pirate") {
			args, _ := json.Marshal(map[string]string{"skill": key})
			return &Call{ID: SkillCallID, Name: model.SkillToolName, Args: string(args)}, "", nil
		}
	}
	return nil, "", fmt.Errorf("no skill matches in %q", desc)
}

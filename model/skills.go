package model

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	toolkit "github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/skill"
	"github.com/llmkit/toolkit/tool"
)

// SkillToolName is the name of the tool SkillTool returns.
const SkillToolName = "load_skill"

// maxSkillsListed bounds the skills the tool's description names; past
// it the description says how many more there are.
const maxSkillsListed = 200

// SkillSource is what the skill tool needs of a toolkit: its skills, and
// reading them through its policy and audit. *toolkit.Toolkit implements
// it.
type SkillSource interface {
	ListSkills(ctx context.Context) []toolkit.SkillItem
	ReadSkill(ctx context.Context, key, file string) ([]byte, error)
}

// SkillTool returns a tool that lets a model load skills when it decides
// to (progressive disclosure): its description names each skill of src
// (its key, "namespace.path", which tells its origin) with the skill's
// description, and a call {"skill": key} answers the skill's
// instructions (the body of its SKILL.md, verified) and the list of its
// files; {"skill": key, "file": path} answers one of those files. Add it
// to the toolkit whose skills it offers, and every adapter offers it:
//
//	tk.AddTool(model.SkillTool(tk))
//
// A model thus sees a name and a description per skill in each request
// (a few dozen tokens a skill) and a skill's body only once it loads it.
// Reads go through src.ReadSkill: the policy decides and the audit
// records each one, and a skill the policy hides cannot be loaded. Its
// description is read when a catalog lists the tool: a catalog over a
// toolkit lists again when the skills change.
func SkillTool(src SkillSource) toolkit.Tool {
	return skillTool{src: src}
}

// skillTool is the tool of SkillTool. It holds a func so that its values
// never compare equal: a catalog builds its definition (and so its
// description) again whenever it lists it.
type skillTool struct {
	tool.Base
	src SkillSource
	_   func()
}

func (t skillTool) Name() string { return SkillToolName }

func (t skillTool) Description() string {
	items := t.src.ListSkills(context.Background())
	var b strings.Builder
	b.WriteString("Load a skill: instructions (and supporting files) for a kind of task. ")
	b.WriteString("When the task matches a skill's description, load the skill first and follow its instructions; ")
	b.WriteString(`call with {"skill": key} for its instructions and the list of its files, with {"skill": key, "file": path} for one file.`)
	if len(items) == 0 {
		b.WriteString(" No skill is available now.")
		return b.String()
	}
	b.WriteString(" Skills (key: description):")
	for i, it := range items {
		if i == maxSkillsListed {
			fmt.Fprintf(&b, "\n(and %d more)", len(items)-i)
			break
		}
		fmt.Fprintf(&b, "\n- %s: %s", it.Key(), oneLine(it.Skill.Frontmatter().Description))
	}
	return b.String()
}

// oneLine joins the lines of s.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (t skillTool) InputSchema() (*jsonschema.Schema, error) {
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"skill": {Type: "string", Description: "The skill's key, as the description lists it."},
			"file":  {Type: "string", Description: "A file of the skill, by its path; leave out for the instructions."},
		},
		Required: []string{"skill"},
	}, nil
}

func (t skillTool) Meta() tool.Meta { return tool.Meta{Title: "Load a skill", ReadOnlyHint: true} }

// skillInput is the tool's input.
type skillInput struct {
	Skill string `json:"skill"`
	File  string `json:"file"`
}

func (t skillTool) Run(ctx context.Context, in json.RawMessage) (any, error) {
	var args skillInput
	if err := json.Unmarshal(in, &args); err != nil || args.Skill == "" {
		return nil, fmt.Errorf("%w: %s: want {\"skill\": key}", errs.ErrBadParameter, SkillToolName)
	}
	if args.File != "" && args.File != skill.FileName {
		data, err := t.src.ReadSkill(ctx, args.Skill, args.File)
		if err != nil {
			return nil, err
		}
		if !utf8.Valid(data) {
			return nil, fmt.Errorf("%w: %s of skill %s is binary (%d bytes): it cannot be shown", errs.ErrBadParameter, args.File, args.Skill, len(data))
		}
		return string(data), nil
	}
	data, err := t.src.ReadSkill(ctx, args.Skill, skill.FileName)
	if err != nil {
		return nil, err
	}
	var it toolkit.SkillItem
	for _, c := range t.src.ListSkills(ctx) {
		if c.Key() == args.Skill || c.Skill.Path() == args.Skill {
			it = c
			break
		}
	}
	fm, body, err := skill.Parse(data, skill.Limits{})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Skill %s (from %s): %s\n\n%s", fm.Name, it.Namespace, oneLine(fm.Description), body)
	if it.Skill != nil {
		var files []string
		for _, f := range it.Skill.Files() {
			if f.Path != skill.FileName {
				files = append(files, f.Path)
			}
		}
		if len(files) > 0 {
			fmt.Fprintf(&b, "\n\nFiles of this skill (load one with {\"skill\": %q, \"file\": path}):\n%s", args.Skill, strings.Join(files, "\n"))
		}
	}
	return b.String(), nil
}

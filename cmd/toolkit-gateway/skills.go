package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/store"
)

// The skills key: a directory of skill folders (the Agent Skills layout,
// <dir>/<name>/SKILL.md), watched, served to clients by the skills
// extension under the "skills" namespace (skill://skills/<name>/SKILL.md)
// beside the upstreams' skills (skill://<upstream>/...).
const (
	// skillsNamespace is the namespace of the skills directory.
	skillsNamespace = "skills"
	// skillsURLPrefix begins the connector URL of the skills directory.
	skillsURLPrefix = "skills:"
)

// checkSkills checks the skills key: an existing directory, and no
// upstream named as its namespace.
func (v *validator) checkSkills(c *Config) {
	if c.Skills == "" {
		return
	}
	c.Skills = v.abs(c.Skills)
	if fi, err := os.Stat(c.Skills); err != nil || !fi.IsDir() {
		v.fail(fmt.Sprintf("%s is not a directory", c.Skills), "skills")
	}
	for i, s := range c.Servers {
		if s.Name == skillsNamespace {
			v.fail(fmt.Sprintf("%q is the namespace of the skills directory", s.Name), "servers", i, "name")
		}
	}
}

// addSkills registers the skills directory, if any, as a connector.
func addSkills(tk *toolkit.Toolkit, dir string) error {
	if dir == "" {
		return nil
	}
	return tk.AddConnectorNS(skillsNamespace, skillsURLPrefix+dir)
}

// addSkillTools adds to tools, by namespace, the names under which the
// policy sees the skills (toolkit.ReadSkill: "skill:<path>"), so that a
// rule naming skills is checked against them too.
func addSkillTools(ctx context.Context, tk *toolkit.Toolkit, tools map[string][]string) {
	for _, it := range tk.ListSkills(ctx) {
		tools[it.Namespace] = append(tools[it.Namespace], "skill:"+it.Skill.Path())
	}
}

// skillsConnector returns the connector of the skills directory when url
// names it (ok set), nil otherwise.
func skillsConnector(url string, onEvent func(toolkit.ConnectorEvent), logger *slog.Logger) (c toolkit.Connector, ok bool, err error) {
	dir, ok := strings.CutPrefix(url, skillsURLPrefix)
	if !ok {
		return nil, false, nil
	}
	d, err := store.OpenSkills(dir, onEvent, store.WithLogger(logger))
	if err != nil {
		return nil, true, err
	}
	return d, true, nil
}

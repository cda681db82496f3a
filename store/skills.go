package store

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/skill"
)

// SkillsDir is the subdirectory of the store that holds skills, one folder
// each in the Agent Skills layout: skills/<name>/SKILL.md and its
// supporting files. A folder that is not a valid skill (see skill.Load:
// front matter, a name other than the folder's, symbolic links, more
// than 512 files or 16 MiB) is logged once and skipped alone.
const SkillsDir = "skills"

// OpenSkills returns a store that serves only skills: dir itself holds
// the skill folders (dir/<name>/SKILL.md), watched as Open's skills
// directory is; it serves no prompt or resource. It is how a program
// serves a directory of skills beside the user namespace.
func OpenSkills(dir string, onEvent func(toolkit.ConnectorEvent), opts ...Option) (*Dir, error) {
	return open(dir, onEvent, true, opts)
}

// skillsPath is the directory of the skill folders, relative to the
// store's.
func (d *Dir) skillsPath() string {
	if d.skillsOnly {
		return "."
	}
	return SkillsDir
}

// maxSkills bounds the skill folders the store reads.
const maxSkills = 4096

// skillSet is what the store knows of its skills.
type skillSet struct {
	mu      sync.Mutex // serialises reloads; guards the fields below
	list    []toolkit.Skill
	sums    map[string]string // folder name to its manifest, to tell changes
	skipped map[string]string // folder name to why, logged once
}

var _ toolkit.SkillLister = (*Dir)(nil)

// ListSkills returns the skills of the skills directory, by name.
func (d *Dir) ListSkills(context.Context) ([]toolkit.Skill, error) {
	d.skills.mu.Lock()
	defer d.skills.mu.Unlock()
	return slices.Clone(d.skills.list), nil
}

// confinedFS is the store's directory as an fs.FS: each Open goes
// through the confinement, so nothing outside the directory is reached.
type confinedFS struct{ c *confinement }

func (f confinedFS) Open(name string) (fs.File, error) {
	root, err := f.c.root()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.Open(name)
}

// reloadSkills reads the skills directory again and reports whether the
// skills changed, firing ConnectorEventSkillListChanged when they did
// and fire is set.
func (d *Dir) reloadSkills(fire bool) bool {
	fsys := confinedFS{d.confined}
	dirs, err := fs.ReadDir(fsys, d.skillsPath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.logger.Warn("store: reading the skills directory failed", "dir", d.dir, "err", err)
	}
	var list []toolkit.Skill
	sums := make(map[string]string, len(dirs))
	d.skills.mu.Lock()
	if d.skills.skipped == nil {
		d.skills.skipped = map[string]string{}
	}
	for _, de := range dirs {
		name := de.Name()
		if !de.IsDir() || ignored(name) {
			continue
		}
		if len(list) >= maxSkills {
			d.skipSkill(name, "more than 4096 skills")
			continue
		}
		s, err := skill.Load(fsys, path.Join(d.skillsPath(), name), skill.Limits{})
		if err != nil {
			d.skipSkill(name, err.Error())
			continue
		}
		delete(d.skills.skipped, name)
		list = append(list, s)
		sums[name] = manifestSum(s)
	}
	changed := len(sums) != len(d.skills.sums)
	for name, sum := range sums {
		if d.skills.sums[name] != sum {
			changed = true
		}
	}
	if changed {
		d.skills.list, d.skills.sums = list, sums
	}
	d.skills.mu.Unlock()
	if changed && fire {
		d.onEvent(toolkit.SkillListChangeEvent())
	}
	return changed
}

// skipSkill logs a skill folder refused, once per reason. The caller
// holds d.skills.mu.
func (d *Dir) skipSkill(name, why string) {
	if d.skills.skipped[name] == why {
		return
	}
	d.skills.skipped[name] = why
	d.logger.Warn("store: skipping skill", "dir", d.dir, "skill", name, "err", why)
}

// manifestSum is the skill's manifest as one string.
func manifestSum(s toolkit.Skill) string {
	var b strings.Builder
	for _, f := range s.Files() {
		b.WriteString(f.Path)
		b.WriteByte(0)
		b.WriteString(f.Digest)
		b.WriteByte(0)
	}
	return b.String()
}

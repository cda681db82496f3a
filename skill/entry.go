package skill

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/llmkit/toolkit/internal/errs"
)

// Scheme is the URI scheme skills are served under: a file of the skill
// at path P is "skill://<skill path>/P".
const Scheme = "skill"

// Entry is a skill as SEP-2640's skills/list and skills/get carry it: the
// URI of its SKILL.md, its front matter verbatim, and its manifest.
type Entry struct {
	URI         string         `json:"uri"`
	Frontmatter map[string]any `json:"frontmatter"`
	Resources   Manifest       `json:"resources"`
}

// Manifest is an entry's resources: the files of the skill, or, for a
// skill whose content cannot be digested, Dynamic (the JSON string
// "dynamic").
type Manifest struct {
	Files   []EntryFile
	Dynamic bool
}

// EntryFile is one file of a Manifest.
type EntryFile struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// MarshalJSON writes the files, or "dynamic".
func (m Manifest) MarshalJSON() ([]byte, error) {
	if m.Dynamic {
		return []byte(`"dynamic"`), nil
	}
	if m.Files == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(m.Files)
}

// UnmarshalJSON reads an array of files or the string "dynamic"; anything
// else is an error.
func (m *Manifest) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == `"dynamic"` {
		*m = Manifest{Dynamic: true}
		return nil
	}
	if len(b) == 0 || b[0] != '[' {
		return fmt.Errorf("%w: skill resources: want an array or \"dynamic\"", errs.ErrBadParameter)
	}
	var files []EntryFile
	if err := json.Unmarshal(b, &files); err != nil {
		return fmt.Errorf("%w: skill resources: %v", errs.ErrBadParameter, err)
	}
	*m = Manifest{Files: files}
	return nil
}

// Root returns the URI of the root directory of the skill at path p:
// "skill://" and p.
func Root(p string) string { return Scheme + "://" + p }

// EntryOf returns the entry of s served at root (a skill:// directory
// URI without a trailing slash, such as Root(s.Path())).
func EntryOf(s Skill, root string) Entry {
	e := Entry{URI: root + "/" + FileName, Frontmatter: s.Frontmatter().Fields}
	files := s.Files()
	if files == nil {
		e.Resources.Dynamic = true
		return e
	}
	e.Resources.Files = make([]EntryFile, len(files))
	for i, f := range files {
		e.Resources.Files[i] = EntryFile{URI: root + "/" + f.Path, Digest: f.Digest, Size: f.Size}
	}
	return e
}

// FromEntry returns the skill an entry describes, whose files read calls
// for by URI and whose answers are verified against the entry (a dynamic
// skill's only bounded by lim.MaxBytes). Its path is the entry URI's
// between "scheme://" and "/SKILL.md", whose last segment must be the
// front matter's name. Every file must lie under the skill's root. It
// fails, wrapping ErrBadParameter, on an entry that breaks these rules,
// the Agent Skills specification's or lim.
func FromEntry(e Entry, lim Limits, read func(ctx context.Context, uri string) ([]byte, error)) (Skill, error) {
	root, ok := strings.CutSuffix(e.URI, "/"+FileName)
	_, p, hasScheme := strings.Cut(root, "://")
	if !ok || !hasScheme || p == "" || len(e.URI) > 2048 {
		return nil, fmt.Errorf("%w: skill URI %.200q: want <scheme>://<skill path>/%s", errs.ErrBadParameter, e.URI, FileName)
	}
	fm, err := FromFields(e.Frontmatter)
	if err != nil {
		return nil, fmt.Errorf("skill %.200q: %w", e.URI, err)
	}
	if name := p[strings.LastIndexByte(p, '/')+1:]; name != fm.Name {
		return nil, fmt.Errorf("%w: skill %.200q: its path ends in %.80q, its name is %q", errs.ErrBadParameter, e.URI, name, fm.Name)
	}
	var files []File
	if !e.Resources.Dynamic {
		if len(e.Resources.Files) > lim.orDefault().MaxFiles {
			return nil, fmt.Errorf("%w: skill %.200q: %d files, more than %d", errs.ErrBadParameter, e.URI, len(e.Resources.Files), lim.orDefault().MaxFiles)
		}
		files = make([]File, 0, len(e.Resources.Files))
		for _, f := range e.Resources.Files {
			rel, ok := strings.CutPrefix(f.URI, root+"/")
			if !ok {
				return nil, fmt.Errorf("%w: skill %.200q: file %.200q lies outside the skill", errs.ErrBadParameter, e.URI, f.URI)
			}
			files = append(files, File{Path: rel, Digest: f.Digest, Size: f.Size})
		}
	}
	s, err := build(p, fm, files, lim)
	if err != nil {
		return nil, err
	}
	s.read = func(ctx context.Context, f File) ([]byte, error) { return read(ctx, root+"/"+f.Path) }
	return s, nil
}

package skill_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/skill"
)

func md(name, desc, extra string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n" + extra + "---\n# " + name + "\nDo it.\n"
}

func TestFrontmatterRules(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"ok", md("pdf-processing", "Handles PDFs.", "license: MIT\nmetadata:\n  version: \"1\"\n"), ""},
		{"upper", md("PDF", "x", ""), "skill name"},
		{"leading hyphen", md("-pdf", "x", ""), "skill name"},
		{"trailing hyphen", md("pdf-", "x", ""), "skill name"},
		{"double hyphen", md("pdf--x", "x", ""), "skill name"},
		{"underscore", md("pdf_x", "x", ""), "skill name"},
		{"long name", md(strings.Repeat("a", 65), "x", ""), `field "name"`},
		{"64 name", md(strings.Repeat("a", 64), "x", ""), ""},
		{"no description", "---\nname: a\n---\n", `"description" is required`},
		{"empty description", md("a", `""`, ""), `field "description"`},
		{"long description", md("a", strings.Repeat("é", 1025), ""), `field "description"`},
		{"1024 description", md("a", strings.Repeat("é", 1024), ""), ""},
		{"long compatibility", md("a", "x", "compatibility: "+strings.Repeat("c", 501)+"\n"), `field "compatibility"`},
		{"metadata not strings", md("a", "x", "metadata:\n  n: [1]\n"), `field "metadata"`},
		{"no front matter", "# hello\n", "no front matter"},
		{"unclosed", "---\nname: a\n", "never closed"},
		{"not a mapping", "---\n- a\n---\n", "mapping"},
		{"duplicate key", "---\nname: a\nname: b\ndescription: x\n---\n", "given twice"},
		{"custom tag", md("a", "x", "extra: !!binary aGk=\n"), "tag"},
		{"not utf8", "---\nname: a\ndescription: \xff\n---\n", "UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := skill.Parse([]byte(tc.text), skill.Limits{})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: %v, want ErrBadParameter with %q", err, tc.want)
			}
		})
	}
}

// An alias bomb (each level an alias list of the one before) is refused at
// its first anchor: nothing is expanded.
func TestFrontmatterAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("---\nname: a\ndescription: x\nl0: &l0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d,*l%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	b.WriteString("---\nbody\n")
	_, _, err := skill.Parse([]byte(b.String()), skill.Limits{})
	if !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), "anchors and aliases") {
		t.Fatalf("Parse: %v", err)
	}
	// A merge key is an alias too.
	_, _, err = skill.Parse([]byte("---\nname: a\ndescription: x\nm: &m {a: 1}\nn:\n  <<: *m\n---\n"), skill.Limits{})
	if !errors.Is(err, errs.ErrBadParameter) {
		t.Fatalf("merge: %v", err)
	}
	// Past the front matter bound, the closing line is not looked for.
	big := "---\nname: a\ndescription: x\npad: " + strings.Repeat("p", 70<<10) + "\n---\n"
	if _, _, err = skill.Parse([]byte(big), skill.Limits{}); !errors.Is(err, errs.ErrBadParameter) {
		t.Fatalf("big: %v", err)
	}
	// Deep nesting is bounded.
	deep := "---\nname: a\ndescription: x\nd: " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\n---\n"
	if _, _, err = skill.Parse([]byte(deep), skill.Limits{}); !errors.Is(err, errs.ErrBadParameter) {
		t.Fatalf("deep: %v", err)
	}
}

func writeSkill(t *testing.T, root, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadVerifiesReads(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "pdf", map[string]string{"SKILL.md": md("pdf", "PDFs.", ""), "references/FORMS.md": "forms\n"})
	s, err := skill.Load(os.DirFS(root), "pdf", skill.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(s.Files()); got != 2 {
		t.Fatalf("files: %d", got)
	}
	ctx := context.Background()
	if b, err := s.ReadFile(ctx, "references/FORMS.md"); err != nil || string(b) != "forms\n" {
		t.Fatalf("ReadFile: %q, %v", b, err)
	}
	if _, err := s.ReadFile(ctx, "../pdf/SKILL.md"); !errors.Is(err, errs.ErrNotFound) {
		t.Fatalf("unlisted: %v", err)
	}
	// Same size, other bytes: the digest tells.
	os.WriteFile(filepath.Join(root, "pdf", "references", "FORMS.md"), []byte("FORMS\n"), 0o644)
	if _, err := s.ReadFile(ctx, "references/FORMS.md"); !errors.Is(err, errs.ErrIntegrity) {
		t.Fatalf("changed: %v", err)
	}
	os.WriteFile(filepath.Join(root, "pdf", "references", "FORMS.md"), []byte("longer forms\n"), 0o644)
	if _, err := s.ReadFile(ctx, "references/FORMS.md"); !errors.Is(err, errs.ErrIntegrity) {
		t.Fatalf("grown: %v", err)
	}
	// The front matter of SKILL.md must stay the entry's.
	os.WriteFile(filepath.Join(root, "pdf", "SKILL.md"), []byte(md("pdf", "PDFS.", "")), 0o644)
	if _, err := skill.Body(ctx, s); !errors.Is(err, errs.ErrIntegrity) {
		t.Fatalf("Body: %v", err)
	}
}

func TestLoadRefusesHostileDirectories(t *testing.T) {
	root := t.TempDir()
	// SKILL.md of 100 MB: refused from its size, never read.
	dir := writeSkill(t, root, "huge", map[string]string{})
	f, err := os.Create(filepath.Join(dir, "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(100 << 20)
	f.Close()
	// 10,000 files: refused at the 513th.
	many := writeSkill(t, root, "many", map[string]string{"SKILL.md": md("many", "x", "")})
	for i := range 10000 {
		os.WriteFile(filepath.Join(many, fmt.Sprintf("f%05d", i)), nil, 0o644)
	}
	// A link out of the skill, and one inside it.
	link := writeSkill(t, root, "link", map[string]string{"SKILL.md": md("link", "x", "")})
	os.Symlink("/etc/passwd", filepath.Join(link, "passwd"))
	inner := writeSkill(t, root, "inner", map[string]string{"SKILL.md": md("inner", "x", ""), "a.md": "a"})
	os.Symlink("a.md", filepath.Join(inner, "b.md"))
	// A name other than its directory's.
	writeSkill(t, root, "other", map[string]string{"SKILL.md": md("different", "x", "")})
	// A named pipe.
	fifo := writeSkill(t, root, "fifo", map[string]string{"SKILL.md": md("fifo", "x", "")})
	mkfifo(t, filepath.Join(fifo, "pipe"))
	for name, want := range map[string]string{
		"huge": "over 16777216 bytes", "many": "more than 512 files", "link": "symbolic link",
		"inner": "symbolic link", "other": "directory's", "fifo": "not a regular file",
	} {
		_, err := skill.Load(os.DirFS(root), name, skill.Limits{})
		if !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want %q naming the skill", name, err, want)
		}
	}
}

func TestFromEntryRefusesHostileEntries(t *testing.T) {
	fm := map[string]any{"name": "refunds", "description": "Refunds."}
	ok := skill.Digest([]byte("x"))
	read := func(context.Context, string) ([]byte, error) { return []byte("y"), nil }
	for name, e := range map[string]skill.Entry{
		"dotdot":    {URI: "skill://acme/refunds/SKILL.md", Frontmatter: fm, Resources: skill.Manifest{Files: []skill.EntryFile{{URI: "skill://acme/refunds/SKILL.md", Digest: ok, Size: 1}, {URI: "skill://acme/refunds/../x", Digest: ok, Size: 1}}}},
		"outside":   {URI: "skill://acme/refunds/SKILL.md", Frontmatter: fm, Resources: skill.Manifest{Files: []skill.EntryFile{{URI: "skill://acme/other/SKILL.md", Digest: ok, Size: 1}}}},
		"name":      {URI: "skill://acme/other/SKILL.md", Frontmatter: fm, Resources: skill.Manifest{Dynamic: true}},
		"digest":    {URI: "skill://refunds/SKILL.md", Frontmatter: fm, Resources: skill.Manifest{Files: []skill.EntryFile{{URI: "skill://refunds/SKILL.md", Digest: "md5:x", Size: 1}}}},
		"no md":     {URI: "skill://refunds/SKILL.md", Frontmatter: fm, Resources: skill.Manifest{Files: []skill.EntryFile{}}},
		"too big":   {URI: "skill://refunds/SKILL.md", Frontmatter: fm, Resources: skill.Manifest{Files: []skill.EntryFile{{URI: "skill://refunds/SKILL.md", Digest: ok, Size: 17 << 20}}}},
		"bad uri":   {URI: "refunds", Frontmatter: fm, Resources: skill.Manifest{Dynamic: true}},
		"bad front": {URI: "skill://refunds/SKILL.md", Frontmatter: map[string]any{"name": "refunds"}, Resources: skill.Manifest{Dynamic: true}},
	} {
		if _, err := skill.FromEntry(e, skill.Limits{}, read); !errors.Is(err, errs.ErrBadParameter) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// An entry of 10,000 files is refused before any is looked at.
	many := skill.Entry{URI: "skill://refunds/SKILL.md", Frontmatter: fm}
	for i := range 10000 {
		many.Resources.Files = append(many.Resources.Files, skill.EntryFile{URI: fmt.Sprintf("skill://refunds/f%d", i), Digest: ok, Size: 1})
	}
	if _, err := skill.FromEntry(many, skill.Limits{}, read); !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), "more than 512") {
		t.Errorf("10,000 files: %v", err)
	}
	// A listed file whose content differs from its digest.
	s, err := skill.FromEntry(skill.Entry{URI: "skill://acme/refunds/SKILL.md", Frontmatter: fm,
		Resources: skill.Manifest{Files: []skill.EntryFile{{URI: "skill://acme/refunds/SKILL.md", Digest: ok, Size: 1}}}}, skill.Limits{}, read)
	if err != nil {
		t.Fatal(err)
	}
	if s.Path() != "acme/refunds" || skill.Name(s) != "refunds" {
		t.Fatalf("path %q", s.Path())
	}
	if _, err := s.ReadFile(context.Background(), "SKILL.md"); !errors.Is(err, errs.ErrIntegrity) {
		t.Fatalf("mismatch: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(md("a", "b", "")))
	f.Add([]byte("---\nname: a\ndescription: x\nm: &m [1]\nn: *m\n---\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fm, _, err := skill.Parse(b, skill.Limits{})
		if err == nil {
			if skill.CheckName(fm.Name) != nil || fm.Description == "" {
				t.Fatalf("accepted %+v", fm)
			}
		}
	})
}

// FuzzFromEntry: whatever a server sends as an entry is refused or makes
// a skill whose every path is confined to it, never a panic.
func FuzzFromEntry(f *testing.F) {
	f.Add([]byte(`{"uri":"skill://a/b/SKILL.md","frontmatter":{"name":"b","description":"x"},"resources":[{"uri":"skill://a/b/SKILL.md","digest":"sha256:` + strings.Repeat("0", 64) + `","size":1}]}`))
	f.Add([]byte(`{"uri":"skill://b/SKILL.md","frontmatter":{"name":"b","description":"x"},"resources":"dynamic"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var e skill.Entry
		if json.Unmarshal(b, &e) != nil {
			return
		}
		s, err := skill.FromEntry(e, skill.Limits{}, func(context.Context, string) ([]byte, error) { return nil, nil })
		if err != nil {
			return
		}
		for _, f := range s.Files() {
			if strings.Contains("/"+f.Path+"/", "/../") || strings.HasPrefix(f.Path, "/") {
				t.Fatalf("accepted path %q", f.Path)
			}
		}
	})
}

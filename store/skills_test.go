package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/store"
)

func skillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\nFollow " + name + ".\n"
}

// writeSkillFile writes one file of a skill folder, creating its
// directories.
func (h *harness) writeSkillFile(skill, file, content string) {
	h.t.Helper()
	p := filepath.Join(h.dir, store.SkillsDir, skill, filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// skillDescriptions returns the store's skills, name to description.
func (h *harness) skillDescriptions() map[string]string {
	list, err := h.d.ListSkills(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list {
		out[s.Path()] = s.Frontmatter().Description
	}
	return out
}

// waitSkills consumes events until a skill list change leaves cond true.
func (h *harness) waitSkills(cond func(map[string]string) bool) {
	h.t.Helper()
	for !cond(h.skillDescriptions()) {
		for h.next().Kind != toolkit.ConnectorEventSkillListChanged {
		}
	}
}

// Skills added, edited and removed while the store runs are seen, each
// with a skill list change, the skills directory itself included.
func TestStoreSkillsFollowChanges(t *testing.T) {
	for _, poll := range []bool{false, true} {
		t.Run(map[bool]string{false: "watch", true: "poll"}[poll], func(t *testing.T) {
			var opts []store.Option
			if poll {
				opts = append(opts, store.WithPollInterval(pollInterval))
			}
			h := newHarness(t, opts...)
			h.run()
			h.writeSkillFile("pdf", "SKILL.md", skillMD("pdf", "Handles PDFs."))
			h.writeSkillFile("pdf", "references/forms.md", "forms")
			h.waitSkills(func(m map[string]string) bool { return m["pdf"] == "Handles PDFs." })
			h.writeSkillFile("pdf", "SKILL.md", skillMD("pdf", "Handles PDF files."))
			h.waitSkills(func(m map[string]string) bool { return m["pdf"] == "Handles PDF files." })
			list, _ := h.d.ListSkills(context.Background())
			if b, err := list[0].ReadFile(context.Background(), "references/forms.md"); err != nil || string(b) != "forms" {
				t.Fatalf("read: %q %v", b, err)
			}
			os.RemoveAll(filepath.Join(h.dir, store.SkillsDir, "pdf"))
			h.waitSkills(func(m map[string]string) bool { return len(m) == 0 })
		})
	}
}

// pollInterval is the rescan interval of the polling tests.
const pollInterval = 20 * time.Millisecond

// A bad skill folder is refused alone and named in the log; links out of
// the store never serve a byte.
func TestStoreSkillsHostile(t *testing.T) {
	h := newHarness(t)
	h.writeSkillFile("good", "SKILL.md", skillMD("good", "Fine."))
	h.writeSkillFile("bad", "SKILL.md", skillMD("Bad_Name", "x"))
	h.writeSkillFile("leak", "SKILL.md", skillMD("leak", "x"))
	os.Symlink("/etc/passwd", filepath.Join(h.dir, store.SkillsDir, "leak", "passwd"))
	os.MkdirAll(filepath.Join(h.dir, "outside"), 0o755)
	os.WriteFile(filepath.Join(h.dir, "outside", "SKILL.md"), []byte(skillMD("outside", "x")), 0o644)
	os.Symlink(filepath.Join(h.dir, "outside"), filepath.Join(h.dir, store.SkillsDir, "outside"))
	h.open()
	got := h.skillDescriptions()
	if len(got) != 1 || got["good"] != "Fine." {
		t.Fatalf("skills %v", got)
	}
	log := h.log.String()
	for _, want := range []string{"skill=bad", "skill=leak", "symbolic link"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	// A file swapped for a link after the scan is refused at the read.
	list, _ := h.d.ListSkills(context.Background())
	p := filepath.Join(h.dir, store.SkillsDir, "good", "SKILL.md")
	os.Remove(p)
	os.Symlink("/etc/passwd", p)
	if _, err := list[0].ReadFile(context.Background(), "SKILL.md"); err == nil || errors.Is(err, nil) {
		t.Fatalf("read through a link: %v", err)
	}
}

// OpenSkills serves a directory of skill folders, and nothing else.
func TestOpenSkills(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "note.md"), []byte(promptFile("A prompt", "Hi")), 0o644)
	events := make(chan toolkit.ConnectorEvent, 64)
	d, err := store.OpenSkills(dir, func(ev toolkit.ConnectorEvent) { events <- ev })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() { cancel(); <-done }()
	next := func() toolkit.ConnectorEvent {
		select {
		case ev := <-events:
			return ev
		case <-time.After(failAfter):
			t.Fatal("no event")
		}
		return toolkit.ConnectorEvent{}
	}
	if ev := next(); ev.Kind != toolkit.ConnectorEventStateChange {
		t.Fatalf("first event %v", ev.Kind)
	}
	os.MkdirAll(filepath.Join(dir, "pdf"), 0o755)
	os.WriteFile(filepath.Join(dir, "pdf", "SKILL.md"), []byte(skillMD("pdf", "PDFs.")), 0o644)
	for {
		if ev := next(); ev.Kind == toolkit.ConnectorEventSkillListChanged {
			break
		}
	}
	list, _ := d.ListSkills(ctx)
	prompts, _ := d.ListPrompts(ctx)
	if len(list) != 1 || list[0].Path() != "pdf" || len(prompts) != 0 {
		t.Fatalf("skills %v, prompts %v", list, prompts)
	}
}

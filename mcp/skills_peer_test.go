package mcp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/peers"
	"github.com/llmkit/toolkit/skill"
)

// skillsDir writes the skill folders the skills server serves: a good
// one with a supporting file, and one whose name breaks the Agent Skills
// rules (the server serves it; the connector refuses it alone).
func skillsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range map[string]string{
		"acme/refunds/SKILL.md":           "---\nname: refunds\ndescription: Refunds orders. Use for refund requests.\nlicense: MIT\n---\nCheck the order, then use templates/email.md.\n",
		"acme/refunds/templates/email.md": "Dear customer,\n",
		"Bad_Name/SKILL.md":               "---\nname: Bad_Name\ndescription: Broken.\n---\nx\n",
	} {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestSkillsServer runs the connector against a server of skills written
// with the Skills extension SDK (tools/peers/skillsserver.mjs), over stdio
// in both protocol generations and over streamable HTTP: it lists the
// skills the server declares, refuses the bad one alone, and reads each
// file verified against the entry.
func TestSkillsServer(t *testing.T) {
	dir := skillsDir(t)
	stdio := func(t *testing.T) string {
		node, args := peers.SkillsServerStdio(t, dir)
		return (&StdioCommand{Path: node, Args: args}).String()
	}
	for _, tc := range []struct {
		name string
		url  func(t *testing.T) string
		ask  string
	}{
		{"stdio/" + StatelessProtocolVersion, stdio, ""},
		{"stdio/" + StatefulProtocolVersion, stdio, StatefulProtocolVersion},
		{"http/" + StatelessProtocolVersion, func(t *testing.T) string { return peers.StartSkillsServerHTTP(t, dir) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url(t)
			leakCheck(t)
			opts := []Option{OptTimeouts(Timeouts{Connect: time.Minute})}
			if tc.ask != "" {
				opts = append(opts, OptProtocolVersion(tc.ask))
			}
			r := start(t, url, false, opts...)
			ctx := context.Background()
			list, err := r.ListSkills(ctx)
			if err != nil || len(list) != 1 {
				t.Fatalf("skills %v, %v", list, err)
			}
			s := list[0]
			if s.Path() != "acme/refunds" || s.Frontmatter().License != "MIT" || len(s.Files()) != 2 {
				t.Fatalf("skill %q %+v %v", s.Path(), s.Frontmatter(), s.Files())
			}
			body, err := skill.Body(ctx, s)
			if err != nil || body != "Check the order, then use templates/email.md.\n" {
				t.Fatalf("body %q, %v", body, err)
			}
			if b, err := s.ReadFile(ctx, "templates/email.md"); err != nil || string(b) != "Dear customer,\n" {
				t.Fatalf("file %q, %v", b, err)
			}
			if _, err := s.ReadFile(ctx, "../../Bad_Name/SKILL.md"); !errors.Is(err, toolkit.ErrNotFound) {
				t.Fatalf("unlisted: %v", err)
			}
		})
	}
}

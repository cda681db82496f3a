package peers

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// skillsServerRel is the script of the skills server below the
// repository root.
const skillsServerRel = "tools/peers/skillsserver.mjs"

// SkillsServerStdio returns the command line that runs an MCP server of
// the skill folders of dir written with the Skills extension SDK
// (@olaservo/ext-skills over @modelcontextprotocol/server,
// tools/peers/skillsserver.mjs), which speaks 2025-11-25 and 2026-07-28.
// It skips the test when the peers are not installed.
func SkillsServerStdio(t testing.TB, dir string) (cmd string, args []string) {
	t.Helper()
	in := usable(t)
	if _, err := os.Stat(filepath.Join(in.root, "tools/peers/node_modules/@olaservo/ext-skills/package.json")); err != nil {
		unavailable(t, err)
	}
	return in.node, []string{filepath.Join(in.root, skillsServerRel), dir}
}

// StartSkillsServerHTTP starts the server of SkillsServerStdio over
// streamable HTTP on a free loopback port and returns its MCP endpoint
// URL. It runs until the test ends; on failure its last output is logged.
func StartSkillsServerHTTP(t testing.TB, dir string) string {
	t.Helper()
	node, args := SkillsServerStdio(t, dir)
	cmd := exec.Command(node, append(args, "--http")...)
	cmd.Dir = filepath.Dir(args[0])
	p, err := startProcess(cmd, tsListening)
	if err != nil {
		t.Fatalf("starting the skills server: %v", err)
	}
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("skills server, last output:\n%s", p.out.String())
		}
	})
	if err := p.waitReady(context.Background(), startTimeout, nil); err != nil {
		t.Fatalf("starting the skills server: %v", err)
	}
	for _, line := range strings.Split(p.out.String(), "\n") {
		if url, ok := strings.CutPrefix(line, tsListening); ok {
			return url
		}
	}
	t.Fatalf("the skills server named no URL:\n%s", p.out.String())
	return ""
}

//go:build linux

package mcp

import (
	"os"
	"syscall"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/internal/testing/testserver"
)

// A helper that a stdio server started in a new session (out of its
// process group) is killed when the server is closed: while the server
// runs (the connector stops), and after the server died and left the
// helper an orphan (the connector replaces it).
func TestStdioSetsidHelperKilled(t *testing.T) {
	exe, err := os.Executable()
	mustNotErr(t, err)
	url := (&StdioCommand{Path: exe, Env: []string{testserver.HostileEnv + "=" + testserver.HostileSetsid}}).String()
	// helper starts the server and returns its pid and its helper's,
	// checking that the helper did leave the server's group.
	helper := func(t *testing.T, r *running) (server, helper int) {
		t.Helper()
		pids := serverPids(t, r)
		if len(pids) != 2 {
			t.Fatalf("pids %v", pids)
		}
		t.Cleanup(func() { _ = syscall.Kill(pids[1], syscall.SIGKILL) })
		if pg, err := syscall.Getpgid(pids[1]); err != nil || pg == pids[0] {
			t.Fatalf("the helper %d is in the server's group (%d, %v)", pids[1], pg, err)
		}
		return pids[0], pids[1]
	}

	t.Run("stopped", func(t *testing.T) {
		leakCheck(t)
		r := start(t, url, false)
		_, h := helper(t, r)
		mustNotErr(t, r.stop(t))
		waitGone(t, h)
	})

	t.Run("server died", func(t *testing.T) {
		leakCheck(t)
		r := start(t, url, false, fastBackoff)
		server, h := helper(t, r)
		mustNotErr(t, syscall.Kill(server, syscall.SIGKILL))
		r.states.wait(t, toolkit.StatusReady, 2)
		// The dead server's session was closed before the new one
		// was made: its orphaned helper is gone.
		waitGone(t, h)
		_, h2 := helper(t, r)
		mustNotErr(t, r.stop(t))
		waitGone(t, h2)
	})
}

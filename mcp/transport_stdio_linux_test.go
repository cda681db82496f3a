//go:build linux

package mcp

import (
	"os"
	"strconv"
	"strings"
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

// FuzzParseStat checks that any command name, however odd (spaces,
// parentheses, newlines), leaves the fields after it where they are, and
// that no content of a stat file makes parseStat panic.
func FuzzParseStat(f *testing.F) {
	f.Add("node", byte('S'), 1, uint64(12345), "")
	f.Add("a) R 1 2 3", byte('Z'), 0, uint64(0), "")
	f.Add("((x))", byte('X'), -1, uint64(1<<63), "")
	f.Add("sp ace\nnl", byte('R'), 99999, uint64(7), "garbage ) 1")
	f.Fuzz(func(t *testing.T, comm string, state byte, ppid int, start uint64, raw string) {
		// Any bytes at all: no panic, and a parent and start time only
		// from a line with enough fields.
		if e, ok := parseStat(7, []byte(raw)); ok && e.pid != 7 {
			t.Fatalf("parseStat(%q) = %+v", raw, e)
		}
		if !('A' <= state && state <= 'Z' || 'a' <= state && state <= 'z') || ppid < 0 { // the kernel's states are letters
			return
		}
		fields := []string{string(state), strconv.Itoa(ppid)}
		for i := 5; i < 22; i++ {
			fields = append(fields, strconv.Itoa(i))
		}
		fields = append(fields, strconv.FormatUint(start, 10), "0", "0")
		line := "42 (" + comm + ") " + strings.Join(fields, " ") + "\n"
		e, ok := parseStat(42, []byte(line))
		want := procEntry{pid: 42, ppid: ppid, start: start, zombie: state == 'Z' || state == 'X'}
		if !ok || e != want {
			t.Fatalf("parseStat(%q) = %+v, %v; want %+v", line, e, ok, want)
		}
	})
}

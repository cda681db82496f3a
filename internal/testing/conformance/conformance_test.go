// Package conformance runs the official MCP conformance suite against the
// server program in ./server, which serves a toolkit through mcpserver.New:
// stateful, stateless, and as a gateway that aggregates upstream servers.
//
// Known failures are listed in baseline.txt, one "MODE SCENARIO # reason"
// line each. The test fails on a scenario that fails without a baseline
// entry, and on a baseline entry whose scenario now passes, unless its
// reason starts with "flaky:" (it may then pass or fail).
package conformance

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmkit/toolkit/internal/testing/peers"
)

// baseline reads baseline.txt: mode → scenario → reason.
func baseline(t *testing.T) map[string]map[string]string {
	t.Helper()
	f, err := os.Open("baseline.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		entry, reason, _ := strings.Cut(line, "#")
		fields := strings.Fields(entry)
		if len(fields) != 2 || strings.TrimSpace(reason) == "" {
			t.Fatalf("baseline.txt:%d: want \"MODE SCENARIO # reason\", got %q", n, line)
		}
		if out[fields[0]] == nil {
			out[fields[0]] = map[string]string{}
		}
		out[fields[0]][fields[1]] = strings.TrimSpace(reason)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// buildServer compiles the server program once per test binary.
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "conformance-server")
	cmd := exec.Command("go", "build", "-o", bin, "./server")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the server: %v\n%s", err, out)
	}
	return bin
}

// startServer runs the server program with args and returns its MCP URL.
// The process is killed when the test ends.
func startServer(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-http", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &tailWriter{t: t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		// Drain the rest so the program never blocks on a full pipe.
		for sc.Scan() {
		}
	}()
	select {
	case line, ok := <-lines:
		url, found := strings.CutPrefix(line, "listening on ")
		if !ok || !found {
			t.Fatalf("server did not start (first line %q)", line)
		}
		return url
	case <-time.After(60 * time.Second):
		t.Fatal("server did not print its address within a minute")
	}
	return ""
}

// tailWriter logs what the server writes to stderr.
type tailWriter struct{ t *testing.T }

func (w *tailWriter) Write(p []byte) (int, error) {
	w.t.Logf("server: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// judge compares a run with the baseline of mode.
func judge(t *testing.T, mode string, res *peers.ConformanceResult, base map[string]string) {
	t.Helper()
	seen := map[string]bool{}
	passed := 0
	for _, s := range res.Scenarios {
		seen[s.Scenario] = true
		reason, known := base[s.Scenario]
		switch {
		case s.Passed() && known && strings.HasPrefix(reason, "flaky:"):
			passed++
		case s.Passed() && known:
			t.Errorf("%s %s passes now: remove it from baseline.txt (%s)", mode, s.Scenario, reason)
		case !s.Passed() && !known:
			t.Errorf("%s %s fails:\n  %s", mode, s.Scenario, strings.Join(s.Failures(), "\n  "))
		case s.Passed():
			passed++
		default:
			t.Logf("%s %s fails as expected: %s", mode, s.Scenario, reason)
		}
	}
	for name := range base {
		if !seen[name] {
			t.Errorf("baseline.txt lists %s %s, which did not run", mode, name)
		}
	}
	t.Logf("%s: %d of %d scenarios pass", mode, passed, len(res.Scenarios))
}

func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance suite takes a while; run without -short")
	}
	peers.ConformanceCmd(t) // skips when the peers are not installed
	base := baseline(t)
	bin := buildServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	modes := []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"stateful", func(*testing.T) []string { return nil }},
		{"stateless", func(*testing.T) []string { return []string{"-stateless"} }},
		{"gateway", func(t *testing.T) []string {
			// A gateway aggregating the fixture server and the reference
			// everything server must pass the same checks.
			fixtures := startServer(t, bin)
			everything := peers.EverythingHTTP(t, ctx)
			return []string{"-upstream", "fixtures=" + fixtures, "-upstream", "everything=" + everything}
		}},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			url := startServer(t, bin, m.args(t)...)
			res := peers.RunConformance(t, ctx, url, "--suite", "all")
			judge(t, m.name, res, base[m.name])
			if t.Failed() {
				t.Log(res.Output)
			}
		})
	}
	for mode := range base {
		switch mode {
		case "stateful", "stateless", "gateway":
		default:
			t.Errorf("baseline.txt: unknown mode %q", mode)
		}
	}
}

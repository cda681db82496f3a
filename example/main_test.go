package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// binDir holds the example program, built by exampleProgram.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "example-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}

var (
	buildOnce sync.Once
	buildErr  error
)

// exampleProgram returns the path of the example program, built once for
// the tests that need a real executable: the stdio server the demo starts,
// and the demo itself.
func exampleProgram(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(binDir, "example")
	buildOnce.Do(func() {
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building the example: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testLogger returns a logger whose output is shown when the test fails.
func testLogger(t *testing.T) *slog.Logger {
	t.Helper()
	var buf syncBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", buf.String())
		}
	})
	return slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestLoggerRedactsSecrets: the demo's logger removes the secrets of
// connector URLs from every line, whoever logs them.
func TestLoggerRedactsSecrets(t *testing.T) {
	var buf bytes.Buffer
	l, err := newLogger(&buf, "info")
	if err != nil {
		t.Fatal(err)
	}
	l.Info("connector added", "url", "stdio:github-server?env=GITHUB_TOKEN%3Dghp_secret&arg=--x")
	l.Info("connector added", "url", "https://bot:hunter2@mcp.example/mcp?key=abc123")
	out := buf.String()
	for _, secret := range []string{"ghp_secret", "hunter2", "abc123"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log leaks %q: %s", secret, out)
		}
	}
	if !strings.Contains(out, "stdio:github-server") || !strings.Contains(out, "mcp.example/mcp") {
		t.Errorf("the log lost the URLs themselves: %s", out)
	}
}

// environWithout returns the environment without the variables whose
// names start with prefix.
func environWithout(prefix string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, prefix) {
			env = append(env, kv)
		}
	}
	return env
}

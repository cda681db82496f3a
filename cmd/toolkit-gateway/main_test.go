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

// binDir holds the programs the tests build: the gateway itself and the
// example program, whose stdio server mode is the tests' upstream.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toolkit-gateway-test-")
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

// program builds the package pkg once into binDir/name and returns its
// path.
type program struct {
	once sync.Once
	path string
	err  error
}

func (p *program) build(t *testing.T, name, pkg string) string {
	t.Helper()
	p.once.Do(func() {
		p.path = filepath.Join(binDir, name)
		if out, err := exec.Command("go", "build", "-o", p.path, pkg).CombinedOutput(); err != nil {
			p.err = fmt.Errorf("building %s: %v\n%s", pkg, err, out)
		}
	})
	if p.err != nil {
		t.Fatal(p.err)
	}
	return p.path
}

var gatewayBuild, exampleBuild program

// gatewayProgram returns the path of this program, built once for the
// tests that run the gateway as a process.
func gatewayProgram(t *testing.T) string {
	return gatewayBuild.build(t, "toolkit-gateway", ".")
}

// exampleProgram returns the path of the library's example program, built
// once: its hidden stdio server mode ("mcp-server") is the upstream of
// most tests.
func exampleProgram(t *testing.T) string {
	return exampleBuild.build(t, "example", "github.com/llmkit/toolkit/example")
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

// TestLoggerRedactsSecrets: the program's logger removes the secrets of
// connector URLs from every line, whoever logs them (the gateway's
// "upstream added" line logged stdio env values and query tokens whole).
func TestLoggerRedactsSecrets(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		l, err := newLogger(&buf, format, "info")
		if err != nil {
			t.Fatal(err)
		}
		l.Info("upstream added", "namespace", "gh", "url", "stdio:github-server?env=GITHUB_TOKEN%3Dghp_secret&arg=--x")
		l.Info("upstream added", "namespace", "web", "url", "https://bot:hunter2@mcp.example/mcp?key=abc123")
		out := buf.String()
		for _, secret := range []string{"ghp_secret", "hunter2", "abc123"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s log leaks %q: %s", format, secret, out)
			}
		}
		if !strings.Contains(out, "stdio:github-server") || !strings.Contains(out, "mcp.example/mcp") {
			t.Errorf("%s log lost the URLs themselves: %s", format, out)
		}
	}
}

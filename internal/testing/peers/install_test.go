package peers

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Skip and Fatal instead of stopping.
type recorder struct {
	testing.TB
	calls []string
	msg   string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatal(args ...any) { r.record("Fatal", args) }

func (r *recorder) Skip(args ...any) { r.record("Skip", args) }

func (r *recorder) record(kind string, args []any) {
	if len(r.calls) == 0 {
		r.msg = fmt.Sprint(args...)
	}
	r.calls = append(r.calls, kind)
}

func TestUnavailableSkipsUnlessRequired(t *testing.T) {
	tests := []struct {
		env  string
		want string
	}{
		{"", "Skip"},
		{"0", "Skip"},
		{"true", "Skip"},
		{"1", "Fatal"},
	}
	for _, tt := range tests {
		t.Run("PEERS_REQUIRED="+tt.env, func(t *testing.T) {
			t.Setenv(RequiredEnv, tt.env)
			r := &recorder{TB: t}
			unavailable(r, os.ErrNotExist)
			if len(r.calls) == 0 || r.calls[0] != tt.want {
				t.Fatalf("calls = %v, want %s first", r.calls, tt.want)
			}
			for _, s := range []string{"real MCP peers not installed", "make test", "scripts/peers.sh", os.ErrNotExist.Error()} {
				if !strings.Contains(r.msg, s) {
					t.Errorf("message %q does not mention %q", r.msg, s)
				}
			}
		})
	}
}

func TestDeclaresModule(t *testing.T) {
	tests := []struct {
		gomod string
		want  bool
	}{
		{"module github.com/llmkit/toolkit\n\ngo 1.25.0\n", true},
		{"// comment\nmodule \"github.com/llmkit/toolkit\"\n", true},
		{"module github.com/llmkit/toolkit/example\n", false},
		{"module example.com/other\n", false},
		{"go 1.25.0\n", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := declaresModule([]byte(tt.gomod), modulePath); got != tt.want {
			t.Errorf("declaresModule(%q) = %v, want %v", tt.gomod, got, tt.want)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFindRoot(t *testing.T) {
	tmp := t.TempDir()
	root := filepath.Join(tmp, "repo")
	write(t, filepath.Join(root, "go.mod"), "module "+modulePath+"\n")
	// A nested module of another name must not stop the walk.
	write(t, filepath.Join(root, "a", "go.mod"), "module example.com/nested\n")
	deep := filepath.Join(root, "a", "b", "c")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}

	for _, dir := range []string{root, deep} {
		got, err := findRoot(dir)
		if err != nil || got != root {
			t.Errorf("findRoot(%s) = %q, %v; want %q", dir, got, err, root)
		}
	}
	if got, err := findRoot(tmp); err == nil {
		t.Errorf("findRoot(%s) = %q, want an error", tmp, got)
	}

	// From this package's own directory the walk reaches the real root.
	got, err := findRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if want := filepath.Dir(filepath.Dir(filepath.Dir(wd))); got != want {
		t.Errorf("findRoot(.) = %q, want %q", got, want)
	}
}

func TestCheckStamp(t *testing.T) {
	lock := `{"lockfileVersion": 3}`
	sum := sha256.Sum256([]byte(lock))
	good := hex.EncodeToString(sum[:])
	tests := []struct {
		name    string
		stamp   *string
		wantErr string
	}{
		{"matches", &good, ""},
		{"matches with newline", ptr(good + "\n"), ""},
		{"stale", ptr(strings.Repeat("0", 64)), "out of date"},
		{"missing", nil, "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, filepath.Join(root, lockRel), lock)
			if tt.stamp != nil {
				write(t, filepath.Join(root, stampRel), *tt.stamp)
			}
			err := checkStamp(root)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("checkStamp = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("checkStamp = %v, want an error mentioning %q", err, tt.wantErr)
			}
		})
	}
	if err := checkStamp(t.TempDir()); err == nil {
		t.Error("checkStamp without package-lock.json = nil, want an error")
	}
}

func ptr[T any](v T) *T { return &v }

func TestTailKeepsLastLinesBounded(t *testing.T) {
	var b tail
	for i := range tailLines + 10 {
		b.add(fmt.Sprint("line ", i))
	}
	b.add(strings.Repeat("x", maxLineSize+100))
	lines := strings.Split(b.String(), "\n")
	if len(lines) != tailLines {
		t.Fatalf("kept %d lines, want %d", len(lines), tailLines)
	}
	if lines[0] != "line 11" {
		t.Errorf("first kept line = %q, want %q", lines[0], "line 11")
	}
	if last := lines[len(lines)-1]; len(last) > maxLineSize+len("…") {
		t.Errorf("long line kept at %d bytes, want at most %d", len(last), maxLineSize+len("…"))
	}
	if !b.contains("line 109") || b.contains("line 0") {
		t.Error("contains disagrees with the kept lines")
	}
}

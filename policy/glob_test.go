package policy

import (
	"errors"
	"path"
	"strings"
	"testing"

	"github.com/llmkit/toolkit"
)

func TestGlob(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		yes     []string
		no      []string
	}{
		{"*", []string{"", "a", "a.b/c"}, nil},
		{"", []string{""}, []string{"a"}},
		{"read_file", []string{"read_file"}, []string{"read_files", "read_fil", ""}},
		{"read_*", []string{"read_", "read_file", "read_a/b"}, []string{"rea", "write_file"}},
		{"*_file", []string{"_file", "read_file"}, []string{"read_files"}},
		{"jwt:*", []string{"jwt:alice", "jwt:https://issuer/sub"}, []string{"token:1"}},
		{"a*b*c", []string{"abc", "aXbYc", "abbbc", "acbc"}, []string{"ab", "acb", "abcd"}},
		{"?", []string{"a", "é"}, []string{"", "ab"}},
		{"a?c", []string{"abc", "aéc"}, []string{"ac", "abbc"}},
		{`\*`, []string{"*"}, []string{"a"}},
		{`a\?`, []string{"a?"}, []string{"ab"}},
		{"**", []string{"", "x"}, nil},
		{"*a*", []string{"a", "bab", "aaa"}, []string{"", "bcd"}},
		{"*.*", []string{"srv.tool", "."}, []string{"srvtool"}},
	} {
		g, err := compileGlob(tt.pattern)
		if err != nil {
			t.Fatalf("%q: %v", tt.pattern, err)
		}
		for _, s := range tt.yes {
			if !g.match(s) {
				t.Errorf("%q does not match %q", tt.pattern, s)
			}
		}
		for _, s := range tt.no {
			if g.match(s) {
				t.Errorf("%q matches %q", tt.pattern, s)
			}
		}
	}
	for _, bad := range []string{`abc\`, strings.Repeat("a", maxPattern+1), "\xff*"} {
		if _, err := compileGlob(bad); !errors.Is(err, toolkit.ErrBadParameter) {
			t.Errorf("%q: %v, want ErrBadParameter", bad, err)
		}
	}
}

// globAsPath turns a pattern without '\', '[' and '/' into the same
// pattern for path.Match, for a cross-check.
func globAsPath(p string) (string, bool) {
	return p, !strings.ContainsAny(p, `\[]/`)
}

// FuzzGlob checks that compiling and matching never panic, and that the
// matcher agrees with path.Match on what both understand.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{{"*", ""}, {"a*b*c", "aXbYc"}, {"?", "é"}, {`\`, "x"}, {"***a***", "bbba"},
		{strings.Repeat("*a", 100), strings.Repeat("a", 300)}, {"\xff", "\xff"}, {"a?*?", "abc"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		g, err := compileGlob(pattern)
		if err != nil {
			return
		}
		got := g.match(s)
		if p, ok := globAsPath(pattern); ok && !strings.Contains(s, "/") {
			if want, err := path.Match(p, s); err == nil && want != got {
				t.Errorf("%q on %q: %v, path.Match says %v", pattern, s, got, want)
			}
		}
	})
}

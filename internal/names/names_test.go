package names

import (
	"errors"
	"strings"
	"testing"

	"github.com/llmkit/toolkit/internal/errs"
)

func TestIsIdent(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"a", true},
		{"_", true},
		{"get_weather", true},
		{"Tool2", true},
		{strings.Repeat("a", MaxName), true},
		{strings.Repeat("a", MaxName+1), false},
		{"", false},
		{"2tool", false},
		{"with-dash", false},
		{"with.dot", false},
		{"space d", false},
		{"é", false},
	} {
		if got := IsIdent(tt.s); got != tt.want {
			t.Errorf("IsIdent(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

func TestIsNamespace(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"my-server", true},
		{"files_2", true},
		{"-lead", false},
		{"9lives", false},
		{"a.b", false},
		{"", false},
		{strings.Repeat("n", MaxName), true},
		{strings.Repeat("n", MaxName+1), false},
	} {
		if got := IsNamespace(tt.s); got != tt.want {
			t.Errorf("IsNamespace(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

func TestIsRemoteName(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"get.weather-v2_x", true},
		{"9starts-with-digit", true},
		{strings.Repeat("r", MaxRemoteName), true},
		{strings.Repeat("r", MaxRemoteName+1), false},
		{"", false},
		{"a/b", false},
		{"a b", false},
		{"a\x00b", false},
	} {
		if got := IsRemoteName(tt.s); got != tt.want {
			t.Errorf("IsRemoteName(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

func TestReserved(t *testing.T) {
	for _, ns := range ReservedNamespaces {
		if !IsReservedNamespace(ns) {
			t.Errorf("IsReservedNamespace(%q) = false", ns)
		}
		if err := CheckNamespace(ns); !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), "reserved") {
			t.Errorf("CheckNamespace(%q) = %v, want a reserved-namespace error", ns, err)
		}
	}
	for _, n := range ReservedNames {
		if !IsReservedName(n) {
			t.Errorf("IsReservedName(%q) = false", n)
		}
	}
	if IsReservedName("other") || IsReservedNamespace("other") {
		t.Error(`"other" is reported reserved`)
	}
}

func TestCheckErrors(t *testing.T) {
	if err := CheckIdent("tool", "ok_name"); err != nil {
		t.Errorf("CheckIdent(ok_name) = %v", err)
	}
	err := CheckIdent("tool", "bad-name")
	if !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), `tool name "bad-name"`) {
		t.Errorf("CheckIdent(bad-name) = %v, want ErrBadParameter naming the tool", err)
	}
	if err := CheckNamespace("good-ns"); err != nil {
		t.Errorf("CheckNamespace(good-ns) = %v", err)
	}
	err = CheckNamespace("bad.ns")
	if !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), `"bad.ns"`) {
		t.Errorf("CheckNamespace(bad.ns) = %v, want ErrBadParameter naming it", err)
	}
}

func TestSanitize(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"fine_name", "fine_name"},
		{"a-b.c", "a_b_c"},
		{"9lives", "_9lives"},
		{"", "_"},
		{"ü", "__"},
		{strings.Repeat("x", 100), strings.Repeat("x", MaxName)},
		{"1" + strings.Repeat("x", 100), "_1" + strings.Repeat("x", MaxName-2)},
	} {
		got := Sanitize(tt.in)
		if got != tt.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !IsIdent(got) {
			t.Errorf("Sanitize(%q) = %q is not an identifier", tt.in, got)
		}
	}
}

func TestIsScheme(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"https", true},
		{"svn+ssh", true},
		{"a1.b-c", true},
		{"", false},
		{"1abc", false},
		{"+x", false},
		{"ht tp", false},
	} {
		if got := IsScheme(tt.s); got != tt.want {
			t.Errorf("IsScheme(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

// FuzzSanitize checks that Sanitize always yields an identifier and leaves
// identifiers alone.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"", "a", "9", "a-b", "ü", strings.Repeat("z", 70)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Sanitize(s)
		if !IsIdent(got) {
			t.Fatalf("Sanitize(%q) = %q, not an identifier", s, got)
		}
		if IsIdent(s) && got != s {
			t.Fatalf("Sanitize(%q) = %q, changed an identifier", s, got)
		}
	})
}

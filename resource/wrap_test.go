package resource

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// file is a resource implemented outside the package.
type file struct{}

func (file) URI() string                          { return "file:///etc/motd" }
func (file) Name() string                         { return "motd" }
func (file) Description() string                  { return "message of the day" }
func (file) Type() string                         { return "text/plain" }
func (file) Read(context.Context) ([]byte, error) { return []byte("welcome"), nil }

func TestWithURIOwnResource(t *testing.T) {
	orig := Must("report", "body")
	r := WithDescription("Monthly report", WithURI("file:data/report.pdf", orig))
	if _, ok := r.(*memory); !ok {
		t.Errorf("wrapping a package resource gave %T, want no wrapper", r)
	}
	if r.URI() != "file:data/report.pdf" || r.Description() != "Monthly report" || r.Name() != "report" || r.Type() != TypeText {
		t.Errorf("got %q %q %q %q", r.URI(), r.Description(), r.Name(), r.Type())
	}
	if got := content(t, r); got != "body" {
		t.Errorf("content %q", got)
	}
	if orig.URI() == r.URI() || orig.Description() != "" {
		t.Error("wrapping changed the original")
	}
	// Replacing again replaces, and an invalid URI is kept as given.
	r2 := WithURI("not a uri", r)
	if r2.URI() != "not a uri" || r2.Description() != "Monthly report" || r.URI() != "file:data/report.pdf" {
		t.Errorf("second WithURI: %q %q, first now %q", r2.URI(), r2.Description(), r.URI())
	}
}

func TestWithURIForeignResource(t *testing.T) {
	var f file
	r := WithURI("mem:motd/1", f)
	if r.URI() != "mem:motd/1" || r.Description() != "message of the day" || r.Name() != "motd" || r.Type() != "text/plain" {
		t.Errorf("URI wrapper: %q %q %q %q", r.URI(), r.Description(), r.Name(), r.Type())
	}
	r = WithDescription("", r)
	if r.URI() != "mem:motd/1" || r.Description() != "" {
		t.Errorf("description wrapper: %q %q", r.URI(), r.Description())
	}
	r = WithURI("mem:motd/2", WithDescription("again", r))
	if r.URI() != "mem:motd/2" || r.Description() != "again" {
		t.Errorf("rewrapped: %q %q", r.URI(), r.Description())
	}
	u, ok := r.(interface{ Unwrap() Resource })
	if !ok || u.Unwrap() != Resource(f) {
		t.Errorf("wrappers stacked: Unwrap gives %v", u)
	}
	if got := content(t, r); got != "welcome" {
		t.Errorf("content %q", got)
	}
	d := WithDescription("only desc", f)
	if d.URI() != f.URI() || d.Description() != "only desc" {
		t.Errorf("description only: %q %q", d.URI(), d.Description())
	}
}

func TestWrapNil(t *testing.T) {
	if WithURI("mem:x/1", nil) != nil || WithDescription("x", nil) != nil {
		t.Error("wrapping nil should give nil")
	}
}

func TestStringHidesContent(t *testing.T) {
	r := Must("big", strings.Repeat("secret ", 1000))
	s := fmt.Sprint(r)
	if strings.Contains(s, "secret") || !strings.HasPrefix(s, r.URI()+" (text/plain; charset=utf-8, 7000 bytes)") {
		t.Errorf("String() = %.80q", s)
	}
}

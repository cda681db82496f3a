package resource

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/llmkit/toolkit/internal/errs"
)

func TestParseURITemplateErrors(t *testing.T) {
	for _, s := range []string{
		"",
		"x:{",
		"x:{a",
		"x:}",
		"x:{}",
		"x:{+}",
		"x:{=a}",
		"x:{,a}",
		"x:{a,}",
		"x:{a b}",
		"x:{a{b}",
		"x:{a:0}",
		"x:{a:}",
		"x:{a:10000}",
		"x:{a:1x}",
		"x:{a..b}",
		"x:{a.}",
		"x:{.a.}",
		"x:{%zz}",
		"x:%zz",
		"x:%4",
		"x:a b",
		"x:a|b",
		"x:a\x00",
		"x:\xff",
		"{+uri}",
		"{scheme}:x",
		"path/{x}",
		"1x:{a}",
		":{a}",
		"x:" + strings.Repeat("a", MaxURITemplateLen),
		"x:" + strings.Repeat("{a}", MaxURITemplateVars+1),
	} {
		if tmpl, err := ParseURITemplate(s); err == nil || !errors.Is(err, errs.ErrBadParameter) {
			t.Errorf("ParseURITemplate(%.40q) = %v, %v; want ErrBadParameter", s, tmpl, err)
		}
	}
}

func TestURITemplateExpand(t *testing.T) {
	vars := map[string]string{
		"var": "value", "hello": "Hello World!", "path": "/foo/bar", "x": "1024", "y": "768",
		"empty": "", "pct": "50%", "uni": "é",
	}
	tests := []struct{ tmpl, want string }{
		{"x:{var}", "x:value"},
		{"x:{hello}", "x:Hello%20World%21"},
		{"x:{+hello}", "x:Hello%20World!"},
		{"x:{+path}/here", "x:/foo/bar/here"},
		{"x:{#path}", "x:#/foo/bar"},
		{"x:{x,y}", "x:1024,768"},
		{"x:{+x,hello,y}", "x:1024,Hello%20World!,768"},
		{"x:{.x,y}", "x:.1024.768"},
		{"x:{/var,x}/here", "x:/value/1024/here"},
		{"x:{;x,y,empty}", "x:;x=1024;y=768;empty"},
		{"x:{?x,y,empty}", "x:?x=1024&y=768&empty="},
		{"x:?fixed=yes{&x}", "x:?fixed=yes&x=1024"},
		{"x:{var:3}", "x:val"},
		{"x:{var:30}", "x:value"},
		{"x:{?undef}", "x:"},
		{"x:{x,undef,y}", "x:1024,768"},
		{"x:{empty}", "x:"},
		{"x:{/empty}", "x:/"},
		{"x:{var*}", "x:value"},
		{"x:{pct}", "x:50%25"},
		{"x:{+pct}", "x:50%25"},
		{"x:{uni}", "x:%C3%A9"},
		{"x:{uni:1}", "x:%C3%A9"},
		{"x:{+path}", "x:/foo/bar"},
	}
	for _, tt := range tests {
		tmpl, err := ParseURITemplate(tt.tmpl)
		if err != nil {
			t.Fatalf("%s: %v", tt.tmpl, err)
		}
		if got := tmpl.Expand(vars); got != tt.want {
			t.Errorf("%s: Expand = %q, want %q", tt.tmpl, got, tt.want)
		}
		if tmpl.String() != tt.tmpl {
			t.Errorf("String = %q, want %q", tmpl.String(), tt.tmpl)
		}
	}
}

func TestURITemplateMatch(t *testing.T) {
	type vars = map[string]string
	tests := []struct {
		tmpl, uri string
		want      vars // nil: no match
	}{
		{"test://template/{id}/data", "test://template/123/data", vars{"id": "123"}},
		{"test://template/{id}/data", "test://template/1/2/data", nil},
		{"test://template/{id}/data", "test://template/a%20b/data", vars{"id": "a b"}},
		{"test://template/{id}/data", "test://template//data", vars{}},
		{"test://template/{id}/data", "test://template/123/datum", nil},
		{"test://template/{id}/data", "test://template/a b/data", nil},
		{"file:///{+path}", "file:///a/b/c.txt", vars{"path": "a/b/c.txt"}},
		{"file:///{+path}", "file:///a%20b", vars{"path": "a%20b"}},
		{"file:///{path}", "file:///a/b", nil},
		{"file:///{path}", "file:///a%2Fb", vars{"path": "a/b"}},
		{"repo://{owner}/{repo}{/path}", "repo://o/r/src", vars{"owner": "o", "repo": "r", "path": "src"}},
		{"repo://{owner}/{repo}{/path}", "repo://o/r", vars{"owner": "o", "repo": "r"}},
		{"repo://{owner}/{repo}{/path}", "repo://o/r/a/b", nil},
		{"repo://{owner}/{repo}{/path*}", "repo://o/r/", vars{"owner": "o", "repo": "r", "path": ""}},
		{"search://q{?q,limit}", "search://q?q=go&limit=5", vars{"q": "go", "limit": "5"}},
		{"search://q{?q,limit}", "search://q?limit=5&q=go%21", vars{"q": "go!", "limit": "5"}},
		{"search://q{?q,limit}", "search://q?q=", vars{"q": ""}},
		{"search://q{?q,limit}", "search://q", vars{}},
		{"search://q{?q,limit}", "search://q?other=1", nil},
		{"search://q{?q,limit}", "search://q?q=1&q=2", nil},
		{"search://q{?q}{&limit}", "search://q?q=a&limit=2", vars{"q": "a", "limit": "2"}},
		{"m:{;x,y}", "m:;y=2;x", vars{"x": "", "y": "2"}},
		{"x:{var:3}", "x:valu", nil},
		{"x:{var:3}", "x:val", vars{"var": "val"}},
		{"x:{a}{b}", "x:xyz", vars{"a": "xyz"}},
		{"x:{.a,b}", "x:.1.2.3", vars{"a": "1", "b": "2.3"}},
		{"x:{a,b}", "x:1,2,3", nil},
		{"x:{+a,b}", "x:1,2,3", vars{"a": "1", "b": "2,3"}},
		{"x:{x}/{x}", "x:1/1", vars{"x": "1"}},
		{"x:{x}/{x}", "x:1/2", nil},
		{"x:{#f}", "x:#a,b", vars{"f": "a,b"}},
		{"x:{#f}", "x:", vars{}},
		{"x:abc", "x:abc", vars{}},
		{"x:abc", "x:abd", nil},
		{"x:abc", "x:abcd", nil},
		{"x:{a}", "y:1", nil},
		{"x:{a}", "x:%zz", nil},
		{"x:{a}", "x:%e9", vars{"a": "\xe9"}},
	}
	for _, tt := range tests {
		tmpl, err := ParseURITemplate(tt.tmpl)
		if err != nil {
			t.Fatalf("%s: %v", tt.tmpl, err)
		}
		got, ok := tmpl.Match(tt.uri)
		if tt.want == nil {
			if ok {
				t.Errorf("%s matches %q with %v; want no match", tt.tmpl, tt.uri, got)
			}
			continue
		}
		if !ok || !maps.Equal(got, tt.want) {
			t.Errorf("%s: Match(%q) = %v, %v; want %v", tt.tmpl, tt.uri, got, ok, tt.want)
		}
	}
}

// TestURITemplateMatchBounded checks that a template that can split a URI
// in very many ways gives up instead of taking exponential time.
func TestURITemplateMatchBounded(t *testing.T) {
	tmpl, err := ParseURITemplate("x:" + strings.Repeat("{a}{+b}{c}{.d}", 8) + "{x}/{x}")
	if err != nil {
		t.Fatal(err)
	}
	// Repeated variables disable memoisation: only the work bound helps.
	if _, ok := tmpl.Match("x:" + strings.Repeat("a.", 2000) + "/b"); ok {
		t.Error("unexpected match")
	}
}

func TestNewTemplate(t *testing.T) {
	read := func(_ context.Context, uri string, vars map[string]string) ([]byte, error) {
		if vars["id"] == "missing" {
			return nil, errs.ErrNotFound
		}
		return []byte(uri + " " + vars["id"]), nil
	}
	tmpl, err := NewTemplate("test://item/{id}", "item", "An item", "text/plain", read)
	if err != nil {
		t.Fatal(err)
	}
	if tmpl.URITemplate() != "test://item/{id}" || tmpl.Name() != "item" || tmpl.Description() != "An item" || tmpl.Type() != "text/plain" {
		t.Errorf("fields: %q %q %q %q", tmpl.URITemplate(), tmpl.Name(), tmpl.Description(), tmpl.Type())
	}
	r, err := tmpl.Open("test://item/a%20b")
	if err != nil {
		t.Fatal(err)
	}
	if r.URI() != "test://item/a%20b" || r.Name() != "item" || r.Description() != "An item" || r.Type() != "text/plain" {
		t.Errorf("resource fields: %q %q %q %q", r.URI(), r.Name(), r.Description(), r.Type())
	}
	if got := content(t, r); got != "test://item/a%20b a b" {
		t.Errorf("content = %q", got)
	}
	r, err = tmpl.Open("test://item/missing")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(context.Background()); !errors.Is(err, errs.ErrNotFound) || !strings.Contains(err.Error(), "test://item/missing") {
		t.Errorf("Read of a missing item: %v", err)
	}
	if _, err := tmpl.Open("test://other/1"); !errors.Is(err, errs.ErrNotFound) {
		t.Errorf("Open of a URI that does not match: %v", err)
	}
	if _, err := tmpl.Open("test://item/a b"); !errors.Is(err, errs.ErrBadParameter) {
		t.Errorf("Open of an invalid URI: %v", err)
	}

	for _, c := range []struct{ tmpl, name, mime string }{
		{"test://{", "x", ""},
		{"{+uri}", "x", ""},
		{"test://{id}", "", ""},
		{"test://{id}", "a\nb", ""},
		{"test://{id}", strings.Repeat("n", 129), ""},
		{"test://{id}", "x", "not a type"},
	} {
		_, err := NewTemplate(c.tmpl, c.name, "", c.mime, read)
		if !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), c.tmpl) {
			t.Errorf("NewTemplate(%q, %q, %q): %v; want ErrBadParameter naming the template", c.tmpl, c.name, c.mime, err)
		}
	}
	if _, err := NewTemplate("test://{id}", "x", "", "", nil); !errors.Is(err, errs.ErrBadParameter) {
		t.Errorf("nil read: %v", err)
	}
}

// templateVars returns the variable names of t in order, once each;
// whether matched values may not expand back to the same URI (a reserved
// expression with a prefix modifier keeps raw values that the modifier
// cuts differently); and whether a variable repeats, which makes matching
// best effort (see URITemplate).
func templateVars(t *URITemplate) (names []string, lossy, repeated bool) {
	seen := map[string]bool{}
	for _, p := range t.parts {
		for _, v := range p.vars {
			if seen[v.name] {
				repeated = true
			} else {
				seen[v.name] = true
				names = append(names, v.name)
			}
			lossy = lossy || opInfo(p.op).reserved && v.prefix > 0
		}
	}
	return names, lossy, repeated
}

func FuzzURITemplate(f *testing.F) {
	for _, s := range []string{
		"test://template/{id}/data", "file:///{+path}", "repo://{owner}/{repo}{/path*}",
		"search://q{?q,limit}{&page}", "m:{;x,y}{#frag}", "x:{.a,b}", "x:{var:3}/{x}/{x}",
		"x:{a}{b}{+c}", "x:%41{a%41.b}",
	} {
		f.Add(s, "v a/l", "", "x:1")
	}
	f.Fuzz(func(t *testing.T, tmplText, v1, v2, uri string) {
		tmpl, err := ParseURITemplate(tmplText)
		if err != nil {
			if !errors.Is(err, errs.ErrBadParameter) {
				t.Fatalf("error without ErrBadParameter: %v", err)
			}
			return
		}
		// Any URI: no panic, and only the template's variables.
		names, lossy, repeated := templateVars(tmpl)
		if got, ok := tmpl.Match(uri); ok {
			for name := range got {
				if !strings.Contains(tmplText, name) {
					t.Fatalf("Match(%q) defines %q, not a variable of %q", uri, name, tmplText)
				}
			}
		}
		// A URI expanded from the template matches it back.
		vars := map[string]string{}
		for i, name := range names {
			switch i % 3 {
			case 0:
				vars[name] = v1
			case 1:
				vars[name] = v2
			}
		}
		expanded := tmpl.Expand(vars)
		got, ok, exhausted := tmpl.match(expanded)
		if exhausted || !ok && repeated {
			return
		}
		if !ok {
			t.Fatalf("%q expanded with %q to %q, which does not match back", tmplText, vars, expanded)
		}
		if again := tmpl.Expand(got); !lossy && again != expanded {
			t.Fatalf("%q: %q matched as %q, which expands to %q", tmplText, expanded, got, again)
		}
	})
}

package toolkit

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/llmkit/toolkit/resource"
)

// newTemplate returns a template whose resources read as
// "<tag> <uri> <vars>".
func newTemplate(t testing.TB, uriTemplate, tag string) ResourceTemplate {
	t.Helper()
	tmpl, err := resource.NewTemplate(uriTemplate, tag, "template "+tag, "text/plain", func(_ context.Context, uri string, vars map[string]string) ([]byte, error) {
		names := make([]string, 0, len(vars))
		for k := range vars {
			names = append(names, k)
		}
		sort.Strings(names)
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s", tag, uri)
		for _, k := range names {
			fmt.Fprintf(&b, " %s=%s", k, vars[k])
		}
		return []byte(b.String()), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// oddTemplate is a hand-written template for the error paths.
type oddTemplate struct {
	uri  string
	open func(uri string) (Resource, error)
}

func (o *oddTemplate) URITemplate() string               { return o.uri }
func (o *oddTemplate) Name() string                      { return "odd" }
func (o *oddTemplate) Description() string               { return "" }
func (o *oddTemplate) Type() string                      { return "" }
func (o *oddTemplate) Open(uri string) (Resource, error) { return o.open(uri) }

func readString(t *testing.T, v any) string {
	t.Helper()
	r, ok := v.(Resource)
	if !ok {
		t.Fatalf("%T is not a resource", v)
	}
	b, err := r.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// templateFixture: builtin templates and a builtin resource, connector
// "one" with a catch-all file template, connector "two" with a narrower
// one, a resource of its own and a URI template "one" also has.
func templateFixture(t testing.TB) (*Toolkit, *fakeDelegate) {
	t.Helper()
	d := newDelegate()
	d.prepare = func(url string, c *fakeConn) error {
		switch url {
		case "test://one":
			c.templates = []ResourceTemplate{newTemplate(t, "file:///{+path}", "one-files"), newTemplate(t, "shared://{id}", "one-shared")}
		case "test://two":
			c.templates = []ResourceTemplate{newTemplate(t, "file:///docs/{name}", "two-docs"), newTemplate(t, "shared://{id}", "two-shared")}
			c.resources = []Resource{&testResource{uri: "file:///exact", name: "exact", data: "two exact"}}
		}
		return nil
	}
	tk := mustNew(t, WithDelegate(d),
		WithResource(&testResource{uri: "items://list", name: "list", data: "builtin list"}),
		WithResourceTemplate(newTemplate(t, "items://item/{id}{?fields}", "items"), newTemplate(t, "items://{kind}", "kinds")),
	)
	for _, u := range []string{"test://one", "test://two"} {
		if err := tk.AddConnectorNS(strings.TrimPrefix(u, "test://"), u); err != nil {
			t.Fatal(err)
		}
	}
	return tk, d
}

func TestLookupThroughTemplates(t *testing.T) {
	tk, _ := templateFixture(t)
	ctx := t.Context()
	tests := []struct {
		key      string
		ns, data string
		err      error
	}{
		// An exact resource wins over every template.
		{key: "items://list", ns: "builtin", data: "builtin list"},
		{key: "items://item/42", ns: "builtin", data: "items items://item/42 id=42"},
		{key: "items://item/42?fields=a%2Cb", ns: "builtin", data: "items items://item/42?fields=a%2Cb fields=a,b id=42"},
		{key: "items://item/42?fields=a,b", err: ErrNotFound}, // RFC 6570 encodes the comma
		{key: "items://item/a%20b", ns: "builtin", data: "items items://item/a%20b id=a b"},
		{key: "items://tools", ns: "builtin", data: "kinds items://tools kind=tools"},
		{key: "items://item/42#builtin", ns: "builtin", data: "items items://item/42 id=42"},
		// Sources in order: one's catch-all answers before two's docs.
		{key: "file:///docs/readme", ns: "one", data: "one-files file:///docs/readme path=docs/readme"},
		{key: "file:///docs/readme#two", ns: "two", data: "two-docs file:///docs/readme name=readme"},
		{key: "file:///exact", ns: "two", data: "two exact"},
		{key: "file:///exact#one", ns: "one", data: "one-files file:///exact path=exact"},
		{key: "shared://7", ns: "one", data: "one-shared shared://7 id=7"},
		{key: "shared://7#two", ns: "two", data: "two-shared shared://7 id=7"},
		// "uri#ns" looks only in that namespace.
		{key: "file:///a/b#two", err: ErrNotFound},
		{key: "items://item/1#one", err: ErrNotFound},
		{key: "nothing://here", err: ErrNotFound},
		{key: "items://item/1/2", err: ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			it, err := tk.LookupItem(ctx, tt.key)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if it.Type != ListTypeResources || it.Namespace != tt.ns {
				t.Errorf("item %s of %q, want a resource of %q", it.Type, it.Namespace, tt.ns)
			}
			if got := readString(t, it.Value); got != tt.data {
				t.Errorf("content %q, want %q", got, tt.data)
			}
			// The item's key leads back to the same resource, through
			// LookupType as well.
			uri, _, _ := strings.Cut(tt.key, "#")
			if it.URI != uri || it.Key() != uri+"#"+tt.ns {
				t.Errorf("URI %q key %q", it.URI, it.Key())
			}
			again, err := tk.LookupType(ctx, ListTypeResources, it.Key())
			if err != nil || readString(t, again.Value) != tt.data {
				t.Errorf("LookupType(%q) = %v, %v", it.Key(), again, err)
			}
			// A resource is not callable, nor a model's tool.
			if _, err := tk.Call(ctx, tt.key); !errors.Is(err, ErrBadParameter) {
				t.Errorf("Call: %v", err)
			}
			if _, err := tk.ResolveTools(ctx, tt.key); !errors.Is(err, ErrBadParameter) {
				t.Errorf("ResolveTools: %v", err)
			}
		})
	}
	// Other kinds never see template resources.
	if _, err := tk.LookupType(ctx, ListTypeTools, "items://item/42"); !errors.Is(err, ErrNotFound) {
		t.Errorf("LookupType(tool, uri): %v", err)
	}
}

func TestLookupTemplateItself(t *testing.T) {
	tk, _ := templateFixture(t)
	ctx := t.Context()
	tests := []struct {
		key, ns, name string
		err           error
	}{
		{key: "shared://{id}", ns: "one", name: "one-shared"},
		{key: "shared://{id}#two", ns: "two", name: "two-shared"},
		{key: "items://item/{id}{?fields}", ns: "builtin", name: "items"},
		{key: "items://item/{id}{?fields}#builtin", ns: "builtin", name: "items"},
		{key: "items://item/{id}{?fields}#one", err: ErrNotFound},
		{key: "file:///docs/{other}", err: ErrNotFound},
		{key: "items", err: ErrNotFound}, // templates have no bare name
		{key: "items://item/42", err: ErrNotFound},
		{key: "", err: ErrBadParameter},
	}
	for _, tt := range tests {
		it, err := tk.LookupType(ctx, ListTypeTemplates, tt.key)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("LookupType(template, %q): err = %v, want %v", tt.key, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("LookupType(template, %q): %v", tt.key, err)
			continue
		}
		tmpl, ok := it.Value.(ResourceTemplate)
		if !ok || it.Type != ListTypeTemplates || it.Namespace != tt.ns || it.Name != tt.name || it.URI != tmpl.URITemplate() {
			t.Errorf("LookupType(template, %q) = %+v", tt.key, it)
			continue
		}
		if again, err := tk.LookupType(ctx, ListTypeTemplates, it.Key()); err != nil || again.Value != it.Value {
			t.Errorf("key %q: %v, %v", it.Key(), again, err)
		}
		if n := testing.AllocsPerRun(50, func() { _, _ = tk.LookupType(ctx, ListTypeTemplates, tt.key) }); n != 0 {
			t.Errorf("LookupType(template, %q) allocates %v times", tt.key, n)
		}
		// Lookup (of resources) does not return templates.
		if it, err := tk.LookupItem(ctx, tt.key); err == nil && it.Type == ListTypeTemplates {
			t.Errorf("Lookup(%q) returned a template", tt.key)
		}
	}
}

func TestLookupWithTemplatesDoesNotAllocate(t *testing.T) {
	tk, _ := templateFixture(t)
	ctx := t.Context()
	for _, key := range []string{"items://list", "file:///exact", "file:///exact#two", "items://list#builtin"} {
		if n := testing.AllocsPerRun(100, func() { _, _ = tk.Lookup(ctx, key) }); n != 0 {
			t.Errorf("Lookup(%q) allocates %v times", key, n)
		}
	}
}

func TestListTemplates(t *testing.T) {
	tk, _ := templateFixture(t)
	ctx := t.Context()
	resp, err := tk.List(ctx, ListRequest{Type: ListTypeTemplates})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, it := range resp.Items {
		got = append(got, it.Key())
		if resp.Templates[i] != it.Value || it.Type != ListTypeTemplates {
			t.Errorf("item %d: %+v vs %v", i, it, resp.Templates[i])
		}
	}
	want := []string{
		"items://item/{id}{?fields}#builtin", "items://{kind}#builtin",
		"file:///{+path}#one", "shared://{id}#one",
		"file:///docs/{name}#two", "shared://{id}#two",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") || resp.Count != 6 || len(resp.Tools)+len(resp.Prompts)+len(resp.Resources) != 0 {
		t.Errorf("templates %q (count %d), want %q", got, resp.Count, want)
	}

	// An empty type lists tools, prompts and resources, not templates.
	all, err := tk.List(ctx, ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range all.Items {
		if it.Type == ListTypeTemplates {
			t.Errorf("List without a type lists template %q", it.Key())
		}
	}
	if all.Templates != nil || all.Count != 2 {
		t.Errorf("List without a type: count %d, templates %v", all.Count, all.Templates)
	}

	// Filters and pagination.
	one := uint(1)
	for _, c := range []struct {
		req  ListRequest
		want string
	}{
		{ListRequest{Type: ListTypeTemplates, Namespace: "two"}, "file:///docs/{name}#two shared://{id}#two"},
		{ListRequest{Type: ListTypeTemplates, Name: "shared://{id}"}, "shared://{id}#one shared://{id}#two"},
		{ListRequest{Type: ListTypeTemplates, Name: "two-docs"}, "file:///docs/{name}#two"},
		{ListRequest{Type: ListTypeTemplates, Name: "shared://{id}", Namespace: "two"}, "shared://{id}#two"},
		{ListRequest{Type: ListTypeTemplates, Offset: 2, Limit: &one}, "file:///{+path}#one"},
	} {
		resp, err := tk.List(ctx, c.req)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, it := range resp.Items {
			keys = append(keys, it.Key())
		}
		if strings.Join(keys, " ") != c.want || len(resp.Templates) != len(keys) {
			t.Errorf("List(%+v) = %q, want %q", c.req, keys, c.want)
		}
	}
	if _, err := tk.List(ctx, ListRequest{Type: "templates"}); !errors.Is(err, ErrBadParameter) || !strings.Contains(err.Error(), `"template"`) {
		t.Errorf("unknown type: %v", err)
	}
}

func TestAddResourceTemplate(t *testing.T) {
	d := newDelegate()
	tk := mustNew(t, WithDelegate(d))
	good := newTemplate(t, "items://{id}", "good")
	tests := []struct {
		name  string
		items []ResourceTemplate
		quote string // named in the error
		also  error
	}{
		{"nil", []ResourceTemplate{good, nil}, "resource template 1", nil},
		{"invalid URI template", []ResourceTemplate{good, &oddTemplate{uri: "items://{"}}, `"items://{"`, nil},
		{"relative URI template", []ResourceTemplate{good, &oddTemplate{uri: "{+uri}"}}, `"{+uri}"`, nil},
		{"given twice", []ResourceTemplate{good, newTemplate(t, "x://{a}", "a"), newTemplate(t, "x://{a}", "b")}, `"x://{a}"`, ErrConflict},
	}
	for _, tt := range tests {
		err := tk.AddResourceTemplate(tt.items...)
		if !errors.Is(err, ErrBadParameter) || !strings.Contains(err.Error(), tt.quote) || tt.also != nil && !errors.Is(err, tt.also) {
			t.Errorf("%s: %v; want ErrBadParameter naming %s", tt.name, err, tt.quote)
		}
		if resp, _ := tk.List(t.Context(), ListRequest{Type: ListTypeTemplates}); resp.Count != 0 {
			t.Errorf("%s: a refused call added %d templates", tt.name, resp.Count)
		}
	}
	d.noEvent(t, tk)
	gen := tk.generation()

	// Added: one resource list event.
	if err := tk.AddResourceTemplate(good, newTemplate(t, "items://{id}/more", "more")); err != nil {
		t.Fatal(err)
	}
	if ev := d.next(t); ev.Kind != ConnectorEventResourceListChanged || ev.Namespace != BuiltinNamespace {
		t.Fatalf("event %+v", ev)
	}
	d.noEvent(t, tk)
	if tk.generation() == gen {
		t.Error("generation unchanged")
	}
	// A URI template already registered is a conflict.
	if err := tk.AddResourceTemplate(newTemplate(t, "items://{id}", "again")); !errors.Is(err, ErrConflict) || !errors.Is(err, ErrBadParameter) {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := tk.Lookup(t.Context(), "items://42"); err != nil {
		t.Fatal(err)
	}

	// RemoveBuiltin takes the URI template.
	if err := tk.RemoveBuiltin("items://{id}"); err != nil {
		t.Fatal(err)
	}
	if ev := d.next(t); ev.Kind != ConnectorEventResourceListChanged || ev.Namespace != BuiltinNamespace {
		t.Fatalf("event %+v", ev)
	}
	if _, err := tk.Lookup(t.Context(), "items://42"); !errors.Is(err, ErrNotFound) {
		t.Errorf("after removal: %v", err)
	}
	if err := tk.RemoveBuiltin("items://{id}"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "resource template") {
		t.Errorf("second removal: %v", err)
	}

	// WithResourceTemplate fails New like the other options.
	if _, err := New(WithResourceTemplate(&oddTemplate{uri: "nope"})); !errors.Is(err, ErrBadParameter) {
		t.Errorf("New: %v", err)
	}
}

func TestTemplateOpenFailures(t *testing.T) {
	boom := errors.New("boom")
	tk := mustNew(t, WithResourceTemplate(
		&oddTemplate{uri: "fail://{x}", open: func(string) (Resource, error) { return nil, boom }},
		&oddTemplate{uri: "panic://{x}", open: func(string) (Resource, error) { panic("oops") }},
		&oddTemplate{uri: "nil://{x}", open: func(string) (Resource, error) { return nil, nil }},
	))
	for _, c := range []struct {
		key string
		err error
	}{
		{"fail://1", boom},
		{"panic://1", ErrBadParameter},
		{"nil://1", ErrNotFound},
	} {
		_, err := tk.Lookup(t.Context(), c.key)
		if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.key) || !strings.Contains(err.Error(), "template") {
			t.Errorf("Lookup(%q): %v; want %v naming the URI and its template", c.key, err, c.err)
		}
	}
}

func TestConnectorTemplates(t *testing.T) {
	d := newDelegate()
	tk := mustNew(t, WithDelegate(d))
	running(t, tk)
	if err := tk.AddConnectorNS("srv", "http://srv/mcp"); err != nil {
		t.Fatal(err)
	}
	c := d.conn("http://srv/mcp")
	<-c.started
	setTemplates := func(res []Resource, tmpls ...ResourceTemplate) {
		c.mu.Lock()
		c.templates, c.resources = tmpls, res
		c.mu.Unlock()
		c.onEvent(ResourceListChangeEvent())
	}

	// Templates arrive with the ready state, and one event reports them.
	c.mu.Lock()
	c.templates = []ResourceTemplate{newTemplate(t, "srv://a/{id}", "a")}
	c.mu.Unlock()
	c.onEvent(StateChangeEvent(ConnectorState{Status: StatusReady}))
	if ev := d.next(t); ev.Kind != ConnectorEventResourceListChanged || ev.Namespace != "srv" || ev.Connector != Connector(c) {
		t.Fatalf("event %+v", ev)
	}
	d.noEvent(t, tk)
	it, err := tk.LookupItem(t.Context(), "srv://a/1")
	if err != nil || it.Namespace != "srv" || readString(t, it.Value) != "a srv://a/1 id=1" {
		t.Fatalf("Lookup through the connector's template: %+v, %v", it, err)
	}

	// Resources and templates changing together: still one event.
	b := newTemplate(t, "srv://b/{id}", "b")
	r := &testResource{uri: "srv://r", name: "r"}
	setTemplates([]Resource{r}, b)
	if ev := d.next(t); ev.Kind != ConnectorEventResourceListChanged {
		t.Fatalf("event %+v", ev)
	}
	d.noEvent(t, tk)
	if _, err := tk.Lookup(t.Context(), "srv://a/1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a removed template still answers: %v", err)
	}

	// Nothing changed: nothing fires.
	setTemplates([]Resource{r}, b)
	d.noEvent(t, tk)

	// Hostile entries are skipped; the rest stays.
	setTemplates(nil, b, nil, &oddTemplate{uri: "srv://{"}, &oddTemplate{uri: "{+all}"}, newTemplate(t, "srv://b/{id}", "dup"))
	if ev := d.next(t); ev.Kind != ConnectorEventResourceListChanged {
		t.Fatalf("event %+v", ev)
	}
	resp, _ := tk.List(t.Context(), ListRequest{Type: ListTypeTemplates, Namespace: "srv"})
	if resp.Count != 1 || resp.Templates[0] != b {
		t.Fatalf("after hostile entries: %d templates", resp.Count)
	}

	// Removing the connector: one event for resources and templates.
	setTemplates([]Resource{r}, b)
	d.next(t)
	if err := tk.RemoveConnector("http://srv/mcp"); err != nil {
		t.Fatal(err)
	}
	if ev := d.next(t); ev.Kind != ConnectorEventResourceListChanged || ev.Namespace != "srv" {
		t.Fatalf("event %+v", ev)
	}
	d.noEvent(t, tk)
	if _, err := tk.Lookup(t.Context(), "srv://b/1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a removed connector's template still answers: %v", err)
	}
}

// plainConn is a connector that is not a TemplateLister.
type plainConn struct{ fakeConn }

func (p *plainConn) ListResourceTemplates() {} // not the TemplateLister method

func TestConnectorWithoutTemplates(t *testing.T) {
	d := newDelegate()
	var pc *plainConn
	d.prepare = func(url string, c *fakeConn) error { return nil }
	tk := mustNew(t, WithDelegate(&plainDelegate{fakeDelegate: d, made: &pc}))
	if err := tk.AddConnectorNS("plain", "http://plain/mcp"); err != nil {
		t.Fatal(err)
	}
	resp, err := tk.List(t.Context(), ListRequest{Type: ListTypeTemplates})
	if err != nil || resp.Count != 0 {
		t.Fatalf("templates of a connector without any: %v, %v", resp, err)
	}
	if _, ok := Connector(pc).(TemplateLister); ok {
		t.Fatal("plainConn is a TemplateLister")
	}
}

// plainDelegate makes plainConns.
type plainDelegate struct {
	*fakeDelegate
	made **plainConn
}

func (d *plainDelegate) CreateConnector(url string, onEvent func(ConnectorEvent)) (Connector, error) {
	if url == UserConnectorURI {
		return nil, ErrNotImplemented
	}
	pc := &plainConn{fakeConn: fakeConn{url: url, onEvent: onEvent, started: make(chan struct{}), templates: []ResourceTemplate{nil}}}
	*d.made = pc
	return pc, nil
}

func FuzzLookupTemplates(f *testing.F) {
	for _, s := range []string{"items://item/42", "items://item/4%202?fields=a", "file:///docs/x#two", "shared://7#one", "items://x#nowhere", "file:///#", "x:{id}#one", "shared://{id}#two"} {
		f.Add(s)
	}
	tk, _ := templateFixture(f)
	f.Fuzz(func(t *testing.T, key string) {
		for _, typ := range []ListType{ListTypeResources, ListTypeTemplates} {
			it, err := tk.LookupType(t.Context(), typ, key)
			if err != nil {
				if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrBadParameter) {
					t.Fatalf("LookupType(%s, %q): unexpected error %v", typ, key, err)
				}
				continue
			}
			if it.Value == nil || it.Type != typ {
				t.Fatalf("LookupType(%s, %q) = %+v", typ, key, it)
			}
			// The item's key reaches an item of the same namespace and URI
			// (a template's resource is made anew).
			again, err := tk.LookupType(t.Context(), typ, it.Key())
			if err != nil || again.Namespace != it.Namespace || again.URI != it.URI {
				t.Fatalf("key %q of %q reaches %+v, %v", it.Key(), key, again, err)
			}
		}
	})
}

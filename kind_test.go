package toolkit

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestKind(t *testing.T) {
	tests := []struct {
		k     Kind
		lt    ListType
		str   string
		event ConnectorEventKind
	}{
		{KindTool, ListTypeTools, "tool", ConnectorEventToolListChanged},
		{KindPrompt, ListTypePrompts, "prompt", ConnectorEventPromptListChanged},
		{KindResource, ListTypeResources, "resource", ConnectorEventResourceListChanged},
		{KindTemplate, ListTypeTemplates, "template", ConnectorEventResourceListChanged},
	}
	if len(tests) != int(NumKinds) {
		t.Fatalf("%d kinds tested, NumKinds = %d", len(tests), NumKinds)
	}
	for i, tt := range tests {
		if Kind(i) != tt.k {
			t.Errorf("kind %d is %v, want the List order", i, tt.k)
		}
		if got := tt.k.ListType(); got != tt.lt {
			t.Errorf("%v.ListType() = %q, want %q", tt.k, got, tt.lt)
		}
		if got := tt.k.String(); got != tt.str {
			t.Errorf("String() = %q, want %q", got, tt.str)
		}
		if got := tt.k.ListChanged(); got != tt.event {
			t.Errorf("%v.ListChanged() = %v, want %v", tt.k, got, tt.event)
		}
		if k, ok := tt.lt.Kind(); !ok || k != tt.k {
			t.Errorf("ListType(%q).Kind() = %v, %v; want %v, true", tt.lt, k, ok, tt.k)
		}
		// ConnectorEventKind.Kinds is the inverse of ListChanged.
		if !slices.Contains(tt.event.Kinds(), tt.k) {
			t.Errorf("%v.Kinds() = %v, does not hold %v", tt.event, tt.event.Kinds(), tt.k)
		}
	}

	bad := NumKinds
	if bad.ListType() != "" || bad.String() != "Kind(4)" || bad.ListChanged() != ConnectorEventStateChange {
		t.Errorf("an invalid kind: %q %q %v", bad.ListType(), bad.String(), bad.ListChanged())
	}
	for _, lt := range []ListType{"", "tools", "Tool", "resource template"} {
		if k, ok := lt.Kind(); ok {
			t.Errorf("ListType(%q).Kind() = %v, true; want false", lt, k)
		}
	}
	if got := ConnectorEventResourceListChanged.Kinds(); !slices.Equal(got, []Kind{KindResource, KindTemplate}) {
		t.Errorf("resource list change covers %v", got)
	}
	for _, ev := range []ConnectorEventKind{ConnectorEventStateChange, ConnectorEventResourceUpdated, 99} {
		if got := ev.Kinds(); len(got) != 0 {
			t.Errorf("%v.Kinds() = %v, want none", ev, got)
		}
	}
	// A per-kind table indexed by Kind, as other packages keep them.
	var seen [NumKinds]int
	for k := range NumKinds {
		seen[k]++
	}
	if seen != [NumKinds]int{1, 1, 1, 1} {
		t.Errorf("range NumKinds visits %v", seen)
	}
}

// badTemplate is a resource template whose URI template does not parse.
type badTemplate struct{ ResourceTemplate }

func (badTemplate) URITemplate() string { return "items://{unclosed" }
func (badTemplate) Name() string        { return "bad_template" }

// lockedBuffer is a bytes.Buffer safe for concurrent writes (the toolkit
// logs from its connectors' goroutines).
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestConnectorItemsOfEveryKind checks the rules of every kind for items a
// connector serves: each kind keeps its good items and skips, with a
// warning naming it, a nil item, one that breaks the kind's rule and a
// duplicate.
func TestConnectorItemsOfEveryKind(t *testing.T) {
	var logs lockedBuffer
	d := newDelegate()
	d.prepare = func(url string, c *fakeConn) error {
		if url == UserConnectorURI {
			return nil
		}
		good := newTemplate(t, "items://{id}", "good")
		c.tools = []Tool{newTool("t.ok"), nil, newTool("bad name"), newTool("t.ok")}
		c.prompts = []Prompt{&testPrompt{name: "p-ok"}, nil, &testPrompt{name: "bad/prompt"}, &testPrompt{name: "p-ok"}}
		c.resources = []Resource{
			&testResource{uri: "file:///ok", name: "ok"}, nil,
			&testResource{uri: "relative/uri", name: "bad_resource"},
			&testResource{uri: "file:///ok", name: "again"},
		}
		c.templates = []ResourceTemplate{good, nil, badTemplate{}, good}
		return nil
	}
	tk := mustNew(t, WithDelegate(d), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err := tk.AddConnectorNS("srv", "test://srv"); err != nil {
		t.Fatal(err)
	}
	for _, lt := range []ListType{ListTypeTools, ListTypePrompts, ListTypeResources, ListTypeTemplates} {
		resp, err := tk.List(context.Background(), ListRequest{Namespace: "srv", Type: lt})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Count != 1 || resp.Items[0].Type != lt {
			t.Errorf("%s: %d items %v, want the one good item", lt, resp.Count, resp.Items)
		}
	}
	out := logs.String()
	for _, want := range []string{
		"nil tool", "nil prompt", "nil resource", "nil template",
		`tool name \"bad name\"`, `prompt name \"bad/prompt\"`, `resource \"bad_resource\"`, `resource template \"bad_template\"`,
		`duplicate tool \"t.ok\"`, `duplicate prompt \"p-ok\"`, `duplicate resource \"file:///ok\"`, `duplicate template \"items://{id}\"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no warning %s in:\n%s", want, out)
		}
	}
}

package toolkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/llmkit/toolkit/resource"
	"github.com/llmkit/toolkit/tool"
)

func TestAddToolRefusesBadTools(t *testing.T) {
	var nilTool *testTool
	tests := []struct {
		name  string
		tools []Tool
		also  error
	}{
		{"nil", []Tool{nil}, nil},
		{"typed nil", []Tool{nilTool}, nil},
		{"empty name", []Tool{newTool("")}, nil},
		{"leading digit", []Tool{newTool("1tool")}, nil},
		{"hyphen", []Tool{newTool("my-tool")}, nil},
		{"dot", []Tool{newTool("my.tool")}, nil},
		{"too long", []Tool{newTool(strings.Repeat("a", 65))}, nil},
		{"reserved", []Tool{newTool("submit_output")}, nil},
		{"twice in call", []Tool{newTool("a"), newTool("a")}, ErrConflict},
		{"existing", []Tool{newTool("existing")}, ErrConflict},
		{"non-object schema", []Tool{&testTool{name: "s", in: &jsonschema.Schema{Type: "string"}}}, nil},
		{"schema error", []Tool{&testTool{name: "s", inErr: errors.New("boom")}}, nil},
		{"unresolvable schema", []Tool{&testTool{name: "s", in: &jsonschema.Schema{Type: "object", Ref: "#/nowhere"}}}, nil},
		{"good then bad", []Tool{newTool("good"), newTool("bad name")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk := mustNew(t, WithTool(newTool("existing")))
			err := tk.AddTool(tt.tools...)
			if !errors.Is(err, ErrBadParameter) {
				t.Fatalf("err = %v, want ErrBadParameter", err)
			}
			if tt.also != nil && !errors.Is(err, tt.also) {
				t.Fatalf("err = %v, want also %v", err, tt.also)
			}
			resp, _ := tk.List(t.Context(), ListRequest{})
			if resp.Count != 1 {
				t.Fatalf("after a refused AddTool the toolkit holds %d items, want 1", resp.Count)
			}
		})
	}
}

func TestAddToolErrorNamesTheTool(t *testing.T) {
	tk := mustNew(t)
	err := tk.AddTool(newTool("ok"), newTool("bad name"))
	if err == nil || !strings.Contains(err.Error(), `"bad name"`) {
		t.Fatalf("err = %v, want it to name the tool", err)
	}
}

func TestOutputToolTakesReservedName(t *testing.T) {
	s, err := jsonschema.For[struct {
		Answer string `json:"answer"`
	}](nil)
	if err != nil {
		t.Fatal(err)
	}
	ot, err := tool.NewOutputTool(s)
	if err != nil {
		t.Fatal(err)
	}
	tk := mustNew(t)
	if err := tk.AddTool(ot); err != nil {
		t.Fatalf("AddTool(OutputTool) = %v", err)
	}
	if _, err := tk.Lookup(t.Context(), tool.OutputToolName); err != nil {
		t.Fatal(err)
	}
	if err := tk.AddPrompt(&testPrompt{name: tool.OutputToolName}); !errors.Is(err, ErrBadParameter) {
		t.Fatalf("a prompt named %q: err = %v, want ErrBadParameter", tool.OutputToolName, err)
	}
}

func TestAddPromptRefusesBadPrompts(t *testing.T) {
	for _, p := range []Prompt{nil, &testPrompt{name: ""}, &testPrompt{name: "a b"}, &testPrompt{name: "dup"}} {
		tk := mustNew(t, WithPrompt(&testPrompt{name: "dup"}))
		if err := tk.AddPrompt(p); !errors.Is(err, ErrBadParameter) {
			t.Errorf("AddPrompt(%v) = %v, want ErrBadParameter", p, err)
		}
	}
}

func TestAddResourceReplacesAndFiresEvents(t *testing.T) {
	d := newDelegate()
	tk := mustNew(t, WithDelegate(d))
	if err := tk.AddResource(&testResource{uri: "file:///a", name: "a", data: "1"}); err != nil {
		t.Fatal(err)
	}
	if ev := d.next(t); ev.Kind != ConnectorEventResourceListChanged || ev.Namespace != BuiltinNamespace || ev.Connector != nil {
		t.Fatalf("event = %+v, want builtin resource list changed", ev)
	}
	if err := tk.AddResource(&testResource{uri: "file:///a", name: "a", data: "2"}); err != nil {
		t.Fatal(err)
	}
	if ev := d.next(t); ev.Kind != ConnectorEventResourceUpdated || ev.URI != "file:///a" {
		t.Fatalf("event = %+v, want resource updated file:///a", ev)
	}
	d.noEvent(t, tk)
	v, err := tk.Lookup(t.Context(), "file:///a")
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := v.(Resource).Read(t.Context()); string(data) != "2" {
		t.Fatalf("resource holds %q, want the replacement", data)
	}
}

func TestAddResourceRefusesBadResources(t *testing.T) {
	tk := mustNew(t)
	for _, r := range []Resource{
		nil,
		&testResource{uri: "relative/path", name: "x"},
		&testResource{uri: "", name: "x"},
	} {
		if err := tk.AddResource(r); !errors.Is(err, ErrBadParameter) {
			t.Errorf("AddResource(%v) = %v, want ErrBadParameter", r, err)
		}
	}
	err := tk.AddResource(&testResource{uri: "file:///a", name: "a"}, &testResource{uri: "file:///a", name: "b"})
	if !errors.Is(err, ErrBadParameter) || !errors.Is(err, ErrConflict) {
		t.Fatalf("the same URI twice: err = %v", err)
	}
}

func TestRemoveBuiltin(t *testing.T) {
	d := newDelegate()
	tk := mustNew(t, WithDelegate(d),
		WithTool(newTool("same")),
		WithPrompt(&testPrompt{name: "same"}),
		WithResource(&testResource{uri: "file:///r", name: "r"}))
	ctx := t.Context()
	if err := tk.RemoveBuiltin("same"); err != nil {
		t.Fatal(err)
	}
	if ev := d.next(t); ev.Kind != ConnectorEventToolListChanged {
		t.Fatalf("first removal fired %v, want the tool list to change (tools before prompts)", ev.Kind)
	}
	if v, err := tk.Lookup(ctx, "same"); err != nil {
		t.Fatal(err)
	} else if _, ok := v.(Prompt); !ok {
		t.Fatalf("after removing the tool, %q is %T, want the prompt", "same", v)
	}
	if err := tk.RemoveBuiltin("same"); err != nil {
		t.Fatal(err)
	}
	if ev := d.next(t); ev.Kind != ConnectorEventPromptListChanged {
		t.Fatalf("second removal fired %v", ev.Kind)
	}
	if err := tk.RemoveBuiltin("file:///r"); err != nil {
		t.Fatal(err)
	}
	if ev := d.next(t); ev.Kind != ConnectorEventResourceListChanged {
		t.Fatalf("resource removal fired %v", ev.Kind)
	}
	if err := tk.RemoveBuiltin("same"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("removing a missing builtin: %v, want ErrNotFound", err)
	}
}

func TestNoEventsDuringNew(t *testing.T) {
	d := newDelegate()
	tk := mustNew(t, WithDelegate(d), WithTool(newTool("a")))
	d.noEvent(t, tk)
}

func TestEventsArriveInOrderAndMayCallBack(t *testing.T) {
	d := newDelegate()
	var tk *Toolkit
	prompted := make(chan struct{})
	d.onEvent = func(ev ConnectorEvent) {
		// The delegate may call back into the toolkit without deadlock.
		if _, err := tk.List(t.Context(), ListRequest{}); err != nil {
			t.Error(err)
		}
		if ev.Kind == ConnectorEventToolListChanged {
			<-prompted // the resource change comes after the prompt's
			_ = tk.AddResource(&testResource{uri: "file:///from-callback", name: "cb"})
		}
	}
	tk = mustNew(t, WithDelegate(d))
	if err := tk.AddTool(newTool("a")); err != nil {
		t.Fatal(err)
	}
	if err := tk.AddPrompt(&testPrompt{name: "p"}); err != nil {
		t.Fatal(err)
	}
	close(prompted)
	want := []ConnectorEventKind{ConnectorEventToolListChanged, ConnectorEventPromptListChanged, ConnectorEventResourceListChanged}
	for i, k := range want {
		if ev := d.next(t); ev.Kind != k {
			t.Fatalf("event %d = %v, want %v", i, ev.Kind, k)
		}
	}
	d.noEvent(t, tk)
}

func TestDelegatePanicIsContained(t *testing.T) {
	d := newDelegate()
	d.onEvent = func(ConnectorEvent) { panic("delegate bug") }
	tk := mustNew(t, WithDelegate(d), WithLogger(discardLogger()))
	if err := tk.AddTool(newTool("a")); err != nil {
		t.Fatal(err)
	}
	tk.WaitEvents()
	if _, err := tk.Lookup(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
}

func TestGenerationCountsChanges(t *testing.T) {
	d := newDelegate()
	tk := mustNew(t, WithDelegate(d))
	g0 := tk.generation()
	if _, err := tk.List(t.Context(), ListRequest{}); err != nil || tk.generation() != g0 {
		t.Fatal("a read changed the generation")
	}
	if err := tk.AddTool(newTool("a")); err != nil {
		t.Fatal(err)
	}
	g1 := tk.generation()
	if g1 == g0 {
		t.Fatal("AddTool did not change the generation")
	}
	if err := tk.RemoveBuiltin("a"); err != nil || tk.generation() == g1 {
		t.Fatal("RemoveBuiltin did not change the generation")
	}
}

// schemaPrompt is a prompt with an input schema.
type schemaPrompt struct {
	testPrompt
	in *jsonschema.Schema
}

func (p *schemaPrompt) InputSchema() (*jsonschema.Schema, error) { return p.in, nil }

// TestAddBuiltinsAllOrNothing checks that a refused AddTool, AddPrompt or
// AddResource names the bad item, leaves the toolkit exactly as it was
// (even when good items come first) and fires no event.
func TestAddBuiltinsAllOrNothing(t *testing.T) {
	unresolvable := &jsonschema.Schema{Type: "object", Ref: "#/nowhere"}
	tests := []struct {
		name  string
		add   func(tk *Toolkit) error
		names string // quoted in the error
		also  error
	}{
		{"tool: good then bad name", func(tk *Toolkit) error {
			return tk.AddTool(newTool("good"), newTool("bad name"))
		}, `"bad name"`, nil},
		{"tool: name twice in one call", func(tk *Toolkit) error {
			return tk.AddTool(newTool("good"), newTool("twice"), newTool("twice"))
		}, `"twice"`, ErrConflict},
		{"tool: good then unresolvable schema", func(tk *Toolkit) error {
			return tk.AddTool(newTool("good"), &testTool{name: "unresolvable", in: unresolvable})
		}, `"unresolvable"`, nil},
		{"prompt: good then bad name", func(tk *Toolkit) error {
			return tk.AddPrompt(&testPrompt{name: "good"}, &testPrompt{name: "bad name"})
		}, `"bad name"`, nil},
		{"prompt: name twice in one call", func(tk *Toolkit) error {
			return tk.AddPrompt(&testPrompt{name: "good"}, &testPrompt{name: "twice"}, &testPrompt{name: "twice"})
		}, `"twice"`, ErrConflict},
		{"prompt: good then taken name", func(tk *Toolkit) error {
			return tk.AddPrompt(&testPrompt{name: "good"}, &testPrompt{name: "old_prompt"})
		}, `"old_prompt"`, ErrConflict},
		{"prompt: good then unresolvable schema", func(tk *Toolkit) error {
			return tk.AddPrompt(&testPrompt{name: "good"}, &schemaPrompt{testPrompt: testPrompt{name: "unresolvable"}, in: unresolvable})
		}, `"unresolvable"`, nil},
		{"prompt: good then nil", func(tk *Toolkit) error {
			return tk.AddPrompt(&testPrompt{name: "good"}, nil)
		}, `prompt 1`, nil},
		{"resource: good then relative URI", func(tk *Toolkit) error {
			return tk.AddResource(&testResource{uri: "file:///good", name: "good"}, &testResource{uri: "relative", name: "rel"})
		}, `"rel"`, nil},
		{"resource: replacement then URI twice", func(tk *Toolkit) error {
			return tk.AddResource(&testResource{uri: "file:///old", name: "old", data: "new"},
				&testResource{uri: "file:///twice", name: "a"}, &testResource{uri: "file:///twice", name: "b"})
		}, `"file:///twice"`, ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDelegate()
			tk := mustNew(t, WithDelegate(d),
				WithTool(newTool("old_tool")),
				WithPrompt(&testPrompt{name: "old_prompt"}),
				WithResource(&testResource{uri: "file:///old", name: "old", data: "old"}))
			d.noEvent(t, tk)
			gen := tk.generation()
			before, err := tk.List(t.Context(), ListRequest{})
			if err != nil {
				t.Fatal(err)
			}

			err = tt.add(tk)
			if !errors.Is(err, ErrBadParameter) || !strings.Contains(err.Error(), tt.names) {
				t.Fatalf("err = %v, want ErrBadParameter naming %s", err, tt.names)
			}
			if tt.also != nil && !errors.Is(err, tt.also) {
				t.Fatalf("err = %v, want also %v", err, tt.also)
			}

			d.noEvent(t, tk)
			if tk.generation() != gen {
				t.Fatal("a refused call published a new snapshot")
			}
			after, err := tk.List(t.Context(), ListRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(after.Items) != len(before.Items) {
				t.Fatalf("%d items after a refused call, want %d", len(after.Items), len(before.Items))
			}
			for i := range after.Items {
				if after.Items[i] != before.Items[i] {
					t.Fatalf("item %d changed: %+v, was %+v", i, after.Items[i], before.Items[i])
				}
			}
			if _, err := tk.Lookup(t.Context(), "good"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("the good item of a refused call was added: %v", err)
			}
			v, err := tk.Lookup(t.Context(), "file:///old")
			if err != nil {
				t.Fatal(err)
			}
			if data, _ := v.(Resource).Read(t.Context()); string(data) != "old" {
				t.Fatalf("a refused call replaced a resource: it holds %q", data)
			}
		})
	}
}

// TestInputSchemaResolvedOnce counts InputSchema calls: a tool's schema is
// resolved once (when it is added, or at its first call for a connector's
// tool or a tool called by value) and never again, however often it runs.
func TestInputSchemaResolvedOnce(t *testing.T) {
	const calls = 10
	counted := func(name string) (*countingTool, func() int) {
		ct := &countingTool{testTool: testTool{name: name, in: objSchema(map[string]*jsonschema.Schema{"x": {Type: "integer"}})}}
		return ct, ct.count
	}
	builtin, builtinCount := counted("counted")
	remote, remoteCount := counted("counted_remote")
	byValue, byValueCount := counted("counted_by_value")
	d := newDelegate()
	d.prepare = func(url string, c *fakeConn) error {
		if url == "test://srv" {
			c.tools = []Tool{remote}
		}
		return nil
	}
	tk := mustNew(t, WithDelegate(d), WithTool(builtin))
	if err := tk.AddConnectorNS("srv", "test://srv"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		item  any
		count func() int
	}{
		{"builtin", "counted", builtinCount},
		{"connector", "srv.counted_remote", remoteCount},
		{"by value", byValue, byValueCount},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range calls {
				if _, err := tk.Call(t.Context(), tt.item, resource.Must("in", json.RawMessage(fmt.Sprintf(`{"x":%d}`, i)))); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := tk.Call(t.Context(), tt.item, resource.Must("in", json.RawMessage(`{"x":"no"}`))); !errors.Is(err, ErrSchema) {
				t.Fatalf("the cached schema was not applied: %v", err)
			}
			if n := tt.count(); n != 1 {
				t.Fatalf("InputSchema called %d times over %d calls, want 1", n, calls+1)
			}
		})
	}
}

// countingTool counts the calls of InputSchema.
type countingTool struct {
	testTool
	mu sync.Mutex
	n  int
}

func (c *countingTool) InputSchema() (*jsonschema.Schema, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.testTool.InputSchema()
}

func (c *countingTool) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

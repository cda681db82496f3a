package toolkit

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

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
	d.onEvent = func(ev ConnectorEvent) {
		// The delegate may call back into the toolkit without deadlock.
		if _, err := tk.List(t.Context(), ListRequest{}); err != nil {
			t.Error(err)
		}
		if ev.Kind == ConnectorEventToolListChanged {
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
	g0 := tk.Generation()
	if _, err := tk.List(t.Context(), ListRequest{}); err != nil || tk.Generation() != g0 {
		t.Fatal("a read changed the generation")
	}
	if err := tk.AddTool(newTool("a")); err != nil {
		t.Fatal(err)
	}
	g1 := tk.Generation()
	if g1 == g0 {
		t.Fatal("AddTool did not change the generation")
	}
	if err := tk.RemoveBuiltin("a"); err != nil || tk.Generation() == g1 {
		t.Fatal("RemoveBuiltin did not change the generation")
	}
}

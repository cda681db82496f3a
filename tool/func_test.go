package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/llmkit/toolkit/internal/errs"
	"github.com/llmkit/toolkit/tool"
)

type addIn struct {
	A    int    `json:"a" jsonschema:"first operand"`
	B    int    `json:"b"`
	Note string `json:"note,omitempty"`
}

type addOut struct {
	Sum int `json:"sum"`
}

func add(_ context.Context, in addIn) (addOut, error) { return addOut{Sum: in.A + in.B}, nil }

func TestNewSchemas(t *testing.T) {
	tl, err := tool.New("add", "Adds two integers.", add)
	if err != nil {
		t.Fatal(err)
	}
	if tl.Name() != "add" || tl.Description() != "Adds two integers." {
		t.Errorf("name/description = %q/%q", tl.Name(), tl.Description())
	}
	in, _ := tl.InputSchema()
	if in.Type != "object" || len(in.Properties) != 3 {
		t.Fatalf("input schema = %v", in)
	}
	if got := strings.Join(in.Required, ","); got != "a,b" {
		t.Errorf("required = %q, want a,b", got)
	}
	if in.Properties["a"].Description != "first operand" {
		t.Errorf("description of a = %q", in.Properties["a"].Description)
	}
	out, _ := tl.OutputSchema()
	if out == nil || out.Type != "object" || out.Properties["sum"] == nil {
		t.Errorf("output schema = %v", out)
	}
	if m := tl.Meta(); m != (tool.Meta{}) {
		t.Errorf("meta = %+v, want zero", m)
	}
}

func TestNewOutputSchemaByType(t *testing.T) {
	ctx := context.Background()
	check := func(name string, got any, wantSchema bool) {
		t.Helper()
		s, err := got.(tool.Tool).OutputSchema()
		if err != nil {
			t.Fatal(err)
		}
		if (s != nil) != wantSchema {
			t.Errorf("%s: output schema = %v, want schema: %v", name, s, wantSchema)
		}
		if s != nil && s.Type != "object" {
			t.Errorf("%s: output schema type = %q, want object", name, s.Type)
		}
	}
	check("string", tool.Must("s", "", func(context.Context, addIn) (string, error) { return "", nil }), false)
	check("slice", tool.Must("s", "", func(context.Context, addIn) ([]int, error) { return nil, nil }), false)
	check("any", tool.Must("s", "", func(context.Context, addIn) (any, error) { return nil, nil }), false)
	check("struct", tool.Must("s", "", func(context.Context, addIn) (addOut, error) { return addOut{}, nil }), true)
	check("pointer", tool.Must("s", "", func(context.Context, addIn) (*addOut, error) { return nil, nil }), true)
	check("map", tool.Must("s", "", func(context.Context, addIn) (map[string]int, error) { return nil, nil }), true)

	// A nil pointer result is no output.
	p := tool.Must("p", "", func(context.Context, addIn) (*addOut, error) { return nil, nil })
	if v, err := p.Run(ctx, nil); err != nil || v != nil {
		t.Errorf("Run = %#v, %v; want nil, nil", v, err)
	}
}

func TestNewErrors(t *testing.T) {
	ok := func(context.Context, addIn) (string, error) { return "", nil }
	tests := []struct {
		name string
		make func() error
		want string
	}{
		{"bad name", func() error { _, err := tool.New("bad-name", "", ok); return err }, `"bad-name"`},
		{"empty name", func() error { _, err := tool.New("", "", ok); return err }, `tool name ""`},
		{"reserved name", func() error { _, err := tool.New(tool.OutputToolName, "", ok); return err }, "reserved"},
		{"nil func", func() error {
			_, err := tool.New[addIn, string]("f", "", nil)
			return err
		}, "nil function"},
		{"string input", func() error {
			_, err := tool.New("f", "", func(context.Context, string) (string, error) { return "", nil })
			return err
		}, "does not map to a JSON object"},
		{"slice input", func() error {
			_, err := tool.New("f", "", func(context.Context, []string) (string, error) { return "", nil })
			return err
		}, "does not map to a JSON object"},
		{"channel field", func() error {
			_, err := tool.New("f", "", func(context.Context, struct{ C chan int }) (string, error) { return "", nil })
			return err
		}, "input schema"},
		{"bad output", func() error {
			_, err := tool.New("f", "", func(context.Context, addIn) (struct{ F func() }, error) { return struct{ F func() }{}, nil })
			return err
		}, "output schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.make()
			if !errors.Is(err, errs.ErrBadParameter) {
				t.Fatalf("err = %v, want ErrBadParameter", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestMustPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Must did not panic on a bad name")
		}
	}()
	tool.Must("1bad", "", add)
}

func TestOptions(t *testing.T) {
	tl := tool.Must("add", "", add,
		tool.WithTitle("Add numbers"),
		tool.WithReadOnly(true),
		tool.WithIdempotent(true),
		tool.WithDestructive(false),
		tool.WithOpenWorld(false),
	)
	m := tl.Meta()
	if m.Title != "Add numbers" || !m.ReadOnlyHint || !m.IdempotentHint {
		t.Errorf("meta = %+v", m)
	}
	if m.DestructiveHint == nil || *m.DestructiveHint || m.OpenWorldHint == nil || *m.OpenWorldHint {
		t.Errorf("explicit false hints not recorded: %+v", m)
	}
	yes := true
	m = tool.Must("add", "", add, tool.WithMeta(tool.Meta{Title: "X", OpenWorldHint: &yes}), tool.WithReadOnly(true)).Meta()
	if m.Title != "X" || !*m.OpenWorldHint || !m.ReadOnlyHint {
		t.Errorf("WithMeta then WithReadOnly: %+v", m)
	}
}

func TestRun(t *testing.T) {
	ctx := context.Background()
	tl := tool.Must("add", "", add)
	tests := []struct {
		input   string
		want    int
		wantErr bool
	}{
		{`{"a":2,"b":3}`, 5, false},
		{` {"a":2,"b":3,"note":"x"} `, 5, false},
		{``, 0, false},
		{`null`, 0, false},
		{`{}`, 0, false},
		{`{"a":1,"c":2}`, 0, true},  // unknown field: structs forbid them
		{`{"a":"one"}`, 0, true},    // wrong type
		{`{"a":1}{"b":2}`, 0, true}, // trailing data
		{`[1,2]`, 0, true},
		{`{"a":1`, 0, true},
	}
	for _, tt := range tests {
		got, err := tl.Run(ctx, json.RawMessage(tt.input))
		if tt.wantErr {
			if !errors.Is(err, errs.ErrBadParameter) || !strings.Contains(err.Error(), `"add"`) {
				t.Errorf("Run(%s): err = %v, want ErrBadParameter naming the tool", tt.input, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Run(%s): %v", tt.input, err)
			continue
		}
		if got.(addOut).Sum != tt.want {
			t.Errorf("Run(%s) = %v, want sum %d", tt.input, got, tt.want)
		}
	}
}

func TestRunMapInputAcceptsAnyKey(t *testing.T) {
	tl := tool.Must("echo", "", func(_ context.Context, in map[string]any) (map[string]any, error) { return in, nil })
	got, err := tl.Run(context.Background(), json.RawMessage(`{"anything":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if got.(map[string]any)["anything"] != 1.0 {
		t.Errorf("got %v", got)
	}
}

func TestRunPointerInput(t *testing.T) {
	tl := tool.Must("p", "", func(_ context.Context, in *addIn) (int, error) { return in.A, nil })
	s, _ := tl.InputSchema()
	if s.Type != "object" || s.Types != nil {
		t.Errorf("input schema type = %q %v, want object", s.Type, s.Types)
	}
	got, err := tl.Run(context.Background(), nil)
	if err != nil || got != 0 {
		t.Errorf("Run(nil) = %v, %v", got, err)
	}
}

func TestRunPassesErrorsAndContext(t *testing.T) {
	type key struct{}
	boom := errors.New("boom")
	tl := tool.Must("f", "", func(ctx context.Context, _ struct{}) (string, error) {
		if ctx.Value(key{}) != "v" {
			return "", errors.New("context not passed")
		}
		return "", boom
	})
	_, err := tl.Run(context.WithValue(context.Background(), key{}, "v"), nil)
	if err != boom {
		t.Errorf("err = %v, want the function's own error", err)
	}
}

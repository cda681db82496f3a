package toolkit

import (
	"errors"
	"strings"
	"testing"
)

type toolListPrompt struct {
	testPrompt
	tools []string
}

func (p *toolListPrompt) Tools() []string { return p.tools }

func TestResolveTools(t *testing.T) {
	tk, _ := fixture(t)
	ctx := t.Context()
	items, err := tk.ResolveTools(ctx, "echo", "two.shared", "summarize", "one.dotted.name")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, it.Key())
	}
	if strings.Join(got, " ") != "builtin.echo two.shared builtin.summarize one.dotted.name" {
		t.Fatalf("resolved %v", got)
	}
	_, err = tk.ResolveTools(ctx, "echo", "missing", "file:///builtin", "one.nothing")
	if !errors.Is(err, ErrNotFound) || !errors.Is(err, ErrBadParameter) {
		t.Fatalf("err = %v", err)
	}
	for _, name := range []string{`"missing"`, `"file:///builtin"`, `"one.nothing"`} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error does not name %s: %v", name, err)
		}
	}
	p := &toolListPrompt{testPrompt: testPrompt{name: "agent"}, tools: []string{"echo", "ghost"}}
	if _, err := tk.PromptTools(ctx, p); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"agent"`) {
		t.Fatalf("PromptTools: %v", err)
	}
	if items, err := tk.PromptTools(ctx, &testPrompt{name: "plain"}); err != nil || items != nil {
		t.Fatalf("a prompt without tools: %v %v", items, err)
	}
}

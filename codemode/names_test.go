package codemode

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/llmkit/toolkit"
)

// dotNames offers every tool as "namespace.name" (its key), the way an
// MCP server with "." as its separator qualifies every name.
type dotNames struct{ tk *toolkit.Toolkit }

func (n dotNames) ExposedName(kind toolkit.ListType, key string) (string, bool) {
	if _, err := n.tk.LookupType(context.Background(), kind, key); err != nil {
		return "", false
	}
	return key, true
}

func (n dotNames) ItemKey(kind toolkit.ListType, exposed string) (string, bool) {
	if !strings.Contains(exposed, ".") {
		return "", false
	}
	return n.ExposedName(kind, exposed)
}

// TestNames: with Config.Names, scripts call the tools by the names it
// gives, declare_tools declares them by those names, by name and by
// query, and the model names are unknown.
func TestNames(t *testing.T) {
	f := newFixture(t, false, Limits{})
	m, err := New(f.tk, Config{Names: dotNames{f.tk}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	out, err := m.Run(ctx, `
const n = (await tools["builtin.list_files"]({dir: "d"})).files.length;
let bare;
try { await tools.list_files({dir: "d"}); bare = "called" } catch (e) { bare = e.outcome }
return [n, bare]`)
	if err != nil || string(out.JSON) != `[50,"not_found"]` {
		t.Fatalf("%v, %v", out, err)
	}
	decls, unknown, err := m.Declarations(ctx, []string{"builtin.read_file", "read_file"}, "list the files of a directory", 1)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range decls {
		names = append(names, d.Name)
	}
	if !slices.Equal(names, []string{"builtin.read_file", "builtin.list_files"}) || !slices.Equal(unknown, []string{"read_file"}) {
		t.Errorf("declared %v, unknown %v", names, unknown)
	}
}

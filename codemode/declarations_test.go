package codemode

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

func schemaOf(t *testing.T, s string) *jsonschema.Schema {
	t.Helper()
	var sc jsonschema.Schema
	if err := json.Unmarshal([]byte(s), &sc); err != nil {
		t.Fatal(err)
	}
	return &sc
}

// TestDeclare writes a tool's schemas as TypeScript, with descriptions
// as comments that cannot be closed from inside.
func TestDeclare(t *testing.T) {
	got := Declare([]Declaration{{
		Name:        "search_issues",
		Description: "Search issues. */ evil",
		Input: schemaOf(t, `{"type":"object","required":["repo"],"properties":{
			"repo":{"type":"string","description":"owner/name"},
			"state":{"enum":["open","closed"]},
			"labels":{"type":"array","items":{"type":"string"}},
			"limit":{"type":["integer","null"]},
			"my-field":{"type":"object","properties":{"deep":{"type":"boolean"}}}}}`),
		Output: schemaOf(t, `{"type":"object","properties":{"items":{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"number"}]}}}}`),
	}})
	want := `declare const tools: {
  /** Search issues. * / evil */
  search_issues(args: {
    labels?: string[];
    limit?: number | null;
    "my-field"?: {
      deep?: boolean;
    };
    /** owner/name */
    repo: string;
    state?: "open" | "closed";
  }): Promise<{
    items?: Array<string | number>;
  }>;
};
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestDeclareBounded: a huge or deep schema makes a short declaration.
func TestDeclareBounded(t *testing.T) {
	props := map[string]*jsonschema.Schema{}
	for i := range 2000 {
		props[strings.Repeat("p", 10)+string(rune('a'+i%26))+strings.Repeat("x", i%50)] = &jsonschema.Schema{Type: "string", Description: strings.Repeat("d", 500)}
	}
	deep := &jsonschema.Schema{Type: "string"}
	for range 100 {
		deep = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"x": deep}}
	}
	out := Declare([]Declaration{{Name: "wide", Input: &jsonschema.Schema{Type: "object", Properties: props}}, {Name: "deep", Input: deep}})
	if len(out) > 2*maxDeclaration {
		t.Errorf("%d bytes", len(out))
	}
	if !strings.Contains(out, "wide(args: {") || !strings.Contains(out, "deep(args: {") || !strings.Contains(out, ": any") {
		t.Errorf("declarations:\n%.2000s", out)
	}
}

// TestDeclareTools: declare_tools declares the tools named and found,
// hides those the policy denies to the caller, and never itself or
// run_code.
func TestDeclareTools(t *testing.T) {
	f := newFixture(t, false, Limits{})
	decls, unknown, err := f.m.Declarations(context.Background(), []string{"list_files", "secret", "run_code", "nope"}, "", 0)
	if err != nil || len(decls) != 1 || decls[0].Name != "list_files" || strings.Join(unknown, ",") != "secret,run_code,nope" {
		t.Fatalf("%+v %v %v", decls, unknown, err)
	}
	decls, _, err = f.m.Declarations(context.Background(), nil, "read a file", 3)
	if err != nil || len(decls) == 0 || decls[0].Name != "read_file" {
		t.Fatalf("search: %+v %v", decls, err)
	}
	for _, d := range decls {
		if d.Name == RunCodeName || d.Name == DeclareToolsName || d.Name == "secret" {
			t.Errorf("declared %s", d.Name)
		}
	}
	text := Declare(decls)
	if !strings.Contains(text, "read_file(args: {\n    name: string;\n  }): Promise<unknown>;") {
		t.Errorf("declarations:\n%s", text)
	}
}

// FuzzDeclare: any schema makes a bounded declaration, without a panic.
func FuzzDeclare(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string"}}}`, "desc */")
	f.Add(`{"anyOf":[{"type":"array","items":{"enum":[1,"x",null]}},{"const":{"a":1}}]}`, "")
	f.Add(`{"type":["object","null"],"additionalProperties":{"type":"integer"}}`, "line\nline")
	f.Fuzz(func(t *testing.T, schema, desc string) {
		var sc jsonschema.Schema
		if json.Unmarshal([]byte(schema), &sc) != nil {
			return
		}
		out := Declare([]Declaration{{Name: "t", Description: desc, Input: &sc, Output: &sc}})
		if len(out) > maxDeclaration+len("declare const tools: {\n};\n")+2*maxDescription {
			t.Fatalf("%d bytes", len(out))
		}
		if strings.Count(out, "*/") != strings.Count(out, "/**") {
			t.Fatalf("a comment closed early:\n%s", out)
		}
	})
}

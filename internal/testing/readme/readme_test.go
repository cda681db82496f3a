package readme

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const sample = "# Title\n\n```go\npackage main\n\nfunc main() {}\n```\n\n<!-- params: ctx context.Context -->\n```go\nimport \"os\"\n\n_ = os.Args\nreturn ctx.Err()\n```\n\n```sh\nnot go\n```\n"

func TestBlocks(t *testing.T) {
	blocks, err := Blocks("R.md", sample)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 {
		t.Fatalf("%d blocks, want 2", len(blocks))
	}
	whole, frag := blocks[0], blocks[1]
	if !whole.Whole() || whole.Line != 4 || whole.Params != "" || whole.Code != "package main\n\nfunc main() {}\n" {
		t.Errorf("whole file: %+v", whole)
	}
	if frag.Whole() || frag.Line != 11 || frag.Params != "ctx context.Context" {
		t.Errorf("fragment: %+v", frag)
	}
	src, err := frag.source("p")
	if err != nil {
		t.Fatal(err)
	}
	// Its own import, context for the parameter, the README's line for
	// the body (the line after the import declaration).
	for _, want := range []string{"\t \"os\"\n", "\t \"context\"\n", "func _(ctx context.Context) error {\n//line R.md:11\n\n\n_ = os.Args\nreturn ctx.Err()\n"} {
		if !strings.Contains(src, want) {
			t.Errorf("source lacks %q:\n%s", want, src)
		}
	}
	if _, err := Blocks("R.md", "```go\nx := 1\n"); err == nil || !strings.Contains(err.Error(), "R.md:1: the Go block is not closed") {
		t.Errorf("unclosed block: %v", err)
	}
}

func TestSelectorBases(t *testing.T) {
	got := strings.Join(selectorBases(`x := fmt.Sprint(tk.Call, "time.Now", y.z) // log.Print`), " ")
	if got != "fmt tk" {
		t.Errorf("selector bases %q, want \"fmt tk\"", got)
	}
}

// Blocks and the fragment wrapper never panic, and each block's code is
// text of the input.
func FuzzBlocks(f *testing.F) {
	f.Add(sample)
	f.Add("```go\n```go\n```\n")
	f.Add("<!-- params: -->\n```go\nimport (\n```\n")
	f.Add("```go\nimport \"x\"; import ( y \"z\" )\n```\n")
	f.Add("```go\n\x00package\n```")
	f.Fuzz(func(t *testing.T, md string) {
		blocks, err := Blocks("f.md", md)
		if err != nil {
			return
		}
		for _, b := range blocks {
			if !strings.Contains(md, b.Code) {
				t.Fatalf("block %q is not in the input", b.Code)
			}
			_, _ = b.source("p")
			_, _ = b.Imports()
		}
	})
}

func TestDocs(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"README.md":        "```go\npackage main\n```\n",
		"docs/b.md":        "x\n```go\nreturn nil\n```\n",
		"docs/a.md":        "```go\nreturn nil\n```\n",
		"docs/notes.txt":   "```go\nnot read\n```\n",
		"docs/open.md.bak": "```go\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	blocks, err := Docs(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range blocks {
		got = append(got, fmt.Sprintf("%s:%d", b.File, b.Line))
	}
	if want := []string{"README.md:2", "docs/a.md:2", "docs/b.md:3"}; !slices.Equal(got, want) {
		t.Errorf("blocks at %v, want %v (README first, then docs/*.md in name order)", got, want)
	}
	if err := os.WriteFile(filepath.Join(root, "docs", "c.md"), []byte("```go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Docs(root); err == nil || !strings.Contains(err.Error(), "docs/c.md:1: the Go block is not closed") {
		t.Errorf("an unclosed block in a guide: %v", err)
	}
}

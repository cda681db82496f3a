// Package readme compiles the Go blocks of markdown files (the
// repository's README.md and its guides under docs/, see [Docs]), so that
// no snippet a reader copies drifts from the API.
//
// Every block fenced with ```go is compiled, by one convention:
//
//   - A block that begins with a package clause is a whole file, compiled
//     as it is (package main: a program of its own).
//   - Any other block is a fragment: the body of a function
//     func _(PARAMS) error, so that it may use the names PARAMS declares
//     and return an error. PARAMS come from an HTML comment on the line
//     just before the fence, <!-- params: ctx context.Context, tk
//     *toolkit.Toolkit -->, which a rendered README does not show; without
//     one the function takes none. A fragment may begin with its own
//     import declaration; the packages it uses without importing them are
//     imported by their usual name (fmt, time, toolkit, mcp, mcpserver, ...;
//     see stdImports and moduleImports).
//
// Blocks are compiled with go vet (without its unreachable-code check, as
// a fragment that returns is followed by the wrapper's return nil) inside
// the module whose packages they import; the errors point at the README's
// own lines.
package readme

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ModulePath is the module path of the repository's root module.
const ModulePath = "github.com/llmkit/toolkit"

// Block is one Go block of a markdown file.
type Block struct {
	// File and Line locate the block's first line of code.
	File string
	Line int
	// Code is the block's text.
	Code string
	// Params is the parameter list of a fragment's function, from the
	// "<!-- params: ... -->" comment before the fence ("" without one).
	Params string
}

// Whole reports whether b is a whole file (it begins with a package
// clause) rather than a fragment.
func (b Block) Whole() bool {
	for _, line := range strings.Split(b.Code, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		return strings.HasPrefix(line, "package ")
	}
	return false
}

// Blocks returns the Go blocks of the markdown text md, read from file
// (for positions). An unclosed block is an error.
func Blocks(file, md string) ([]Block, error) {
	var (
		blocks []Block
		cur    *Block
		code   strings.Builder
		prev   string
	)
	sc := bufio.NewScanner(strings.NewReader(md))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &Block{File: file, Line: n + 1, Params: params(prev)}
			code.Reset()
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.Code = code.String()
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			code.WriteString(line)
			code.WriteByte('\n')
		}
		prev = line
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: the Go block is not closed", file, cur.Line-1)
	}
	return blocks, nil
}

// Docs returns the Go blocks of the repository's documentation under
// root: README.md, then every docs/*.md in name order. Their File is the
// path relative to root, so compile errors point at the guide's own line.
func Docs(root string) ([]Block, error) {
	guides, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	slices.Sort(guides)
	var all []Block
	for _, f := range append([]string{filepath.Join(root, "README.md")}, guides...) {
		md, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(root, f)
		if err != nil {
			return nil, err
		}
		blocks, err := Blocks(filepath.ToSlash(rel), string(md))
		if err != nil {
			return nil, err
		}
		all = append(all, blocks...)
	}
	return all, nil
}

// params returns the parameter list of a "<!-- params: ... -->" line, or
// "".
func params(line string) string {
	s, ok := strings.CutPrefix(strings.TrimSpace(line), "<!-- params:")
	if !ok {
		return ""
	}
	s, ok = strings.CutSuffix(s, "-->")
	if !ok {
		return ""
	}
	return strings.TrimSpace(s)
}

// split returns the import paths of b (with their names, "" for the
// default) and the code after its import declarations.
func (b Block) split() (imports [][2]string, body string, bodyLine int, err error) {
	src := b.Code
	prefix := ""
	if !b.Whole() {
		prefix = "package p;"
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", prefix+src, parser.ImportsOnly)
	if err != nil {
		return nil, "", 0, fmt.Errorf("%s:%d: %v", b.File, b.Line, err)
	}
	end := len(prefix)
	for _, is := range f.Imports {
		p, _ := strconv.Unquote(is.Path.Value)
		name := ""
		if is.Name != nil {
			name = is.Name.Name
		}
		imports = append(imports, [2]string{name, p})
	}
	for _, d := range f.Decls {
		end = fset.Position(d.End()).Offset
	}
	body = (prefix + src)[end:]
	bodyLine = b.Line + strings.Count((prefix + src)[len(prefix):end], "\n")
	return imports, body, bodyLine, nil
}

// Imports returns the import paths of b's own import declarations.
func (b Block) Imports() ([]string, error) {
	imps, _, _, err := b.split()
	var paths []string
	for _, i := range imps {
		paths = append(paths, i[1])
	}
	return paths, err
}

// Module returns the directory, relative to the repository root root
// ("." for the root module), of the module b must be compiled in: the
// deepest of the modules that hold the packages of ModulePath it imports.
func (b Block) Module(root string) (string, error) {
	paths, err := b.Imports()
	if err != nil {
		return "", err
	}
	mod := "."
	for _, p := range paths {
		rel, ok := strings.CutPrefix(p, ModulePath+"/")
		if !ok {
			continue
		}
		m := moduleOf(root, rel)
		switch {
		case m == mod, strings.HasPrefix(mod+"/", m+"/"), m == ".":
		case mod == "." || strings.HasPrefix(m+"/", mod+"/"):
			mod = m
		default:
			return "", fmt.Errorf("%s:%d: imports packages of two modules, %s and %s", b.File, b.Line, mod, m)
		}
	}
	return mod, nil
}

// moduleOf returns the directory of the module that holds the package in
// directory rel of the repository at root.
func moduleOf(root, rel string) string {
	for dir := rel; dir != "."; dir = path.Dir(dir) {
		if _, err := os.Stat(filepath.Join(root, dir, "go.mod")); err == nil {
			return dir
		}
	}
	return "."
}

// stdImports and moduleImports are the packages a fragment may use by
// their usual name without importing them.
var (
	stdImports = map[string]string{
		"context": "context", "errors": "errors", "fmt": "fmt", "io": "io",
		"log": "log", "os": "os", "time": "time", "strings": "strings",
		"http": "net/http", "slog": "log/slog", "json": "encoding/json",
	}
	moduleImports = map[string]string{
		"toolkit": ModulePath, "mcp": ModulePath + "/mcp", "mcpserver": ModulePath + "/mcp/mcpserver",
		"bridge": ModulePath + "/mcp/bridge", "oauth": ModulePath + "/mcp/oauth", "resource": ModulePath + "/resource", "tool": ModulePath + "/tool",
		"prompt": ModulePath + "/prompt", "skill": ModulePath + "/skill", "store": ModulePath + "/store", "model": ModulePath + "/model", "policy": ModulePath + "/policy",
		"sdk": "github.com/modelcontextprotocol/go-sdk/mcp", "anthropic": "github.com/anthropics/anthropic-sdk-go/v2",
	}
)

// source returns the Go file of package pkg that compiles fragment b as
// the body of a function.
func (b Block) source(pkg string) (string, error) {
	imps, body, bodyLine, err := b.split()
	if err != nil {
		return "", err
	}
	declared := map[string]bool{}
	for _, i := range imps {
		name := i[0]
		if name == "" {
			name = path.Base(i[1])
		}
		declared[name] = true
	}
	for _, name := range selectorBases(b.Params + "\n" + body) {
		if declared[name] {
			continue
		}
		p, ok := stdImports[name]
		if !ok {
			p, ok = moduleImports[name]
		}
		if ok {
			imps = append(imps, [2]string{"", p})
			declared[name] = true
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "package %s\n\nimport (\n", pkg)
	for _, i := range imps {
		fmt.Fprintf(&sb, "\t%s %q\n", i[0], i[1])
	}
	fmt.Fprintf(&sb, ")\n\nfunc _(%s) error {\n//line %s:%d\n%s\n\treturn nil\n}\n", b.Params, b.File, bodyLine, body)
	return sb.String(), nil
}

// selectorBases returns the identifiers of src that are followed by a dot
// and an exported name (pkg.Name), in order of first use.
func selectorBases(src string) []string {
	fset := token.NewFileSet()
	var s scanner.Scanner
	s.Init(fset.AddFile("", -1, len(src)), []byte(src), nil, 0)
	var (
		names []string
		toks  [3]string // the last three tokens: IDENT, ".", IDENT
		kinds [3]token.Token
	)
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		copy(kinds[:], kinds[1:])
		copy(toks[:], toks[1:])
		kinds[2], toks[2] = tok, lit
		if kinds[0] == token.IDENT && kinds[1] == token.PERIOD && kinds[2] == token.IDENT &&
			toks[2] != "" && toks[2][0] >= 'A' && toks[2][0] <= 'Z' && !slices.Contains(names, toks[0]) {
			names = append(names, toks[0])
		}
	}
	return names
}

// Compile compiles blocks with go vet in the module whose directory is
// dir, in a temporary directory inside it that go tool patterns ignore
// (its name begins with '_'): each whole file as a package of its own, the
// fragments together as one package. The test fails with the compiler's
// messages, which point at the markdown file's lines.
func Compile(t *testing.T, dir string, blocks []Block) {
	t.Helper()
	if len(blocks) == 0 {
		return
	}
	tmp, err := os.MkdirTemp(dir, "_readme")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	pkgs := []string{}
	var frags int
	for i, b := range blocks {
		var file, src string
		if b.Whole() {
			pkg := fmt.Sprintf("file%d", i)
			file = filepath.Join(tmp, pkg, "main.go")
			src = fmt.Sprintf("//line %s:%d\n%s", b.File, b.Line, b.Code)
			pkgs = append(pkgs, "./"+filepath.Join(filepath.Base(tmp), pkg))
		} else {
			if frags == 0 {
				pkgs = append(pkgs, "./"+filepath.Join(filepath.Base(tmp), "fragments"))
			}
			frags++
			file = filepath.Join(tmp, "fragments", fmt.Sprintf("fragment%d.go", i))
			if src, err = b.source("fragments"); err != nil {
				t.Error(err)
				continue
			}
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", append([]string{"vet", "-unreachable=false"}, pkgs...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("Go blocks of %s do not compile: %v\n%s", blocks[0].File, err, out)
	}
}

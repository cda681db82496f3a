package toolkit_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/llmkit/toolkit"
	"github.com/llmkit/toolkit/mcp"
	"github.com/llmkit/toolkit/mcp/oauth"
	"github.com/llmkit/toolkit/store"
)

// The sentinels of the module share their values with an internal
// package, so go doc shows an expression (errs.ErrNotFound,
// fmt.Errorf(..., errs.ErrUnavailable)), not the message: each one's doc
// comment begins with its name and quotes its message. Every exported
// Err variable of the module's packages whose value involves an internal
// sentinel is checked, so a new one cannot be missed.
func TestSentinelDocsQuoteTheirMessage(t *testing.T) {
	sentinels := map[string]error{
		".:ErrNotFound": toolkit.ErrNotFound, ".:ErrBadParameter": toolkit.ErrBadParameter,
		".:ErrNotImplemented": toolkit.ErrNotImplemented, ".:ErrConflict": toolkit.ErrConflict,
		".:ErrUnavailable": toolkit.ErrUnavailable, ".:ErrDepthExceeded": toolkit.ErrDepthExceeded,
		".:ErrToolFailed": toolkit.ErrToolFailed, ".:ErrSchema": toolkit.ErrSchema, ".:ErrClosed": toolkit.ErrClosed,
		".:ErrDenied": toolkit.ErrDenied, ".:ErrRateLimited": toolkit.ErrRateLimited,
		".:ErrIntegrity":                     toolkit.ErrIntegrity,
		"mcp:ErrTaskRequired":                mcp.ErrTaskRequired,
		"mcp:ErrTooManyClientSessions":       mcp.ErrTooManyClientSessions,
		"mcp:ErrNoUser":                      mcp.ErrNoUser,
		"mcp:ErrNoClientSession":             mcp.ErrNoClientSession,
		"mcp:ErrOAuthNotConfigured":          mcp.ErrOAuthNotConfigured,
		"mcp/oauth:ErrAuthorizationPending":  oauth.ErrAuthorizationPending,
		"mcp/oauth:ErrTooManyAuthorizations": oauth.ErrTooManyAuthorizations,
		"store:ErrOutside":                   store.ErrOutside,
	}
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (name == "internal" || name == "testdata" || name == "example" || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != "." {
				return filepath.SkipDir // a module of its own
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				doc := vs.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc // a lone var's comment is the declaration's
				}
				for i, id := range vs.Names {
					if !id.IsExported() || !strings.HasPrefix(id.Name, "Err") || i >= len(vs.Values) ||
						!strings.Contains(string(src[vs.Values[i].Pos()-1:vs.Values[i].End()-1]), "errs.") {
						continue
					}
					key := filepath.ToSlash(filepath.Dir(path)) + ":" + id.Name
					seen[key] = true
					e, ok := sentinels[key]
					if !ok {
						t.Errorf("%s: %s is not checked by this test", path, id.Name)
						continue
					}
					want := id.Name + ", message " + strconv.Quote(e.Error())
					if got := strings.Join(strings.Fields(doc.Text()), " "); !strings.HasPrefix(got, want) {
						t.Errorf("%s: the doc of %s begins %q, want %q", path, id.Name, got[:min(len(got), len(want))], want)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range sentinels {
		if !seen[key] {
			t.Errorf("sentinel %s was not found", key)
		}
	}
}

package toolkit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/llmkit/toolkit/internal/names"
)

// The public names are declared with their values, so that go doc shows
// them; they must stay those of the rules the module applies.
func TestPublicNamesAreTheRules(t *testing.T) {
	if BuiltinNamespace != names.BuiltinNamespace || UserNamespace != names.UserNamespace {
		t.Errorf("namespaces %q, %q; the rules reserve %q, %q", BuiltinNamespace, UserNamespace, names.BuiltinNamespace, names.UserNamespace)
	}
	if UserConnectorURI != "connector:"+names.UserNamespace {
		t.Errorf("UserConnectorURI = %q", UserConnectorURI)
	}
	if !slices.Equal(ReservedNames, names.ReservedNames) || !slices.Equal(ReservedNamespaces, names.ReservedNamespaces) {
		t.Errorf("reserved %v and %v; the rules reserve %v and %v", ReservedNames, ReservedNamespaces, names.ReservedNames, names.ReservedNamespaces)
	}
}

// Each sentinel's doc comment quotes its message, which go doc cannot show
// (the value is shared with the subpackages).
func TestSentinelDocsQuoteTheirMessage(t *testing.T) {
	sentinels := map[string]error{
		"ErrNotFound": ErrNotFound, "ErrBadParameter": ErrBadParameter, "ErrNotImplemented": ErrNotImplemented,
		"ErrConflict": ErrConflict, "ErrUnavailable": ErrUnavailable, "ErrDepthExceeded": ErrDepthExceeded,
		"ErrToolFailed": ErrToolFailed, "ErrSchema": ErrSchema, "ErrClosed": ErrClosed,
	}
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for _, id := range vs.Names {
			seen++
			e, ok := sentinels[id.Name]
			if !ok {
				t.Errorf("%s is not checked by this test", id.Name)
				continue
			}
			want := id.Name + ", message " + strconv.Quote(e.Error())
			if doc := strings.Join(strings.Fields(vs.Doc.Text()), " "); !strings.HasPrefix(doc, want) {
				t.Errorf("the doc of %s begins %q, want %q", id.Name, doc[:min(len(doc), len(want))], want)
			}
		}
		return true
	})
	if seen != len(sentinels) {
		t.Errorf("errors.go declares %d sentinels, want %d", seen, len(sentinels))
	}
}
